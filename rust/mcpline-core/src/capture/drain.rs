//! The capture cap: a capture never holds more than [`set_cap`] bytes (64 MiB by default).
//!
//! A watcher thread looks at the active capture file a few times a second. Once it holds more
//! than the cap, everything but its last part is copied to the real stderr, labelled with the
//! call (or the calls sharing it), and its room is given back: a hole punched at the front of
//! the file on Linux and macOS, zeroed room of the sparse file on Windows (NTFS). The call's
//! attached output then keeps its tail and says how many earlier bytes are not shown; its
//! stderr copy at the end resumes where the watcher stopped. The tool never notices: nothing
//! blocks, nothing fails with "no space".
//!
//! The same watcher passes on late output: what children of finished calls write to those
//! calls' files (see `late`). And it moves what a pipe outlet holds into the capture file (see
//! `outlet`): every 10 ms while calls run (and for a second after), and every millisecond while
//! its looks keep finding more than a little there, so that a tool writing a lot waits for room
//! at most once, for one tick, and then writes at about the speed of a file. A capture that
//! begins while the watcher dozes (a second without calls) wakes it ([`capture_began`]).
//!
//! Quiet and small calls never meet the watcher: it only reads the file's size (one `lseek`)
//! and looks into the pipe (one `epoll_wait`) on its ticks, from its own thread.

use std::io::{BufWriter, Write as _};
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::{Once, OnceLock};
use std::thread;
use std::time::{Duration, Instant};

use super::{
    Holders, LateLog, RealStderr, Streams, cell, file_len, home_err, is_capturing, is_parked,
};
use crate::sys;

/// The default of [`set_cap`].
pub(crate) const DEFAULT_CAP: u64 = 64 * 1024 * 1024;

/// How often the watcher looks at the active capture, and at the files of finished calls.
const TICK: Duration = Duration::from_millis(100);
/// How often it looks while captures write through pipe outlets (which hold 1 MiB), and for
/// [`AWAKE_FOR`] after the last one it saw.
const PIPE_TICK: Duration = Duration::from_millis(10);
const AWAKE_FOR: Duration = Duration::from_secs(1);
/// How often while its looks keep finding at least [`BUSY`] bytes in the pipe.
const BUSY_TICK: Duration = Duration::from_millis(1);
const BUSY: u64 = 16 * 1024;

/// [`this_process`] in the process the watcher thread runs in (0: none runs). A forked child has
/// no watcher: its threads stay with the parent.
static WATCHING: AtomicU64 = AtomicU64::new(0);
/// The watcher thread, to wake.
static WATCHER: OnceLock<thread::Thread> = OnceLock::new();
/// Set while the watcher sleeps for a whole [`TICK`].
static DOZING: AtomicBool = AtomicBool::new(false);

static CAP: AtomicU64 = AtomicU64::new(DEFAULT_CAP);

/// Sets the most bytes a capture holds (at least 64 KiB) before the front of it is moved to
/// the log (a server sets it from `ServerConfig::capture_cap` when it starts).
pub fn set_cap(bytes: u64) {
    CAP.store(bytes.max(64 * 1024), Ordering::Relaxed);
}

/// Starts the watcher, once per process.
pub(super) fn watch() {
    static ONCE: Once = Once::new();
    ONCE.call_once(|| {
        let spawned = thread::Builder::new()
            .name("mcpline-capture-cap".into())
            .spawn(|| {
                let mut next = TICK;
                let mut late_looked = Instant::now();
                let mut piped_seen: Option<Instant> = None;
                loop {
                    if next == TICK {
                        DOZING.store(true, Ordering::SeqCst);
                        std::sync::atomic::fence(Ordering::SeqCst);
                        // A capture that began since the last look did not see the flag set.
                        if is_capturing() || is_parked() {
                            next = PIPE_TICK;
                        }
                    }
                    thread::park_timeout(next);
                    DOZING.store(false, Ordering::SeqCst);
                    let looked = (is_capturing() || is_parked()).then(check).flatten();
                    if looked.is_some() {
                        piped_seen = Some(Instant::now());
                    }
                    next = match looked {
                        Some(moved) if moved >= BUSY => BUSY_TICK,
                        Some(_) => PIPE_TICK,
                        None if piped_seen.is_some_and(|at| at.elapsed() < AWAKE_FOR) => PIPE_TICK,
                        None => TICK,
                    };
                    if late_looked.elapsed() >= TICK {
                        follow_late_output();
                        late_looked = Instant::now();
                    }
                }
            });
        if let Ok(handle) = &spawned {
            let _ = WATCHER.set(handle.thread().clone());
            WATCHING.store(this_process(), Ordering::Release);
        }
        if let Err(e) = spawned {
            crate::log::log_line(&format!("captures are not capped: no watcher thread: {e}"));
        }
    });
}

/// A capture writing through a pipe outlet began: the watcher, if it dozes, looks at it now
/// and every [`PIPE_TICK`] from then on. (While calls keep coming it is awake already: one
/// atomic load.)
pub(super) fn capture_began() {
    // No fence here, on every call: a capture that begins just as the watcher goes to doze
    // (it looks once more after saying so) may wait for its next tick, 100 ms at most.
    if DOZING.load(Ordering::Relaxed) && DOZING.swap(false, Ordering::SeqCst) {
        if let Some(watcher) = WATCHER.get() {
            watcher.unpark();
        }
    }
}

/// Whether the watcher runs in this process (a pipe outlet needs it, see `outlet`).
#[cfg(target_os = "linux")]
pub(super) fn watching() -> bool {
    WATCHING.load(Ordering::Acquire) == this_process()
}

/// What tells this process from a forked child of it: one more than [`sys::fork_count`] on
/// unix (never 0).
fn this_process() -> u64 {
    #[cfg(unix)]
    {
        sys::fork_count() + 1
    }
    #[cfg(not(unix))]
    {
        1
    }
}

/// Passes on late output written to the files of finished calls (see `late`).
fn follow_late_output() {
    let mut cell = cell();
    let cell = &mut *cell;
    if !cell.after.any() {
        return;
    }
    cell.after.watch(&mut LateLog::new(home_err(&cell.streams)));
}

/// Moves what the active capture's pipe outlet holds into its file, then the front of the
/// file to the log if it holds more than the cap. Answers how much the pipe held (`None`: the
/// capture has no pipe outlet). A parked pipe outlet is emptied too (what reached it between
/// calls is passed on when the next capture begins, or fds 1 and 2 go home).
fn check() -> Option<u64> {
    let cap = CAP.load(Ordering::Relaxed);
    let mut cell = cell();
    if let Streams::Parked { file, outlet, .. } = &cell.streams {
        return outlet.is_pipe().then(|| outlet.settle(file));
    }
    let Streams::Capturing {
        home,
        file,
        holders,
        drained,
        outlet,
        ..
    } = &mut cell.streams
    else {
        return None;
    };
    let moved = outlet.is_pipe().then(|| outlet.settle(file));
    let Ok(size) = file_len(file) else {
        return moved;
    };
    if size.saturating_sub(*drained) <= cap {
        return moved;
    }
    // Keep the last part (enough for the attached tail), cut after a newline when one is near.
    let keep = (cap / 2).min(4 * 1024 * 1024);
    let mut end = size - keep;
    let mut probe = vec![0; 64 * 1024];
    let from = end.saturating_sub(probe.len() as u64).max(*drained);
    if let Ok(read) = super::captured::read_at(file, &mut probe[..(end - from) as usize], from) {
        if let Some(newline) = probe[..read].iter().rposition(|&b| b == b'\n') {
            end = from + newline as u64 + 1;
        }
    }
    let label = match holders {
        Holders::Sole { label, .. } => format!("[{label}] "),
        Holders::Shared(overlap) => format!("[{}] ", overlap.running_labels().join(" + ")),
    };
    let front = super::Captured::whole(std::sync::Arc::clone(file), *drained, end);
    let mut out = BufWriter::new(RealStderr::on(&home.err));
    let _ = front.copy_labelled(&label, &mut out);
    let _ = writeln!(
        out,
        "{label}[… the capture passed its cap of {cap} bytes: what it held up to here went to \
         the log while the call ran …]"
    );
    let _ = out.flush();
    *drained = end;
    sys::publish_capture_start(end);
    let _ = sys::release_front(file, end);
    moved
}
