//! Which captures started a process: a child inherits fds 1 and 2 while they point at its
//! call's capture file and may write there after the call ended, so such a file is never reused
//! or parked (see `late`).
//!
//! Where the outlet can tell who still holds the file (unix, see `outlet`), these counts only
//! say whether a capture's end needs to ask; elsewhere [`started_a_process`] is the answer.

#[cfg(unix)]
use std::sync::atomic::AtomicBool;
use std::sync::atomic::{AtomicU64, Ordering};
use std::time::{Duration, Instant};

use crate::sys;

/// Processes started as reported by the language runtime ([`note_spawn`]).
static SPAWNS: AtomicU64 = AtomicU64::new(0);

/// Tells the cell that the process started a child process (a language binding calls this for
/// the ways its runtime starts one; `fork` is counted without it). The running captures' files
/// are then never reused, since the child may hold them and write there after its call ends.
///
/// A running capture's fds 1 and 2 move to a pipe first, so the child inherits that instead of
/// the file (see `piped`).
pub fn note_spawn() {
    if super::is_capturing() {
        super::pipe_the_capture();
    }
    SPAWNS.fetch_add(1, Ordering::Relaxed);
}

/// Children started so far, by any route the cell hears of.
pub(super) fn spawns() -> u64 {
    SPAWNS.load(Ordering::Relaxed) + sys::forked_count()
}

/// A C library's `posix_spawn` or `vfork` takes longer than this (the parent waits for the
/// child's `exec`: 150 µs and more here), so a capture that lasted less cannot have started a
/// process nobody reported, and its end asks the kernel nothing.
pub(super) const SPAWN_TAKES: Duration = Duration::from_micros(50);

/// Whether the process had a child when a capture's end last asked (see
/// [`started_a_process`]).
#[cfg(unix)]
static HAD_CHILDREN: AtomicBool = AtomicBool::new(false);

/// Processes started in the process's job when a capture's end last asked (Windows, see
/// `sys::job_windows`).
#[cfg(windows)]
static STARTED_IN_JOB: AtomicU64 = AtomicU64::new(0);

/// Makes sure processes started from now on are seen however they start (Windows: the process
/// joins a job of its own, once); called as a capture begins.
pub(super) fn watch_processes() {
    #[cfg(windows)]
    sys::join_job();
}

/// Records whether the process has a child now: a capture that started one through its pipe
/// (see `piped`) asked nothing when it ended, and a child it left must not count as started by
/// the next one.
pub(super) fn children_seen() {
    #[cfg(unix)]
    HAD_CHILDREN.store(sys::has_children(), Ordering::Relaxed);
}

/// Whether the capture that began at `began`, when [`spawns`] said `before`, started a
/// process: one reported, or, if it lasted long enough to start one nobody reported, one the
/// system shows started since a capture's end last asked. On unix that is a child the process
/// has now and had not then (a child that was there before, such as a daemon an earlier call
/// left or a worker started before serving, does not count again; one started while another
/// lives, or through a child that ended, is missed). On Windows it is any process started in
/// the process's job since then, its children's children included (one started between calls
/// counts for the next long call: its file is then followed, never reused, until no process
/// but this one runs). Captures too short to start one did not ask, nor could they have
/// started it. Called once per capture, when it ends.
pub(super) fn started_a_process(before: u64, began: Instant) -> bool {
    if spawns() != before {
        return true;
    }
    if began.elapsed() < SPAWN_TAKES {
        return false;
    }
    started_unreported()
}

#[cfg(unix)]
fn started_unreported() -> bool {
    let has = sys::has_children();
    let had = HAD_CHILDREN.swap(has, Ordering::Relaxed);
    has && !had
}

#[cfg(windows)]
fn started_unreported() -> bool {
    let started = sys::processes_started();
    STARTED_IN_JOB.swap(started, Ordering::Relaxed) != started
}
