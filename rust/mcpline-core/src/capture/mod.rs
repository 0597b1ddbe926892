//! The capture cell: the only place where mcpline touches the process's standard descriptors.
//!
//! Two guards live here, both process-global because descriptors are:
//!
//! - [`ProtectedStdio`] moves the protocol streams (the real stdin and stdout) onto private,
//!   close-on-exec descriptors and makes the standard ones harmless: fd 0 reads the null device
//!   (a tool that prompts gets end-of-file at once) and fd 1 is a copy of the real stderr (a stray
//!   `print()`, a C library or a child process writes to the log, never into the protocol).
//! - [`Capture`] redirects fds 1 and 2 into an anonymous file (Linux: in memory, `memfd_create`;
//!   elsewhere an unlinked temporary file) for the duration of one tool call. A file: writing
//!   costs no thread a wake-up, and nothing a tool writes ever waits for a reader. What grows past
//!   the capture cap while the call runs is copied to the log and its room given back (see
//!   `drain`), so memory and disk stay bounded. On Linux fds 1 and 2 write into it through a
//!   pipe (the pipe outlet, see `outlet`), moved into the file whenever the cell reads it: a
//!   child's truncating open (`> /dev/stderr`) reaches the pipe and loses nothing, whoever
//!   started the child. Elsewhere they write into the file itself, opened for appending (unix),
//!   so a child writing through `/dev/stderr` (its own open of the file) overwrites nothing and
//!   leaves no holes; and once the call starts a process the language runtime reports, fds 1
//!   and 2 move to a pipe that a thread empties into the file (see `piped`).
//!   [`Capture::finish`] restores the descriptors and hands back a [`Captured`] that reads the
//!   bytes from the file on demand (memory stays bounded whatever the size).
//!
//! # Rules
//!
//! - Captures must not nest or run concurrently: a second [`Capture::begin`] while one is active
//!   returns [`CaptureError::AlreadyActive`] and leaves the first capture untouched.
//! - Restoration rides `Drop`: a panicking tool, or an early return, cannot leave the process mute.
//!   Restoring is idempotent ([`Capture::finish`] then `Drop` restores once).
//! - Buffers: `begin` and `finish` flush the C runtime's `stdout` and `stderr` (on Windows the
//!   UCRT's), before taking the cell's lock. Language-level buffers (Python's `sys.stdout`/`sys.stderr`, Rust's
//!   `std::io::stdout()` line buffer) are the caller's job, before `begin` and before `finish`.
//! - A standard descriptor that is closed when a guard needs it gets the null device parked on it
//!   first (as pytest's `FDCapture` does), so restoring is always well defined; the null device
//!   stays there afterwards.
//! - Descriptors kept for our own use (saved copies, the reading handle of the capture file, the
//!   protocol streams) are close-on-exec (non-inheritable on Windows); fds 1 and 2 pointing at the
//!   capture file are inherited by children, which is the point.
//!
//! # Cost
//!
//! The server brackets every tool call with `begin`/`finish`, so a cycle is kept to a handful of
//! system calls. On unix an empty cycle is: `fcntl(F_DUPFD_CLOEXEC)` x2 and `dup2` x2 to begin,
//! `dup2` x2, `close` x2 and `lseek` to finish, one `lseek` to check the reused file, plus two
//! `fflush` pairs (no system call when no C buffer holds data) and one uncontended mutex.
//!
//! While [`ProtectedStdio`] is installed (a server is running) the process's standard
//! descriptors belong to the cell, so the copies of fds 1 and 2 a capture restored are kept for
//! the next capture: the `fcntl` and `close` pairs are paid once, not per call. Caveat: a change
//! to fd 1 or 2 made between captures (by a background thread) is undone when the next capture
//! ends, as a change made during a capture always is.
//!
//! And a capture that ends while stdio is protected parks (unless its call started a process,
//! see `late`): fds 1 and 2 stay on its file and the next `begin` takes it over without any
//! `dup2`, the new call's bytes starting where the last call's ended (the file is emptied, with
//! one `ftruncate`, only once it holds more than 64 KiB and nothing reads its bytes any more).
//! Calls run back to back thus cost two `fcntl` and two `epoll_wait`s on the pipe outlet each
//! on Linux (where fds 1 and 2 write through a file, two `fcntl` and two `lseek`, plus one `pread`
//! of the file's first byte when the call printed, see below; elsewhere two `fstat` and one
//! `lseek`). When the call ends, the cell checks that fds 1 and 2 still reach the capture
//! (on Linux a mark on the open file description they write through, read back with
//! `F_GETSIG`; elsewhere the file's identity) and moves what the pipe holds into the file, or
//! reads its size: a tool that pointed them at its own log or closed them gets them restored
//! instead, so the next call's output never follows them there. The look at the next `begin`
//! finds bytes written between calls, which belong to no call and go to the log. The server calls [`settle`] when it waits for work, which points them home (the
//! `dup2` pair the finish saved), so nothing written between calls waits long in a parked file:
//! before it waits on its queue at once, and while it reads the next request itself after at
//! most a couple of milliseconds (another request usually comes first). The cell keeps this state explicitly (`Streams`: idle, capturing, parked); callers only
//! see `begin`, `finish` and `settle`.
//!
//! Every capture file begins with one NUL byte (`BASE`) that no capture reports. Emptying
//! keeps that byte, and with it the file's first page, which the next calls write into: freeing
//! the page and faulting in a fresh one made a short write cost a third more. A truncating open
//! during a call (`> /dev/stderr`) removes the byte: the call's bytes are then read from the
//! start of the file, so what follows the truncation is whole even when the call's bytes began
//! after earlier calls' ones, and the file is emptied (its NUL byte put back) before another
//! capture uses it. (A quiet call's file is not looked at: were it emptied and refilled to
//! exactly where the call began, those bytes would go unseen.)
//!
//! A finished capture's file is kept: the next `begin` reuses it (going on after its bytes, or
//! emptied, as a parked one) when nobody wrote to it since its call ended, nobody still reads it
//! and no process its call started may hold it (children the runtime reports hold the pipe
//! instead, see `piped`); what a lingering child writes there later is passed on as that call's
//! late output (see `late`). On unix fds 1 and 2 write through an outlet, an open file
//! description of their own with a lock on it, so "may hold it" is exact: after a call that may
//! have started a process, one `fcntl` (where the file cannot be opened anew, as on macOS, a
//! `flock`) asks the system whether anybody else still has that description open, whoever
//! started them and however (see `outlet`).
//! Calls that run at the same time share the active capture (see `overlap`), and the capture
//! cap bounds its size while it runs (see `drain`).
//!
//! # Caveats
//!
//! - Only C's `stdout` and `stderr` are flushed (`fflush(NULL)` would wait for any thread blocked
//!   in a C read): a `FILE` that C code opened on fd 1 or 2 itself (`fdopen`) and left unflushed
//!   writes its buffer wherever that descriptor points when it is finally flushed.
//! - Windows: the C runtime's `_dup2` closes the OS handle that the target fd held. The cell keeps
//!   the process's standard handles of fds 1 and 2 open instead (see `sys::windows`), except the
//!   original stdout once [`ProtectedStdio`] makes it the protocol stream: a handle cached before
//!   serving must not write into the protocol, so it is closed then. Writers that cached a
//!   handle (`CPython`'s console writer `_WindowsConsoleIO`, `GetStdHandle` callers) keep writing
//!   to the real stream during a capture, not into it: the Python package swaps `sys.stdout` and
//!   `sys.stderr` for descriptor-following streams while it serves or captures.

use std::fs::File;
use std::io::{self, Seek, SeekFrom, Write as _};
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::{Arc, Mutex, MutexGuard};
use std::time::Instant;

use crate::sync::lock;
use crate::sys;

mod captured;
mod cycle;
mod drain;
mod error;
mod late;
mod outlet;
mod overlap;
#[cfg(unix)]
mod piped;
#[cfg(not(unix))]
#[path = "piped_none.rs"]
mod piped;
mod protect;
mod real_stderr;
mod spawns;

pub use captured::Captured;
pub use cycle::{Capture, write_attributed};
pub(crate) use drain::DEFAULT_CAP;
pub use drain::set_cap as set_capture_cap;
pub use error::CaptureError;
use error::descriptor;
use late::{AfterCalls, Finished};
use outlet::Outlet;
use overlap::Overlap;
use piped::Piped;
pub use protect::ProtectedStdio;
use real_stderr::LateLog;
pub use real_stderr::write_real_stderr;
pub(crate) use real_stderr::{RealStderr, real_stderr};
pub use spawns::note_spawn;
use spawns::{spawns, started_a_process};

/// Standard input, output and error as C runtime descriptor numbers (the same on both platforms).
const STDIN: i32 = 0;
const STDOUT: i32 = 1;
const STDERR: i32 = 2;

/// Every capture file begins with one NUL byte that no capture reports: captures read from
/// offset 1 on. Emptying a file (`ftruncate` to this size) thus keeps its first page, which the
/// next call writes into, instead of freeing it and faulting in a fresh one (which made a short
/// write into a memfd cost a third more). And a truncating open during a call (`> /dev/stderr`)
/// shows, since a writer never writes this byte back: the call's bytes are then read from 0.
const BASE: u64 = 1;

/// A capture file is taken over by the next call as it is, its bytes starting where the last
/// call's ended, until it holds more than this; then it is emptied first (down to [`BASE`]).
/// Calls back to back thus pay one `ftruncate` per this many bytes rather than one each.
const REFILL_AT: u64 = 64 * 1024;

/// Whether the next capture can go on in a file of `len` bytes as it is (see [`REFILL_AT`])
/// rather than empty it first, given that its first byte is intact.
fn goes_on_at(len: u64) -> bool {
    (BASE..=REFILL_AT).contains(&len)
}

/// What the cell was doing, for [`CaptureError::Descriptor`].
const BEGIN: &str = "begin a capture";
const END_CAPTURE: &str = "restore fds 1 and 2 after a capture";

/// Saved copies of fds 1 and 2: where they point when no capture holds them.
#[derive(Debug)]
struct Home {
    out: sys::SavedFd,
    /// Shared with writers of the log ([`real_stderr`]), which may outlive this `Home`.
    err: Arc<sys::SavedFd>,
}

/// Where fds 1 and 2 point, as far as captures are concerned.
#[derive(Debug)]
enum Streams {
    /// At their own targets. While stdio is protected, `kept` holds copies of them for the next
    /// capture (made once, instead of a copy and a close per capture).
    Idle { kept: Option<Home> },
    /// At the active capture's file; `home` is where they go back.
    Capturing {
        home: Home,
        file: Arc<File>,
        holders: Holders,
        /// Where the capture's bytes begin (at least [`BASE`]: earlier ones are other calls').
        start: u64,
        /// The capture's bytes before this offset are not in the file any more for it: `start`,
        /// moved on past what the cap copied to the log (see `drain`).
        drained: u64,
        /// [`spawns`] when the capture began.
        spawns: u64,
        /// When the capture began.
        began: Instant,
        /// Set once the capture's call started a process: fds 1 and 2 point at this pipe
        /// from then on (see `piped`).
        piped: Option<Piped>,
        /// What fds 1 and 2 write through into `file` (see `outlet`).
        outlet: Outlet,
    },
    /// Still at the file of a finished capture, which the next capture takes over (no `dup2`),
    /// going on after its bytes or emptied (see `goes_on_at`). Only while stdio is protected,
    /// and only until [`settle`]. `end`: its size when its call ended, or when bytes written
    /// since were passed on (what is beyond was written between calls); `spawns`: [`spawns`]
    /// when it parked; `intact`: the file still begins with its NUL byte (no truncating open
    /// emptied it during the call), so a capture may start after the bytes it holds.
    Parked {
        home: Home,
        file: Arc<File>,
        outlet: Outlet,
        end: u64,
        spawns: u64,
        intact: bool,
    },
}

/// Who the active capture belongs to.
#[derive(Debug)]
enum Holders {
    /// One call (or one `mcpline.capture()` block outside a server).
    Sole { member: u64, label: Arc<str> },
    /// Calls running at the same time, sharing fds 1 and 2 (see [`overlap`]).
    Shared(Box<Overlap>),
}

/// The process-wide state of the cell. Every descriptor change happens under its lock.
///
/// Transitions (all under the lock):
///
/// ```text
///            begin                      finish (protected)
///   Idle ─────────────▶ Capturing ─────────────────────────────▶ Parked
///    ▲   ◀───────────── │  ▲                                      │ │
///    │  finish (else),  │  └──── begin (nothing written since) ───┘ │
///    │  Drop            │                                           │
///    └──────────── settle, begin (file written to), end of protection
/// ```
struct Cell {
    streams: Streams,
    /// The real stdin and stdout while a server owns the standard descriptors.
    protect: Option<protect::Saved>,
    /// The files of finished calls: the newest, to reuse, and those with late writers.
    after: AfterCalls,
    /// The identity of the newest capture file (the only one ever reused), read once when it
    /// is created rather than on every quiet call (not on Linux, which checks a mark instead).
    newest: Option<sys::FileId>,
}

static CELL: Mutex<Cell> = Mutex::new(Cell {
    streams: Streams::Idle { kept: None },
    protect: None,
    after: AfterCalls::new(),
    newest: None,
});
/// Mirrors of the cell's state, readable without its lock.
static CAPTURING: AtomicBool = AtomicBool::new(false);
static PARKED: AtomicBool = AtomicBool::new(false);
static SHARED: AtomicBool = AtomicBool::new(false);
/// The source of [`new_member`] ids.
static MEMBERS: AtomicU64 = AtomicU64::new(1);

/// A fresh id for a call's capture ([`Capture::begin_call`], [`write_attributed`]).
#[must_use]
pub fn new_member() -> u64 {
    MEMBERS.fetch_add(1, Ordering::Relaxed)
}

/// Locks the cell. A poisoned lock is still usable: the state it guards is consistent between
/// operations.
fn cell() -> MutexGuard<'static, Cell> {
    lock(&CELL)
}

impl Cell {
    fn set_streams(&mut self, streams: Streams) {
        CAPTURING.store(
            matches!(streams, Streams::Capturing { .. }),
            Ordering::Release,
        );
        PARKED.store(matches!(streams, Streams::Parked { .. }), Ordering::Release);
        SHARED.store(
            matches!(
                streams,
                Streams::Capturing {
                    holders: Holders::Shared(_),
                    ..
                }
            ),
            Ordering::Release,
        );
        self.streams = streams;
        self.publish();
    }

    /// Tells the fatal-signal handler where the running capture and the real stderr are now.
    fn publish(&self) {
        let (capture, home) = match &self.streams {
            Streams::Capturing {
                home,
                file,
                drained: start,
                ..
            }
            | Streams::Parked {
                home,
                file,
                end: start,
                ..
            } => (Some((&**file, *start)), Some(home)),
            Streams::Idle { kept } => (None, kept.as_ref()),
        };
        sys::publish_for_fatal(capture, home.map(|h| &*h.err));
        #[cfg(unix)]
        match &self.streams {
            Streams::Capturing { outlet, piped, .. } if piped.is_none() => {
                sys::publish_pipe_for_fatal(outlet.pipe_fd().unwrap_or(-1));
            }
            Streams::Parked { outlet, .. } => {
                sys::publish_pipe_for_fatal(outlet.pipe_fd().unwrap_or(-1));
            }
            Streams::Capturing { .. } => {}
            Streams::Idle { .. } => sys::publish_pipe_for_fatal(-1),
        }
    }

    fn take_streams(&mut self) -> Streams {
        std::mem::replace(&mut self.streams, Streams::Idle { kept: None })
    }

    /// Ends an active capture: points fds 1 and 2 home (the caller flushed C stdio), and hands
    /// back the outlet they wrote through (see `outlet`). Idempotent (`None` the second time).
    fn end_capture(&mut self) -> Result<Option<Outlet>, CaptureError> {
        if !matches!(self.streams, Streams::Capturing { .. }) {
            return Ok(None);
        }
        let Streams::Capturing {
            home,
            file,
            piped,
            outlet,
            ..
        } = self.take_streams()
        else {
            unreachable!("matched as capturing above");
        };
        let restored = go_home(&home);
        outlet.settle(&file);
        if let Some(piped) = piped {
            piped.end(RealStderr::on(&home.err));
            spawns::children_seen();
        }
        let kept = (self.protect.is_some() && restored.is_ok()).then_some(home);
        self.set_streams(Streams::Idle { kept });
        restored.map(|()| Some(outlet))
    }

    /// Points parked fds 1 and 2 home (the caller flushed C stdio). Bytes that reached the
    /// parked file belong to no call: they are passed on to the real stderr as they are.
    fn unpark(&mut self) -> Result<(), CaptureError> {
        if !matches!(self.streams, Streams::Parked { .. }) {
            return Ok(());
        }
        let Streams::Parked {
            home,
            file,
            outlet,
            end,
            spawns: parked_spawns,
            intact,
        } = self.take_streams()
        else {
            unreachable!("matched as parked above");
        };
        let restored = go_home(&home);
        outlet.settle(&file);
        let known_len = outlet.len();
        let err = RealStderr::on(&home.err);
        self.set_streams(Streams::Idle { kept: Some(home) });
        // A process started while parked may hold the file: asked of the outlet where it can
        // tell, and it is never reused then.
        let (spawned, exact, outlet) = if spawns() == parked_spawns {
            (false, false, Some(outlet))
        } else {
            let mut outlet = outlet;
            outlet.between_calls();
            outlet.close(&file, Some(err))
        };
        // Written while parked, between calls: by a thread or a process started since, no
        // call's own (a call that started a process never parks).
        let len = known_len.unwrap_or_else(|| file_len(&file).unwrap_or(end));
        if len > end {
            let stray = Captured::whole(Arc::clone(&file), end, len);
            let _ = stray.copy_labelled("[background] ", &mut io::stderr().lock());
        }
        let label = Arc::from("background");
        self.after.keep(
            Finished {
                file,
                end: len,
                label,
                spawned,
                exact,
                outlet,
                late_seen: len > end,
                // Shorter than at the end of its call: a truncating open emptied it since.
                intact: intact && len >= end,
            },
            &mut LateLog::new(home_err(&self.streams)),
        );
        restored
    }
}

/// Tells the cell that code in this process is about to open fd 1 or 2 anew with truncation
/// (Python's `open("/dev/stderr", "w")`, which reopens the capture file and would empty it): a
/// running capture's fds 1 and 2 move to a pipe first (see `piped`), which such an open reaches
/// without emptying anything.
pub fn note_truncating_open() {
    if is_capturing() {
        pipe_the_capture();
    }
}

/// Points the active capture's fds 1 and 2 at a pipe (see `piped`), for a process about to
/// start or a truncating open of fd 1 or 2 ([`note_spawn`], [`note_truncating_open`]). Once per
/// capture; on failure the capture goes on in its file.
fn pipe_the_capture() {
    sys::flush_c_stdio();
    let mut cell = cell();
    let Streams::Capturing {
        file,
        holders,
        spawns: before,
        began,
        piped,
        outlet,
        ..
    } = &mut cell.streams
    else {
        return;
    };
    if outlet.is_pipe() {
        return; // fds 1 and 2 write through a pipe already (see `outlet`)
    }
    // Only those of fds 1 and 2 that still reach the capture: one the tool pointed at its own
    // log (for its children to write there) or closed stays as the tool left it.
    let id = sys::file_id(file).ok();
    let targets: Vec<i32> = [STDOUT, STDERR]
        .into_iter()
        .filter(|&fd| id.is_some() && sys::fd_file(fd).map(|(fd_id, _)| fd_id) == id)
        .collect();
    if let Some(piped) = piped {
        if !targets.is_empty() {
            // The tool put one back on the file since: this child may hold the file.
            piped.file_inherited();
        }
        return;
    }
    if targets.is_empty() {
        return;
    }
    let labels = match holders {
        Holders::Sole { label, .. } => vec![Arc::clone(label)],
        Holders::Shared(overlap) => overlap
            .running_labels()
            .into_iter()
            .map(Arc::from)
            .collect(),
    };
    // Where the outlet can tell, the end of the capture asks it instead (see `outlet`).
    let spawned_before = !outlet.can_tell() && started_a_process(*before, *began);
    let Ok(back) = outlet.target(file) else {
        return;
    };
    if let Ok(started) = Piped::start(file, &back, spawned_before, &targets, labels) {
        *piped = Some(started);
    }
}

/// The size of the active capture's file, once what its pipe (or pipe outlet) holds is in it.
fn settled_len(file: &File, piped: Option<&Piped>, outlet: &Outlet) -> io::Result<u64> {
    if let Some(piped) = piped {
        piped.settle();
    }
    outlet.settle(file);
    file_len(file)
}

/// Is fd 1/2 currently redirected into an active capture?
#[must_use]
pub fn is_capturing() -> bool {
    CAPTURING.load(Ordering::Acquire)
}

/// Returns a close-on-exec copy of standard descriptor `fd`, parking the null device on it first
/// if it is closed. On Windows the process's standard handle of fd 1 or 2 is kept open from now
/// on, and restoring puts it back in the standard slot (see `sys::windows`).
fn save(fd: i32, action: &'static str) -> Result<sys::SavedFd, CaptureError> {
    if let Some(saved) =
        sys::try_save(fd, true).map_err(descriptor(action, format_args!("dup of fd {fd}")))?
    {
        return Ok(saved);
    }
    sys::point_at_null(fd).map_err(descriptor(
        action,
        format_args!("parking the null device on closed fd {fd}"),
    ))?;
    sys::try_save(fd, true)
        .map_err(descriptor(action, format_args!("dup of fd {fd}")))?
        .ok_or_else(|| CaptureError::Descriptor {
            action,
            op: format!("dup of fd {fd}"),
            source: io::Error::new(io::ErrorKind::NotFound, "descriptor closed again at once"),
        })
}

/// The size of a capture file, by seeking its offset to the end.
///
/// Cheaper than `metadata()` (one `lseek` instead of a `statx`, paid twice per tool call), and
/// harmless: on unix fds 1 and 2 share this offset but append, and on Windows they write
/// through an append-only open of their own.
fn file_len(mut file: &File) -> io::Result<u64> {
    file.seek(SeekFrom::End(0))
}

/// Appends `bytes` to a capture file for one call's own write (see `write_attributed`): the
/// file's size before and after, and the count written.
#[cfg(unix)]
fn append_measured(mut file: &File, bytes: &[u8]) -> io::Result<(u64, u64, usize)> {
    let before = file_len(file)?;
    let written = file.write(bytes)?;
    Ok((before, file_len(file)?, written))
}

/// Whether fds 1 and 2 both still reach `file`: a tool may have pointed them at its own log
/// (`os.dup2`) or closed them, and parking must not leave them there for the next call.
/// Answers the file's size when they do.
///
/// On Linux the capture file's open file description carries a mark (`sys::mark`) that fds 1
/// and 2 read back with one `fcntl` each, and the size comes from one `lseek`: 470 ns here,
/// against 710 ns for two `fstat`. Only the current capture file can be behind a marked fd 1
/// or 2: older ones are reachable through the cell's own close-on-exec descriptors alone.
/// Elsewhere an `fstat` of each gives its identity, and the size with it. `known`: the size,
/// where the outlet knows it (see `outlet::Outlet::len`), which saves the `lseek`.
fn still_on(file: &File, newest: Option<sys::FileId>, known: Option<u64>) -> Option<u64> {
    #[cfg(target_os = "linux")]
    {
        let _ = newest;
        (sys::is_marked(STDOUT) && sys::is_marked(STDERR))
            .then(|| known.or_else(|| file_len(file).ok()))
            .flatten()
    }
    #[cfg(not(target_os = "linux"))]
    {
        let _ = known;
        let id = newest.or_else(|| sys::file_id(file).ok())?;
        let (out, len) = sys::fd_file(STDOUT)?;
        let (err, _) = sys::fd_file(STDERR)?;
        (out == id && err == id).then_some(len)
    }
}

/// The file of the last finished call if nobody wrote to it since (see `late`), or a fresh
/// one (see [`new_file`]); where the new capture's bytes begin in it; and the outlet fds 1 and
/// 2 write through (see `outlet`).
fn capture_file(
    after: &mut AfterCalls,
    newest: &mut Option<sys::FileId>,
    home: &Home,
) -> Result<(Arc<File>, u64, Outlet), CaptureError> {
    if let Some((file, start, outlet)) = after.reusable(&mut LateLog::new(Some(&home.err))) {
        // Not reused once it has no outlet left that could tell who holds it (see
        // `outlet::SPARE_OPENS`): a fresh file then.
        // (A forked child's copy of its parent's pipe outlet is the parent's to empty.)
        let outlet = outlet.filter(Outlet::is_ours);
        if let Some(outlet) = outlet.or_else(|| Outlet::new(&file)) {
            return Ok((file, start, outlet));
        }
    }
    let (file, spares) = new_file().map_err(|source| CaptureError::TempFile {
        dir: std::env::temp_dir(),
        source,
    })?;
    sys::set_append(&file).map_err(descriptor(BEGIN, "opening the capture file for appending"))?;
    let file = sys::off_standard_fds(file)
        .map_err(descriptor(BEGIN, "moving the capture file off fd 0"))?;
    (&file)
        .write_all(&[0; BASE as usize])
        .map_err(descriptor(BEGIN, "writing the capture file's first byte"))?;
    // Linux checks fds 1 and 2 against the mark instead (see `still_on`).
    #[cfg(not(target_os = "linux"))]
    {
        *newest = sys::file_id(&file).ok();
    }
    #[cfg(target_os = "linux")]
    let _ = newest;
    let outlet = Outlet::first(&file, spares);
    Ok((Arc::new(file), BASE, outlet))
}

/// A new capture file, and the opens of it its outlets need where it cannot be opened anew
/// (see `outlet`): on Linux an anonymous in-memory file, elsewhere (and on Linux without
/// `/proc`) a temporary file.
fn new_file() -> io::Result<(File, Vec<File>)> {
    #[cfg(unix)]
    if !sys::reopens() {
        if let Ok(made) = sys::temp_file_with_opens(outlet::SPARE_OPENS) {
            return Ok(made);
        }
        // `$TMPDIR` refused it: a file that cannot tell who holds it (see `outlet`).
    }
    let file = match sys::anonymous_file() {
        Some(file) => file,
        None => sys::temp_file()?,
    };
    Ok((file, Vec::new()))
}

/// Whether `file` still begins with the byte it was created with ([`BASE`]): not when a
/// truncating open (`> /dev/stderr` in a child) emptied it since. Not read on Windows, where
/// nothing reopens fds 1 and 2 that way.
fn kept_base(file: &File) -> bool {
    if cfg!(windows) {
        return true;
    }
    let mut first = [1];
    matches!(captured::read_at(file, &mut first, 0), Ok(1)) && first[0] == 0
}

/// The saved real stderr, when fds 1 and 2 may point elsewhere (`None`: fd 2 is the real one).
fn home_err(streams: &Streams) -> Option<&Arc<sys::SavedFd>> {
    match streams {
        Streams::Capturing { home, .. }
        | Streams::Parked { home, .. }
        | Streams::Idle { kept: Some(home) } => Some(&home.err),
        Streams::Idle { kept: None } => None,
    }
}

/// Points fds 1 and 2 back at their saved copies (both are attempted).
fn go_home(home: &Home) -> Result<(), CaptureError> {
    let out = sys::restore(STDOUT, &home.out).map_err(descriptor(END_CAPTURE, "dup2 onto fd 1"));
    let err = sys::restore(STDERR, &home.err).map_err(descriptor(END_CAPTURE, "dup2 onto fd 2"));
    out.and(err)
}

/// Copies what the active capture holds so far to the real stderr, each line prefixed with
/// `label`: for a process about to exit while a call runs (an end-of-input grace that ran out,
/// a dead parent), whose output would otherwise vanish with the unlinked capture file. Does
/// nothing without an active capture; errors are ignored (the process is on its way out).
///
/// Only bytes that reached the file count: a language-level buffer of the running call (which
/// still holds the interpreter) cannot be flushed from here.
pub(crate) fn salvage(label: &str) {
    sys::flush_c_stdio();
    let cell = cell();
    let Streams::Capturing {
        home,
        file,
        drained,
        piped,
        outlet,
        ..
    } = &cell.streams
    else {
        return;
    };
    let Ok(end) = settled_len(file, piped.as_ref(), outlet) else {
        return;
    };
    // What the cap already moved to the log is not copied again.
    let held = Captured::whole(Arc::clone(file), *drained, end);
    let _ = held.copy_labelled(label, &mut RealStderr::on(&home.err));
}

/// A window onto the active capture: the bytes written to fds 1 and 2 between [`Window::open`]
/// and [`Window::close`]. This is what a capture requested while another one runs gets (the
/// cell never nests): `mcpline.capture()` inside a tool sees what the tool printed in its
/// block, and the call's own capture keeps every byte as well.
#[derive(Debug)]
pub struct Window {
    /// The capture file.
    file: Arc<File>,
    /// Its size when the window opened.
    start: u64,
}

impl Window {
    /// Flushes C stdio and opens a window at the current end of the active capture; `None` when
    /// no capture is active.
    ///
    /// The caller flushes language-level buffers first.
    ///
    /// # Errors
    ///
    /// [`CaptureError::CaptureFile`] if the capture file's size cannot be read.
    pub fn open() -> Result<Option<Self>, CaptureError> {
        sys::flush_c_stdio();
        let cell = cell();
        let Streams::Capturing {
            file,
            piped,
            outlet,
            ..
        } = &cell.streams
        else {
            return Ok(None);
        };
        let file = Arc::clone(file);
        let start = settled_len(&file, piped.as_ref(), outlet)
            .map_err(|source| CaptureError::CaptureFile { source })?;
        Ok(Some(Self { file, start }))
    }

    /// Flushes C stdio and returns what reached the capture since the window opened: its last
    /// `limit` bytes as text (see [`Captured::tail_text`]) and the byte count.
    ///
    /// The caller flushes language-level buffers first.
    ///
    /// # Errors
    ///
    /// [`CaptureError::CaptureFile`] if the capture file's size cannot be read.
    pub fn close(self, limit: usize) -> Result<(String, u64), CaptureError> {
        sys::flush_c_stdio();
        let cell = cell();
        let (drained, end) = match &cell.streams {
            Streams::Capturing {
                file,
                drained,
                piped,
                outlet,
                ..
            } if Arc::ptr_eq(file, &self.file) => {
                (*drained, settled_len(&self.file, piped.as_ref(), outlet))
            }
            _ => (0, file_len(&self.file)),
        };
        let end = end.map_err(|source| CaptureError::CaptureFile { source })?;
        drop(cell);
        let start = self.start.min(end);
        let seen = Captured::whole(Arc::clone(&self.file), start, end).after(drained);
        let text = seen.tail_text(limit);
        Ok((text, end - start))
    }
}

/// Whether a finished capture left fds 1 and 2 parked on its file (see [`settle`]).
pub(crate) fn is_parked() -> bool {
    PARKED.load(Ordering::Acquire)
}

/// Points fds 1 and 2 back at their real targets if a finished capture left them parked on its
/// file (see [`Capture::finish`]); does nothing otherwise (one atomic load). Call it when no
/// capture is about to begin: when waiting for work (at once, or soon after the wait began),
/// before running code uncaptured, before the process exits.
///
/// # Errors
///
/// [`CaptureError::Descriptor`] if a descriptor cannot be restored (both are attempted).
pub fn settle() -> Result<(), CaptureError> {
    if !PARKED.load(Ordering::Acquire) {
        return Ok(());
    }
    sys::flush_c_stdio();
    cell().unpark()
}
