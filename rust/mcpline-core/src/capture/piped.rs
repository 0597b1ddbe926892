//! Calls that start a process write through a pipe from then on (unix, where fds 1 and 2 do not
//! write through a pipe outlet already, see `outlet`); and the follower of pipes whose call is
//! over while somebody still writes there ([`follow`]).
//!
//! A child inherits fds 1 and 2. While they point at the capture file, a child that opens them
//! anew with truncation (`echo x > /dev/stderr` in a shell script opens `/proc/self/fd/2`)
//! empties the file, and everything the call wrote before is gone; and a child that outlives
//! its call keeps the file itself, so what it writes later has to be looked for (see `late`).
//!
//! So when the language runtime reports that a process is about to start while a capture runs
//! ([`super::note_spawn`]: Python's `subprocess`, `os.system`, `os.fork`, ...), or that its own
//! code is about to open fd 1 or 2 anew with truncation ([`super::note_truncating_open`]:
//! `open("/dev/stderr", "w")`), the cell points fds 1 and 2 at a fresh pipe for the rest of that
//! capture. Opening a pipe anew through
//! `/dev/stderr` reaches the same pipe, and truncating it means nothing, so no byte is lost. A
//! thread (the pump) moves whatever arrives into the capture file, in order, so everything else
//! (the attached tail, calls sharing the capture, the capture cap, the log copy) reads the file
//! as before; whoever reads the file moves what is in the pipe first ([`Piped::settle`]), so
//! bytes written before that moment are all there.
//!
//! When the capture ends, fds 1 and 2 go home, what is left in the pipe moves to the file, and
//! the pipe stays with the pump: what arrives later is late output of the call, copied to the
//! real stderr line by line as `[name #id, late] ...`, until every process holding the pipe has
//! closed it. Nothing to look for and nothing to let go of: the pipe says when its last writer is
//! gone, and what waits in it is bounded by the pipe's buffer. The capture file itself, which
//! no reported child ever held, is reused by the next call as usual.
//!
//! Only fds 1 and 2 that still reach the capture file move: one the tool pointed at its own log
//! stays there. The late label names every call that ran while the pipe was in place (calls
//! sharing the capture, see `overlap`): any of them may have started the writer.
//!
//! A process started without a report (a C library's own `posix_spawn`), or while a tool had
//! put fd 1 or 2 back on the file, still inherits the file; so do all children once
//! [`MOST_PIPES`] pipes are alive. `outlet` tells whether such a process still holds the file
//! once the call is over, and `late` follows it.

use std::fs::File;
use std::io::{self, Read as _, Write as _};
use std::os::fd::{AsFd as _, AsRawFd as _, BorrowedFd};
use std::sync::{Arc, Mutex, OnceLock};
use std::thread;
use std::time::Duration;

use super::RealStderr;
use crate::sync::lock;
use crate::sys;

/// How much is read at a time.
const CHUNK: usize = 16 * 1024;
/// After a look that found only a little, the pump waits this long before the next: a tool's
/// lines then cost it one wake-up per burst rather than one each. A pipe holds 64 KiB, so a
/// writer that fills it is never held up long (and a look that finds much does not wait).
const GATHER: Duration = Duration::from_micros(200);
/// A late line longer than this is passed on without waiting for its end.
const LONGEST_LINE: usize = 8 * 1024;
/// At most this many pipes are alive at once (each holds a descriptor of this process): past
/// that, a call that starts a process goes on in its capture file (see `late`).
const MOST_PIPES: usize = 64;
/// [`Piped::settle`] moves at most this much: what was in the pipe when it was called (a pipe
/// holds 1 MiB at most), not what a busy child keeps adding while it runs.
const SETTLE_MOST: usize = 1024 * 1024 + CHUNK;

/// The pipe of an active capture, from the cell's side.
#[derive(Debug)]
pub(super) struct Piped {
    pipe: Arc<Pipe>,
    spawned_before: bool,
    /// The calls that ran while fds 1 and 2 pointed at the pipe (any of them may have started
    /// the processes that write there later).
    labels: Vec<Arc<str>>,
    /// What the pipe is, to tell whether fd 1 or 2 still points at it.
    id: Option<sys::FileId>,
    /// [`sys::fork_count`] then: a forked child, which has a copy of this but no pump (and
    /// maybe a copy of a lock the pump held), leaves the pipe alone.
    forks: u64,
}

/// The pipe, shared with the pump.
#[derive(Debug)]
struct Pipe {
    /// The reading end (non-blocking).
    read: File,
    flow: Mutex<Flow>,
}

/// Where what the pipe holds goes.
#[derive(Debug)]
struct Flow {
    to: Sink,
    /// The pipe's writers are all gone.
    ended: bool,
    /// What a read lands in (made once per pipe).
    buf: Vec<u8>,
}

#[derive(Debug)]
enum Sink {
    /// The running capture's file.
    Call(Arc<File>),
    /// The real stderr, as late output: each line prefixed with `label`; `partial` holds the
    /// start of a line whose end has not arrived yet.
    Late {
        label: String,
        err: RealStderr,
        partial: Vec<u8>,
    },
}

impl Piped {
    /// Points `targets` (fds 1 and 2, or the one of them still on the capture) at a new pipe
    /// whose bytes go to `file`. On an error they are pointed at `back` (the capture's outlet:
    /// the capture goes on in its file, as without a pipe).
    /// `labels`: the calls running now.
    pub(super) fn start(
        file: &Arc<File>,
        back: &sys::FileFd<'_>,
        spawned_before: bool,
        targets: &[i32],
        labels: Vec<Arc<str>>,
    ) -> io::Result<Self> {
        let pump = Pump::get()?;
        let (read, write) = sys::output_pipe()?;
        let id = sys::file_id(&read).ok();
        let pointed = targets
            .iter()
            .try_for_each(|&fd| sys::copy_fd(write.as_raw_fd(), fd));
        if let Err(error) = pointed {
            for &fd in targets {
                let _ = sys::redirect(fd, back);
            }
            return Err(error);
        }
        drop(write); // fds 1 and 2 hold it now: the pipe ends when they and their copies close
        let pipe = Arc::new(Pipe {
            read,
            flow: Mutex::new(Flow {
                to: Sink::Call(Arc::clone(file)),
                ended: false,
                buf: vec![0; CHUNK],
            }),
        });
        sys::publish_pipe_for_fatal(pipe.read.as_raw_fd());
        pump.add(Arc::clone(&pipe));
        Ok(Self {
            pipe,
            spawned_before,
            labels,
            id,
            forks: pump.forks,
        })
    }

    /// Another call joined the capture: processes it starts write to the pipe too.
    pub(super) fn joined(&mut self, label: Arc<str>) {
        self.labels.push(label);
    }

    /// A process is starting while fd 1 or 2 is back on the capture file (the tool put it
    /// there): it may hold the file after the call, as one started before the pipe may.
    pub(super) fn file_inherited(&mut self) {
        self.spawned_before = true;
    }

    /// Whether this process is the one that made the pipe (not a forked child of it).
    fn is_ours(&self) -> bool {
        sys::fork_count() == self.forks
    }

    /// Whether the capture had started a process (or may have) before fds 1 and 2 moved to the
    /// pipe: one that may still hold the file.
    pub(super) const fn spawned_before(&self) -> bool {
        self.spawned_before
    }

    /// Moves what the pipe holds now into the capture file, so that reading the file sees every
    /// byte written before this call.
    pub(super) fn settle(&self) {
        if !self.is_ours() {
            return;
        }
        let mut flow = lock(&self.pipe.flow);
        self.pipe.pump(&mut flow, SETTLE_MOST);
    }

    /// Writes `bytes` meant for `fd` (1 or 2) for one call among those sharing the capture,
    /// straight into the file after what the pipe holds: answers the file's size before and
    /// after, and the count. `None` when `fd` does not point at the pipe (the tool moved it) and
    /// in a forked child (its writes go through the pipe like a child process's).
    pub(super) fn write_own(
        &self,
        file: &File,
        fd: i32,
        bytes: &[u8],
    ) -> Option<io::Result<(u64, u64, usize)>> {
        if !self.is_ours() || self.id.is_none() {
            return None;
        }
        if sys::fd_file(fd).map(|(id, _)| id) != self.id {
            return None;
        }
        Some(self.write_own_now(file, bytes))
    }

    fn write_own_now(&self, file: &File, bytes: &[u8]) -> io::Result<(u64, u64, usize)> {
        let mut flow = lock(&self.pipe.flow);
        self.pipe.pump(&mut flow, SETTLE_MOST);
        super::append_measured(file, bytes)
    }

    /// The capture ended and fds 1 and 2 are home: moves what is left into the file, then
    /// sends what arrives later to `err` as late output of the calls that ran meanwhile.
    pub(super) fn end(self, err: RealStderr) {
        if !self.is_ours() {
            return;
        }
        sys::publish_pipe_for_fatal(-1);
        let mut flow = lock(&self.pipe.flow);
        self.pipe.pump(&mut flow, SETTLE_MOST);
        let names: Vec<&str> = self.labels.iter().map(|label| &**label).collect();
        flow.to = Sink::Late {
            label: format!("[{}, late] ", names.join(" + ")),
            err,
            partial: Vec::new(),
        };
    }
}

/// Whether a pipe outlet (see `outlet`) could be followed once its call is over: the follower
/// has room for another pipe, and runs in this process or has not been needed yet (it starts
/// when it is).
#[cfg(target_os = "linux")]
pub(super) fn can_follow() -> bool {
    match (STARTED.get(), PUMP.get()) {
        (None, _) => true,
        (Some(true), Some(Some(pump))) => {
            pump.forks == sys::fork_count() && lock(&pump.pipes).len() < MOST_PIPES
        }
        _ => false,
    }
}

/// Follows `read`, the reading end of a pipe outlet whose call is over but which another
/// process still holds (see `outlet`): what arrives goes to `err` line by line, after `label`,
/// until its last writer is gone. (Past [`MOST_PIPES`] too: its descriptor exists already.)
#[cfg(target_os = "linux")]
pub(super) fn follow(read: File, label: String, err: RealStderr) {
    let Ok(pump) = Pump::started() else {
        return; // a forked child: the pipe is its parent's to follow
    };
    pump.add(Arc::new(Pipe {
        read,
        flow: Mutex::new(Flow {
            to: Sink::Late {
                label,
                err,
                partial: Vec::new(),
            },
            ended: false,
            buf: vec![0; CHUNK],
        }),
    }));
}

impl Pipe {
    /// Moves up to `most` bytes (or until the pipe is empty) from the pipe to the sink. Answers
    /// whether the pipe may still bring more, and how much was moved.
    fn pump(&self, flow: &mut Flow, most: usize) -> (bool, usize) {
        if flow.ended {
            return (false, 0);
        }
        let Flow { to, ended, buf } = flow;
        let mut moved = 0;
        // A dying process leaves what is in the pipe to its fatal-signal handler.
        while moved < most && !sys::dying() {
            match (&self.read).read(buf) {
                Ok(0) => {
                    *ended = true;
                    to.finish();
                    return (false, moved);
                }
                Ok(read) => {
                    to.take(&buf[..read]);
                    moved += read;
                }
                Err(e) if e.kind() == io::ErrorKind::Interrupted => {}
                Err(e) if e.kind() == io::ErrorKind::WouldBlock => return (true, moved),
                Err(_) => {
                    *ended = true;
                    return (false, moved);
                }
            }
        }
        (true, moved)
    }
}

impl Sink {
    fn take(&mut self, bytes: &[u8]) {
        match self {
            // Appends (the file is opened so); a failed write loses these bytes only.
            Self::Call(file) => {
                let _ = (&**file).write_all(bytes);
            }
            Self::Late {
                label,
                err,
                partial,
            } => {
                partial.extend_from_slice(bytes);
                let whole = match partial.iter().rposition(|&b| b == b'\n') {
                    Some(end) => end + 1,
                    None if partial.len() > LONGEST_LINE => partial.len(),
                    None => return,
                };
                let mut out = Vec::with_capacity(whole + label.len() * 8);
                let mut at_line_start = true;
                for line in partial[..whole].split_inclusive(|&b| b == b'\n') {
                    if at_line_start {
                        out.extend_from_slice(label.as_bytes());
                    }
                    out.extend_from_slice(line);
                    at_line_start = line.ends_with(b"\n");
                }
                if !at_line_start {
                    out.push(b'\n');
                }
                let _ = err.write_all(&out);
                partial.drain(..whole);
            }
        }
    }

    /// The last writer closed the pipe: a late line without its end is passed on as it is.
    fn finish(&mut self) {
        if let Self::Late {
            label,
            err,
            partial,
        } = self
        {
            if !partial.is_empty() {
                let mut out = label.as_bytes().to_vec();
                out.append(partial);
                out.push(b'\n');
                let _ = err.write_all(&out);
            }
        }
    }
}

/// The pump, made on first use (`None`: it could not be).
static PUMP: OnceLock<Option<Pump>> = OnceLock::new();
/// Whether its thread started, once it was asked to.
static STARTED: OnceLock<bool> = OnceLock::new();

/// The thread that moves bytes out of every live pipe as they arrive.
struct Pump {
    pipes: Mutex<Vec<Arc<Pipe>>>,
    waker: sys::Waker,
    /// [`sys::fork_count`] in the process the thread runs in: a forked child has no pump.
    forks: u64,
}

impl Pump {
    /// The pump, started on first use, if this process has one and it has room for a pipe.
    fn get() -> io::Result<&'static Self> {
        let pump = Self::started()?;
        if lock(&pump.pipes).len() >= MOST_PIPES {
            return Err(io::Error::other("too many pipes alive"));
        }
        Ok(pump)
    }

    /// The pump, started on first use, if this process has one.
    fn started() -> io::Result<&'static Self> {
        let pump = PUMP
            .get_or_init(|| {
                Some(Self {
                    pipes: Mutex::new(Vec::new()),
                    waker: sys::Waker::new().ok()?,
                    forks: sys::fork_count(),
                })
            })
            .as_ref()
            .ok_or_else(|| io::Error::other("no waker for the pipe reader"))?;
        let started = *STARTED.get_or_init(|| {
            thread::Builder::new()
                .name("mcpline-capture-pipes".into())
                .spawn(move || pump.run())
                .is_ok()
        });
        if !started {
            return Err(io::Error::other("no thread to read a pipe with"));
        }
        if pump.forks != sys::fork_count() {
            return Err(io::Error::other("a forked child has no pipe reader"));
        }
        Ok(pump)
    }

    fn add(&self, pipe: Arc<Pipe>) {
        lock(&self.pipes).push(pipe);
        self.waker.wake();
    }

    fn run(&self) {
        loop {
            if sys::dying() {
                thread::sleep(Duration::from_millis(1));
                continue;
            }
            let pipes = lock(&self.pipes).clone();
            let fds: Vec<BorrowedFd<'_>> = pipes.iter().map(|p| p.read.as_fd()).collect();
            let Ok(ready) = sys::wait_any(&fds, &self.waker) else {
                // Out of memory for the poll set, say: look again in a moment.
                thread::sleep(Duration::from_millis(10));
                continue;
            };
            let mut ended: Vec<&Arc<Pipe>> = Vec::new();
            let mut moved = 0;
            for pipe in ready.into_iter().map(|index| &pipes[index]) {
                let (open, count) = pipe.pump(&mut lock(&pipe.flow), 64 * CHUNK);
                moved += count;
                if !open {
                    ended.push(pipe);
                }
            }
            if !ended.is_empty() {
                lock(&self.pipes).retain(|p| !ended.iter().any(|e| Arc::ptr_eq(p, e)));
            }
            if moved > 0 && moved < CHUNK {
                thread::sleep(GATHER);
            }
        }
    }
}
