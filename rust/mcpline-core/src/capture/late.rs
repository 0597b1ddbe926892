//! Capture files after their call: reused when nobody wrote to them since, followed for late
//! output when somebody did.
//!
//! A call's capture file stays reachable after the call ends: a child process it started (a
//! daemon, a process pool, a language server) keeps fds 1 and 2 pointing at it and may write
//! at any time. So a finished file is never simply dropped or reused:
//!
//! - The cell keeps the files of the last few calls with their sizes at the end of each call
//!   ([`Finished`]). The next capture reuses the newest (no file to create, no inode to free;
//!   its bytes start where the last call's ended, and the file is emptied once it is large) if
//!   it did not grow since and nobody still reads it. Older ones are watched a little
//!   longer, then let go unless they grew.
//! - If it grew, what was added is *late output* of the call it belonged to: it goes to the
//!   real stderr labelled `[name #id, late]`, the file is emptied (appending writers go on at
//!   its new end, so it stays small) and from then on it is *followed*: the capture cap's
//!   watcher looks at it a few times a second and passes on whatever arrives.
//! - At most [`FOLLOWED`] files are followed; beyond that the oldest is let go, with a line
//!   saying so.
//!
//! Children the language runtime reports ([`super::note_spawn`]: Python's `subprocess`,
//! `os.system`, `os.fork` ...) never see the file: fds 1 and 2 move to a pipe before they start,
//! and what they write after the call goes to the log from there (see `piped`). What is left for
//! this module is a process started without a report (from C), or while a tool had put fd 1 or
//! 2 back on the file.
//!
//! On unix the cell knows exactly whether a finished call's file is still held: the outlet fds
//! 1 and 2 wrote through carries a lock that lives as long as any descriptor of it (see
//! `outlet`). A held file is never reused or parked; it is followed, and let go once its last
//! holder has closed it (what arrived until then passed on). Late output is thus never passed
//! off as another call's, whatever started the process (but see `outlet` for a holder that
//! drops a `flock` of its own). On Windows, and for a unix file without an outlet of its own,
//! the cell goes by what it saw (see `spawns::started_a_process`): on Windows any process
//! started in the process's job, and a file is free again once no process but this one runs
//! there (`outlet::alone`).
//!
//! Where fds 1 and 2 wrote through a pipe outlet (Linux, see `outlet`), what a lingering writer
//! adds waits in the pipe: it is moved into the file before the file is looked at, and a pipe
//! outlet let go while somebody still holds it is followed as a pipe (see `piped`).

use std::collections::VecDeque;
use std::fs::File;
use std::io::{self, Write};
use std::sync::Arc;

use super::outlet::{self, Outlet};
use super::{BASE, Captured, LateLog, file_len, goes_on_at, kept_base};

/// How many files with late writers are followed at most (each holds a descriptor).
pub(super) const FOLLOWED: usize = 64;
/// How many files of the last calls are kept to be watched for late output (and the newest to
/// be reused).
const RECENT: usize = 4;

/// A capture file whose call ended.
#[derive(Debug)]
pub(super) struct Finished {
    pub(super) file: Arc<File>,
    /// Its size when the call ended (or when late output was last passed on).
    pub(super) end: u64,
    /// The call it belonged to (`"name #id"`).
    pub(super) label: Arc<str>,
    /// The call started a process, which may still hold the file: it is never reused.
    pub(super) spawned: bool,
    /// `spawned` was told by the file's outlet (see `outlet`), which can be asked again when
    /// the holders are gone.
    pub(super) exact: bool,
    /// The outlet fds 1 and 2 wrote through, kept for the file's next capture (`None` once
    /// closed: the next capture opens another).
    pub(super) outlet: Option<Outlet>,
    /// Late output arrived at least once.
    pub(super) late_seen: bool,
    /// The file still begins with its NUL byte (no truncating open emptied it), so a capture
    /// may go on after the bytes it holds.
    pub(super) intact: bool,
}

impl Finished {
    /// Whether every process that held the file has closed it since its call ended, as told
    /// by its outlet, or by the system when no other process runs (see `outlet::alone`); never
    /// where neither can tell. `spawned` is cleared then.
    fn holders_gone(&mut self) -> bool {
        if self.spawned
            && ((self.exact && outlet::still_held(&self.file) == Some(false)) || outlet::alone())
        {
            self.spawned = false;
            self.exact = true;
        }
        self.exact && !self.spawned
    }

    /// Drops the outlet kept for the file's next capture. A pipe outlet somebody still holds (a
    /// copy of fd 1 or 2 the call left behind) is followed for late output (see `outlet`).
    fn let_go_of_outlet(&mut self, err: &mut LateLog<'_>) {
        if let Some(outlet) = self.outlet.take() {
            if outlet.is_pipe() {
                self.pass_on_late_of(outlet, err);
            }
        }
    }

    fn pass_on_late_of(&mut self, outlet: Outlet, err: &mut LateLog<'_>) {
        outlet.settle(&self.file);
        self.pass_on_late(err);
        outlet.let_go(&self.file, err.real_stderr());
    }

    /// Passes on what was written since `end`, labelled as late output, and empties the file.
    /// Returns whether there was any.
    pub(super) fn pass_on_late(&mut self, err: &mut dyn Write) -> bool {
        if let Some(outlet) = &self.outlet {
            outlet.settle(&self.file);
        }
        let Ok(size) = file_len(&self.file) else {
            return false;
        };
        if size <= self.end {
            // Shorter than it was: a truncating open emptied it meanwhile.
            self.intact &= size == self.end;
            return false;
        }
        let late = Captured::whole(Arc::clone(&self.file), self.end, size);
        let _ = late.copy_labelled(&format!("[{}, late] ", self.label), err);
        if empty(&self.file).is_ok() {
            self.end = BASE;
            self.intact = true;
        } else {
            self.end = size;
        }
        self.late_seen = true;
        true
    }
}

/// Empties a capture file for its next use: down to its NUL first byte ([`BASE`], put back if a
/// truncating open replaced it). Its writers append (unix: the file is opened so; Windows: fds 1
/// and 2 hold an append-only open), so they go on at the new end.
pub(super) fn empty(file: &File) -> io::Result<()> {
    if !kept_base(file) {
        file.set_len(0)?;
    }
    file.set_len(BASE)
}

/// The files of finished calls the cell keeps: the last few, and those being followed.
#[derive(Debug)]
pub(super) struct AfterCalls {
    /// The files of the last [`RECENT`] calls, newest last.
    recent: VecDeque<Finished>,
    /// Files that received late output.
    followed: Vec<Finished>,
}

impl AfterCalls {
    pub(super) const fn new() -> Self {
        Self {
            recent: VecDeque::new(),
            followed: Vec::new(),
        }
    }

    /// Keeps the file of a call that just ended. The oldest kept file beyond [`RECENT`] is let
    /// go if nobody wrote to it since its call ended and its call started no process (else it
    /// is followed).
    pub(super) fn keep(&mut self, finished: Finished, err: &mut LateLog<'_>) {
        // Only the newest is ever reused: the outlets of the others are not needed any more.
        for older in &mut self.recent {
            older.let_go_of_outlet(err);
        }
        self.recent.push_back(finished);
        if self.recent.len() > RECENT {
            if let Some(mut oldest) = self.recent.pop_front() {
                let gone = oldest.holders_gone();
                if oldest.pass_on_late(err) || (oldest.spawned && !gone) {
                    self.follow(oldest, err);
                }
            }
        }
    }

    /// A file for the next capture, and where the capture's bytes begin in it: the newest
    /// finished one if nobody wrote to it since its call ended, its call started no process
    /// and nobody still reads it (emptied once it is large, see `goes_on_at`); `None`
    /// otherwise (late output found is passed on to `err` at once, rather than at the
    /// watcher's next look).
    pub(super) fn reusable(
        &mut self,
        err: &mut LateLog<'_>,
    ) -> Option<(Arc<File>, u64, Option<Outlet>)> {
        let newest = self.recent.back()?;
        if Arc::strong_count(&newest.file) > 1 {
            // Its call's output is still being read, on another thread.
            return None;
        }
        let mut newest = self.recent.pop_back()?;
        // Asked before looking for late bytes: a holder that closed after the look could
        // have written in between.
        if newest.spawned {
            newest.holders_gone();
        }
        if newest.pass_on_late(err) {
            self.follow(newest, err);
            return None;
        }
        if newest.spawned {
            // A process it started may write there yet.
            self.recent.push_back(newest);
            return None;
        }
        let outlet = newest.outlet.take();
        if newest.intact && goes_on_at(newest.end) {
            return Some((newest.file, newest.end, outlet));
        }
        empty(&newest.file).ok()?;
        Some((newest.file, BASE, outlet))
    }

    /// Passes on late output of every kept file (the watcher's tick).
    pub(super) fn watch(&mut self, err: &mut LateLog<'_>) {
        let mut index = 0;
        while index < self.recent.len() {
            let idle = Arc::strong_count(&self.recent[index].file) == 1;
            if !idle {
                // A result still reads the file: what a lingering writer added to a pipe outlet
                // moves into it all the same (passed on once nobody reads), so the writer
                // never waits for room.
                let kept = &self.recent[index];
                if let Some(outlet) = &kept.outlet {
                    outlet.settle(&kept.file);
                }
            }
            if idle && self.recent[index].pass_on_late(err) {
                if let Some(late) = self.recent.remove(index) {
                    self.follow(late, err);
                }
                continue;
            }
            index += 1;
        }
        // A followed file whose holders are all gone (as its outlet tells) is let go once what
        // they wrote is passed on.
        self.followed.retain_mut(|followed| {
            let gone = followed.holders_gone();
            followed.pass_on_late(err);
            !gone
        });
    }

    /// Whether any file is kept (the watcher has something to look at).
    pub(super) fn any(&self) -> bool {
        !self.recent.is_empty() || !self.followed.is_empty()
    }

    fn follow(&mut self, mut finished: Finished, err: &mut LateLog<'_>) {
        // A followed file is never reused: its outlet's spare opens are not needed.
        finished.let_go_of_outlet(err);
        if self.followed.len() >= FOLLOWED {
            // The oldest quiet one goes first; a note only when one that did write goes.
            let index = self.followed.iter().position(|f| !f.late_seen).unwrap_or(0);
            let dropped = self.followed.remove(index);
            if dropped.late_seen {
                let _ = writeln!(
                    err,
                    "[mcpline] late output of {} is no longer followed (more than {FOLLOWED} \
                     calls left writers behind)",
                    dropped.label
                );
            }
        }
        self.followed.push(finished);
    }
}
