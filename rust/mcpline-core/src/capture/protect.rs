//! Keeping the protocol streams away from everything a tool can reach: [`ProtectedStdio`].

use std::fs::File;
use std::sync::atomic::{AtomicBool, Ordering};

use super::{CaptureError, Cell, STDERR, STDIN, STDOUT, Streams, descriptor, save};
use crate::sys;

const PROTECT: &str = "protect stdio";
const END_PROTECTION: &str = "restore fds 0 and 1 after protecting stdio";

static PROTECTED: AtomicBool = AtomicBool::new(false);

/// Saved copies of fds 0 and 1 while stdio is protected.
#[derive(Debug)]
pub(super) struct Saved {
    input: sys::SavedFd,
    output: sys::SavedFd,
}

/// Restores fds 0 and 1 if stdio is protected. Idempotent.
fn end_protection(cell: &mut Cell) -> Result<(), CaptureError> {
    if cell.protect.is_none() {
        return Ok(());
    }
    // (C stdio was flushed before the lock: a flush into a full pipe outlet would wait for
    // the watcher, which needs the lock to empty it.)
    let unparked = cell.unpark();
    let Some(Saved { input, output }) = cell.protect.take() else {
        return unparked;
    };
    // The kept copies of fds 1 and 2 are no longer the cell's to keep.
    if let Streams::Idle { kept } = &mut cell.streams {
        *kept = None;
    }
    cell.publish();
    let input_restored =
        sys::restore(STDIN, &input).map_err(descriptor(END_PROTECTION, "dup2 onto fd 0"));
    let output_restored = match &mut cell.streams {
        // fd 1 is redirected into a capture right now: hand the real stdout to the capture, whose
        // end then restores fd 1 to it (the copy of stderr it saved is closed here).
        Streams::Capturing { home, .. } => {
            home.out = output;
            Ok(())
        }
        _ => sys::restore(STDOUT, &output).map_err(descriptor(END_PROTECTION, "dup2 onto fd 1")),
    };
    PROTECTED.store(false, Ordering::Release);
    unparked.and(input_restored).and(output_restored)
}

/// Moves the protocol streams onto private descriptors and makes fds 0 and 1 harmless: fd 0
/// reads the null device (a tool calling `input()` gets end-of-file at once) and fd 1 is a copy
/// of the real stderr (stray prints go to the log).
///
/// Dropping it (or [`ProtectedStdio::restore`]) flushes C stdio and restores fds 0 and 1 to what
/// they were, so a program can keep using stdout after the server returns. Dropped while a
/// capture is active, it restores fd 0 at once and fd 1 when the capture ends.
#[derive(Debug)]
#[must_use = "dropping ProtectedStdio restores fds 0 and 1 at once"]
pub struct ProtectedStdio {
    /// (protocol input, protocol output) until they are taken.
    streams: Option<(File, File)>,
}

impl ProtectedStdio {
    /// Flushes C stdio, copies the real stdin and stdout to private descriptors, points fd 0 at
    /// the null device and fd 1 at a copy of fd 2. A closed stdin gives a protocol input at
    /// end-of-file; a closed stderr gets the null device parked on it.
    ///
    /// The caller flushes language-level buffers (Python's `sys.stdout`) first.
    ///
    /// # Errors
    ///
    /// [`CaptureError::AlreadyProtected`], [`CaptureError::CaptureActive`],
    /// [`CaptureError::StdoutClosed`], [`CaptureError::Descriptor`] (nothing is left changed then
    /// except a null device parked on a closed fd) and, on Windows,
    /// [`CaptureError::CrtUnavailable`].
    pub fn install() -> Result<Self, CaptureError> {
        sys::init()?;
        sys::flush_c_stdio();
        let mut cell = super::cell();
        if cell.protect.is_some() {
            return Err(CaptureError::AlreadyProtected);
        }
        if matches!(cell.streams, Streams::Capturing { .. }) {
            return Err(CaptureError::CaptureActive);
        }
        // fd 1 becomes a copy of fd 2, so fd 2 must be open (this parks the null device if not).
        drop(save(STDERR, PROTECT)?);
        // Not kept open (Windows): once the protocol owns stdout, a handle cached before serving
        // must not write into it (released below).
        let output = sys::try_save(STDOUT, false)
            .map_err(descriptor(PROTECT, "dup of fd 1"))?
            .ok_or(CaptureError::StdoutClosed)?;
        let input = save(STDIN, PROTECT)?;
        let protocol_input =
            sys::private_file(&input).map_err(descriptor(PROTECT, "private copy of fd 0"))?;
        let protocol_output =
            sys::private_file(&output).map_err(descriptor(PROTECT, "private copy of fd 1"))?;
        sys::point_at_null(STDIN)
            .map_err(descriptor(PROTECT, "pointing fd 0 at the null device"))?;
        if let Err(error) = sys::copy_fd(STDERR, STDOUT) {
            let _ = sys::restore(STDIN, &input);
            return Err(descriptor(PROTECT, "dup2 of fd 2 onto fd 1")(error));
        }
        sys::release_std_handle(STDOUT);
        cell.protect = Some(Saved { input, output });
        PROTECTED.store(true, Ordering::Release);
        // A call's output reaches the real stderr even if a fault kills the process.
        sys::catch_fatal_signals();
        Ok(Self {
            streams: Some((protocol_input, protocol_output)),
        })
    }

    /// Takes the protocol streams: `(input, output)`, private close-on-exec copies of the real
    /// stdin and stdout. They are independent descriptors owned by the caller and stay valid
    /// after this guard is dropped (so the server can finish writing, and the guard can be
    /// dropped first).
    ///
    /// # Panics
    ///
    /// If the streams were already taken (see [`ProtectedStdio::try_take_streams`]).
    pub fn take_streams(&mut self) -> (File, File) {
        self.try_take_streams()
            .expect("ProtectedStdio::take_streams called twice")
    }

    /// Like [`ProtectedStdio::take_streams`], but `None` after the first call.
    pub fn try_take_streams(&mut self) -> Option<(File, File)> {
        self.streams.take()
    }

    /// Whether a `ProtectedStdio` is installed in this process.
    #[must_use]
    pub fn is_installed() -> bool {
        PROTECTED.load(Ordering::Acquire)
    }

    /// Restores fds 0 and 1 now, reporting failure (dropping restores silently).
    ///
    /// # Errors
    ///
    /// [`CaptureError::Descriptor`] if a descriptor cannot be restored (both are attempted).
    pub fn restore(self) -> Result<(), CaptureError> {
        sys::flush_c_stdio();
        end_protection(&mut super::cell())
    }
}

impl Drop for ProtectedStdio {
    fn drop(&mut self) {
        // Errors cannot be reported from Drop; both descriptors are attempted regardless.
        sys::flush_c_stdio();
        let _ = end_protection(&mut super::cell());
    }
}
