//! The seam between the protocol loop and the bytes: [`Transport`].
//!
//! Production uses [`StdioTransport`] (the process's protected protocol streams); tests and the
//! Python `mcpline.testing` client use the in-memory pair from [`memory_pair`].

use std::fs::File;
use std::io::{Read, Write};
use std::sync::Mutex;
use std::sync::mpsc::{self, Receiver, Sender};
use std::time::Duration;

use crate::error::TransportError;
use crate::framing::{Inbound, LineReader};
use crate::sync::lock;
use crate::sys::Waker;
#[cfg(unix)]
use crate::sys::{Ready, wait_readable};

/// Moves frames in and out. `read_line` is called from one reader thread only; `write_line` may
/// be called from any thread and must write each frame whole (one write per message).
pub trait Transport: Send + Sync {
    /// The next inbound frame, `Ok(None)` at end of input.
    ///
    /// # Errors
    /// A read failure other than end of input.
    fn read_line(&self) -> Result<Option<Inbound>, TransportError>;

    /// Writes one frame (`line` has no newline; the transport appends it).
    ///
    /// # Errors
    /// [`TransportError::OutputClosed`] once the peer stopped reading.
    fn write_line(&self, line: &[u8]) -> Result<(), TransportError>;

    /// Writes a response while it is released; [`Transport::released`] follows. (An HTTP
    /// exchange wakes its reader there, when it can tell the response was the last frame.)
    ///
    /// # Errors
    /// As [`Transport::write_line`].
    fn write_response(&self, line: &[u8]) -> Result<(), TransportError> {
        self.write_line(line)
    }

    /// A response owed was released (written, or dropped by a cancel). Nothing to do for a
    /// stream; an HTTP exchange learns here that it may be over.
    fn released(&self) {}
}

/// Newline-delimited frames over any byte reader and writer (the protected stdio streams in
/// production).
pub struct StdioTransport<R = File, W = File> {
    reader: Mutex<LineReader<R>>,
    writer: Mutex<W>,
}

impl<R: Read + Send, W: Write + Send> StdioTransport<R, W> {
    /// Frames `input` and `output`, refusing inbound lines longer than `max_line` bytes.
    pub fn new(input: R, output: W, max_line: usize) -> Self {
        Self {
            reader: Mutex::new(LineReader::new(input, max_line)),
            writer: Mutex::new(output),
        }
    }
}

impl<R: Read + Send, W: Write + Send> Transport for StdioTransport<R, W> {
    fn read_line(&self) -> Result<Option<Inbound>, TransportError> {
        lock(&self.reader)
            .next_frame()
            .map_err(TransportError::Read)
    }

    fn write_line(&self, line: &[u8]) -> Result<(), TransportError> {
        let mut framed = Vec::with_capacity(line.len() + 1);
        framed.extend_from_slice(line);
        framed.push(b'\n');
        let mut w = lock(&self.writer);
        w.write_all(&framed).map_err(TransportError::from_write)?;
        w.flush().map_err(TransportError::from_write)
    }
}

/// How [`WakeableInput::next_frame_or_wake`] returned.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
#[cfg_attr(
    not(unix),
    allow(dead_code, reason = "only unix inputs can be woken or time out")
)]
pub(crate) enum Awaited {
    /// A frame was read and handled; `pipelined` when more input already follows it (the
    /// client sends without waiting for answers).
    Handled { pipelined: bool },
    /// End of input.
    End,
    /// The waker was woken, or the caller was to stand aside, before a frame was read.
    Woken,
    /// The timeout passed (or a signal arrived) before a frame was readable.
    TimedOut,
}

/// An input that either of two threads can read, whose wait another thread can interrupt: what
/// lets the worker read requests itself while idle and hand the reading back when a call starts.
pub(crate) trait WakeableInput: Send + Sync {
    /// Waits for the next frame and hands it to `handle` while still holding the input, so that
    /// frames are handled in the order they arrived whichever thread reads them. Returns without
    /// a frame when `stand_aside()` is true once the input is held, when `waker` is woken, or
    /// when `timeout` passes first. With `rest`, every complete frame already buffered behind
    /// the first is handed over too (the reader thread: no one waits for the turn while it has
    /// input, and each return costs it a round of the queue's lock).
    fn next_frame_or_wake(
        &self,
        waker: &Waker,
        timeout: Option<Duration>,
        stand_aside: &dyn Fn() -> bool,
        rest: bool,
        handle: &mut dyn FnMut(Inbound),
    ) -> Result<Awaited, TransportError>;

    /// Hands every complete frame already buffered to `handle`, without reading more. Does
    /// nothing while the other thread holds the input: it hands over all it has buffered
    /// before it lets go, and it waits for input only when nothing complete is buffered.
    fn drain_buffered(&self, handle: &mut dyn FnMut(Inbound));
}

#[cfg(unix)]
impl<W: Write + Send> WakeableInput for StdioTransport<File, W> {
    fn next_frame_or_wake(
        &self,
        waker: &Waker,
        timeout: Option<Duration>,
        stand_aside: &dyn Fn() -> bool,
        rest: bool,
        handle: &mut dyn FnMut(Inbound),
    ) -> Result<Awaited, TransportError> {
        use std::os::fd::AsFd as _;
        let mut reader = lock(&self.reader);
        if stand_aside() {
            return Ok(Awaited::Woken);
        }
        loop {
            if reader.ready() {
                let mut handled = hand_over(&mut reader, handle)?;
                while rest && matches!(handled, Awaited::Handled { .. }) && reader.ready() {
                    handled = hand_over(&mut reader, handle)?;
                }
                // More input right behind this frame means a pipelining client (one more look,
                // without waiting).
                return Ok(match handled {
                    Awaited::Handled { pipelined: false } => Awaited::Handled {
                        pipelined: reader.has_pending()
                            || wait_readable(
                                Some(reader.get_ref().as_fd()),
                                waker,
                                Some(Duration::ZERO),
                            )
                            .is_ok_and(|ready| ready == Ready::Input),
                    },
                    other => other,
                });
            }
            match wait_readable(Some(reader.get_ref().as_fd()), waker, timeout)
                .map_err(TransportError::Read)?
            {
                Ready::Input => reader.fill_once().map_err(TransportError::Read)?,
                Ready::Woken => {
                    waker.drain();
                    return Ok(Awaited::Woken);
                }
                Ready::TimedOut => return Ok(Awaited::TimedOut),
            }
        }
    }

    fn drain_buffered(&self, handle: &mut dyn FnMut(Inbound)) {
        drain(&self.reader, handle);
    }
}

/// Where a wait cannot be interrupted (no [`Waker`] is ever made there, so this is not called by
/// the server): a plain blocking read.
#[cfg(not(unix))]
impl<W: Write + Send> WakeableInput for StdioTransport<File, W> {
    fn next_frame_or_wake(
        &self,
        _waker: &Waker,
        _timeout: Option<Duration>,
        _stand_aside: &dyn Fn() -> bool,
        _rest: bool,
        handle: &mut dyn FnMut(Inbound),
    ) -> Result<Awaited, TransportError> {
        hand_over(&mut lock(&self.reader), handle)
    }

    fn drain_buffered(&self, handle: &mut dyn FnMut(Inbound)) {
        drain(&self.reader, handle);
    }
}

/// [`WakeableInput::drain_buffered`] for a line reader behind a lock.
fn drain<R: Read>(reader: &Mutex<LineReader<R>>, handle: &mut dyn FnMut(Inbound)) {
    let Ok(mut reader) = reader.try_lock() else {
        return;
    };
    while reader.ready() {
        if !matches!(hand_over(&mut reader, handle), Ok(Awaited::Handled { .. })) {
            return;
        }
    }
}

/// Reads the next frame and hands it to `handle` (the caller holds the input).
fn hand_over<R: Read>(
    reader: &mut LineReader<R>,
    handle: &mut dyn FnMut(Inbound),
) -> Result<Awaited, TransportError> {
    match reader.next_frame().map_err(TransportError::Read)? {
        Some(frame) => {
            handle(frame);
            Ok(Awaited::Handled {
                pipelined: reader.ready(),
            })
        }
        None => Ok(Awaited::End),
    }
}

/// The server's end of an in-memory connection.
pub struct MemoryTransport {
    inbound: Mutex<Receiver<Vec<u8>>>,
    outbound: Sender<Vec<u8>>,
    max_line: usize,
}

/// The client's end of an in-memory connection: send lines, receive lines, close to signal end of
/// input.
pub struct MemoryClient {
    to_server: Mutex<Option<Sender<Vec<u8>>>>,
    from_server: Mutex<Receiver<Vec<u8>>>,
}

/// A connected in-memory (server, client) pair, with the default line cap.
#[must_use]
pub fn memory_pair() -> (MemoryTransport, MemoryClient) {
    memory_pair_with_cap(crate::framing::DEFAULT_MAX_LINE)
}

/// A connected in-memory pair that reports lines over `max_line` bytes as oversized.
#[must_use]
pub fn memory_pair_with_cap(max_line: usize) -> (MemoryTransport, MemoryClient) {
    let (to_server, inbound) = mpsc::channel();
    let (outbound, from_server) = mpsc::channel();
    (
        MemoryTransport {
            inbound: Mutex::new(inbound),
            outbound,
            max_line,
        },
        MemoryClient {
            to_server: Mutex::new(Some(to_server)),
            from_server: Mutex::new(from_server),
        },
    )
}

impl Transport for MemoryTransport {
    fn read_line(&self) -> Result<Option<Inbound>, TransportError> {
        let rx = lock(&self.inbound);
        loop {
            let Ok(bytes) = rx.recv() else {
                return Ok(None);
            };
            // Reuse the real framing rules (CR, BOM, blank lines, cap) on each chunk sent.
            let mut reader = LineReader::new(&bytes[..], self.max_line);
            if let Some(frame) = reader.next_frame().map_err(TransportError::Read)? {
                return Ok(Some(frame));
            }
        }
    }

    fn write_line(&self, line: &[u8]) -> Result<(), TransportError> {
        self.outbound
            .send(line.to_vec())
            .map_err(|_| TransportError::PeerGone)
    }
}

impl MemoryClient {
    /// Sends one line (without newline) to the server.
    ///
    /// # Errors
    /// [`TransportError::PeerGone`] after [`MemoryClient::close`] or once the server is gone.
    pub fn send(&self, line: impl Into<Vec<u8>>) -> Result<(), TransportError> {
        match &*lock(&self.to_server) {
            Some(tx) => tx.send(line.into()).map_err(|_| TransportError::PeerGone),
            None => Err(TransportError::PeerGone),
        }
    }

    /// Signals end of input to the server.
    pub fn close(&self) {
        lock(&self.to_server).take();
    }

    /// The next line the server wrote, waiting up to `timeout`; `None` on timeout or when the
    /// server has finished and nothing is left.
    #[must_use]
    pub fn recv_timeout(&self, timeout: Duration) -> Option<Vec<u8>> {
        lock(&self.from_server).recv_timeout(timeout).ok()
    }

    /// The next line, waiting until the server writes or finishes.
    #[must_use]
    pub fn recv(&self) -> Option<Vec<u8>> {
        lock(&self.from_server).recv().ok()
    }
}
