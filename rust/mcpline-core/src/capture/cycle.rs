//! One capture cycle: [`Capture::begin`] (or [`Capture::begin_call`], which joins a capture
//! other calls hold), [`Capture::finish`] and `Drop`, with the parking decision and the take-over
//! of a parked file hidden inside;
//! and [`write_attributed`], the route of a call's own Python-level writes while calls overlap.

use std::fs::File;
use std::io;
use std::sync::Arc;
use std::sync::atomic::Ordering;
use std::time::Instant;

use super::late::{self, Finished};
use super::outlet::{self, Outlet};
use super::overlap::Overlap;
use super::spawns::{SPAWN_TAKES, watch_processes};
use super::{
    BASE, BEGIN, CaptureError, Captured, Cell, Holders, Home, LateLog, RealStderr, SHARED, STDERR,
    STDOUT, Streams, capture_file, cell, descriptor, drain, file_len, go_home, goes_on_at,
    home_err, kept_base, new_member, save, settled_len, spawns, started_a_process, still_on,
};
use crate::sys;
/// One capture of fds 1 and 2 into a fresh anonymous file: on Linux an in-memory one
/// (`memfd_create`), elsewhere an unlinked temporary file (mode 0600, in `$TMPDIR`, see
/// [`std::env::temp_dir`]).
///
/// Only one capture is active process-wide at a time; calls running at the same time share it
/// ([`Capture::begin_call`]), each getting back only what is its own. Dropping a `Capture`
/// without [`Capture::finish`] (panic, early return) leaves the capture (restoring fds 1 and 2
/// when it was the last one in it) and discards its output.
#[derive(Debug)]
#[must_use = "dropping a Capture restores fds 1 and 2 at once and discards what it captured"]
pub struct Capture {
    /// The capture file; `None` once finished.
    file: Option<Arc<File>>,
    /// Which holder of the capture this is.
    member: u64,
}

impl Capture {
    /// Flushes C stdio, then points fds 1 and 2 at a capture file (or takes over the file they
    /// are parked on).
    ///
    /// The caller flushes language-level buffers (Python's `sys.stdout`/`sys.stderr`) first.
    ///
    /// # Errors
    ///
    /// [`CaptureError::AlreadyActive`] if a capture is active (it is left untouched);
    /// [`CaptureError::TempFile`] if the capture file cannot be created;
    /// [`CaptureError::Descriptor`] if a descriptor cannot be copied or redirected (nothing is
    /// left redirected then); [`CaptureError::CrtUnavailable`] on Windows without the UCRT.
    pub fn begin() -> Result<Self, CaptureError> {
        sys::init()?;
        drain::watch(); // before the lock: it may log

        // Outside the lock: a C stream that is slow to flush holds up nobody else's log line.
        sys::flush_c_stdio();
        let mut cell = cell();
        if matches!(cell.streams, Streams::Capturing { .. }) {
            return Err(CaptureError::AlreadyActive);
        }
        start(&mut cell, new_member(), Arc::from("capture"))
    }

    /// Like [`Capture::begin`], for one call (`member` from [`new_member`], `label` such as
    /// `"count_words #7"`): if another call's capture is active, this call joins it instead of
    /// failing. Calls sharing a capture each get back their own bytes, and the bytes no single
    /// one of them can claim marked as shared (see the `overlap` module).
    ///
    /// # Errors
    ///
    /// As [`Capture::begin`], except that it never reports [`CaptureError::AlreadyActive`];
    /// [`CaptureError::CaptureFile`] if the size of a shared capture file cannot be read.
    pub fn begin_call(member: u64, label: Arc<str>) -> Result<Self, CaptureError> {
        sys::init()?;
        drain::watch(); // before the lock: it may log

        sys::flush_c_stdio();
        let mut cell = cell();
        let joined = {
            let Streams::Capturing {
                file,
                holders,
                start: first_start,
                piped,
                outlet,
                ..
            } = &mut cell.streams
            else {
                return start(&mut cell, member, label);
            };
            let at = settled_len(file, piped.as_ref(), outlet)
                .map_err(|source| CaptureError::CaptureFile { source })?;
            if let Some(piped) = piped {
                piped.joined(Arc::clone(&label));
            }
            outlet.joined(&label);
            match holders {
                Holders::Sole {
                    member: first,
                    label: first_label,
                } => {
                    let first = (*first, Arc::clone(first_label), *first_start);
                    *holders = Holders::Shared(Box::new(Overlap::new(first, (member, label), at)));
                }
                Holders::Shared(overlap) => overlap.join(member, label, at),
            }
            Arc::clone(file)
        };
        SHARED.store(true, Ordering::Release);
        Ok(Self {
            file: Some(joined),
            member,
        })
    }

    /// Flushes C stdio, ends the capture, and hands back the captured bytes (they stay in the
    /// file; nothing is read into memory here).
    ///
    /// Normally fds 1 and 2 are pointed back home. While stdio is protected (a server owns the
    /// standard descriptors) a capture that started no process instead leaves them parked on
    /// its file, which the next [`Capture::begin`] takes over without any `dup2`: a server
    /// running calls back to back pays two `fcntl` and two `epoll_wait`s on its pipe outlet
    /// per call on Linux (two `fstat` and one `lseek` elsewhere). Only while fds 1 and 2 still
    /// reach the capture file: if the tool moved or closed them, they are restored as usual.
    /// [`settle`] ends the parking (the server calls it when it waits for work); whatever
    /// reached the parked file meanwhile goes to the real stderr.
    ///
    /// A call that shares the capture with others still running leaves fds 1 and 2 where they
    /// are: the last one to finish restores them.
    ///
    /// The caller flushes language-level buffers first.
    ///
    /// # Errors
    ///
    /// [`CaptureError::Descriptor`] if a descriptor cannot be restored (both are attempted);
    /// [`CaptureError::CaptureFile`] if the size of the capture file cannot be read.
    pub fn finish(mut self) -> Result<Captured, CaptureError> {
        let Some(file) = self.file.take() else {
            return Ok(Captured::EMPTY);
        };
        sys::flush_c_stdio();
        let mut cell = cell();
        if let Streams::Capturing {
            holders: Holders::Shared(overlap),
            drained,
            piped,
            home,
            outlet,
            ..
        } = &mut cell.streams
        {
            let last = overlap.running() == 1 && overlap.is_running(self.member);
            if (piped.is_some() || outlet.is_pipe()) && last {
                // The last one: what reaches the pipe until fds 1 and 2 are home is its too.
                // (A failure is reported by the end of the capture below, which tries again.)
                let _ = go_home(home);
            }
            let late = RealStderr::on(&home.err);
            let at = settled_len(&file, piped.as_ref(), outlet)
                .map_err(|source| CaptureError::CaptureFile { source })?;
            let label = overlap.label_of(self.member).cloned();
            let pieces = overlap.leave(self.member, at);
            let drained = *drained;
            if overlap.running() == 0 {
                let ending = Ending::of(&cell.streams);
                let outlet = cell.end_capture()?;
                let (spawned, exact, outlet) = ending.after(outlet, &file, Some(late));
                let cell = &mut *cell;
                cell.after.keep(
                    Finished {
                        file: Arc::clone(&file),
                        end: at,
                        label: label.unwrap_or_else(|| Arc::from("")),
                        spawned,
                        exact,
                        outlet,
                        late_seen: false,
                        // Not looked at: the file is emptied before it is used again.
                        intact: false,
                    },
                    &mut LateLog::new(home_err(&cell.streams)),
                );
            }
            let captured = Captured {
                file: Some(file),
                pieces,
                skipped: 0,
            };
            return Ok(captured.after(drained));
        }
        let ending = Ending::of(&cell.streams);
        let (parks, whole, known) = match &cell.streams {
            Streams::Capturing { outlet, .. } => {
                outlet.settle(&file);
                (
                    cell.protect.is_some() && ending.parks(),
                    outlet.is_pipe(),
                    outlet.len(),
                )
            }
            _ => (false, false, None),
        };
        if let Some(len) = parks.then(|| still_on(&file, cell.newest, known)).flatten() {
            let Streams::Capturing {
                home,
                start,
                drained,
                outlet,
                ..
            } = cell.take_streams()
            else {
                unreachable!("matched as capturing above");
            };
            let (captured, intact) = own_bytes(&file, (start, drained), len, whole);
            cell.set_streams(Streams::Parked {
                home,
                file,
                outlet,
                end: len,
                spawns: spawns(),
                intact,
            });
            return Ok(captured);
        }
        let (from, label) = match &cell.streams {
            Streams::Capturing {
                start,
                drained,
                holders: Holders::Sole { label, .. },
                ..
            } => ((*start, *drained), Arc::clone(label)),
            _ => ((BASE, BASE), Arc::from("")),
        };
        let late = home_err(&cell.streams).map(RealStderr::on);
        let outlet = cell.end_capture()?;
        let (spawned, exact, outlet) = ending.after(outlet, &file, late);
        let len = file_len(&file).map_err(|source| CaptureError::CaptureFile { source })?;
        let (captured, intact) = own_bytes(&file, from, len, whole);
        let cell = &mut *cell;
        cell.after.keep(
            Finished {
                file,
                end: len,
                label,
                spawned,
                exact,
                outlet,
                late_seen: false,
                intact,
            },
            &mut LateLog::new(home_err(&cell.streams)),
        );
        Ok(captured)
    }
}

/// What the end of a capture does about processes its call may have started, which may hold
/// its file and write there later (see `outlet`). Told while the capture is still active.
#[derive(Debug, Clone, Copy)]
enum Ending {
    /// None can have started: fds 1 and 2 may park on the outlet, which is kept.
    Quiet,
    /// One may have (reported, through the pipe, or the call lasted long enough): close the
    /// outlet once fds 1 and 2 are home, and ask whether anybody still holds it.
    Ask,
    /// No outlet that can tell (see `outlet`): `spawned` is what the cell saw. A capture whose
    /// fds moved to a pipe never parks (they point at the pipe).
    Seen { spawned: bool, piped: bool },
}

impl Ending {
    fn of(streams: &Streams) -> Self {
        let Streams::Capturing {
            spawns: before,
            began,
            piped,
            outlet,
            ..
        } = streams
        else {
            return Self::Quiet;
        };
        if outlet.can_tell() {
            let may_have_started =
                piped.is_some() || spawns() != *before || began.elapsed() >= SPAWN_TAKES;
            return if may_have_started {
                Self::Ask
            } else {
                Self::Quiet
            };
        }
        let spawned = match piped {
            Some(piped) => piped.spawned_before(),
            None => started_a_process(*before, *began),
        };
        Self::Seen {
            spawned,
            piped: piped.is_some(),
        }
    }

    const fn parks(self) -> bool {
        matches!(
            self,
            Self::Quiet
                | Self::Seen {
                    spawned: false,
                    piped: false
                }
        )
    }

    /// Once fds 1 and 2 are home, with the `outlet` they wrote through: whether a process may
    /// still hold the capture file, whether that is known exactly (the outlet told), and the
    /// outlet to keep for the file's next capture. A pipe outlet still held passes what
    /// arrives later on to `late`.
    fn after(
        self,
        outlet: Option<Outlet>,
        file: &File,
        late: Option<RealStderr>,
    ) -> (bool, bool, Option<Outlet>) {
        match (self, outlet) {
            (Self::Ask, Some(outlet)) => outlet.close(file, late),
            // Every process it started may have ended already (Windows: see `outlet::alone`).
            (Self::Seen { spawned, .. }, outlet) if spawned && outlet::alone() => {
                (false, true, outlet)
            }
            (Self::Seen { spawned, .. }, outlet) => (spawned, false, outlet),
            (Self::Quiet, outlet) => (false, false, outlet),
            (Self::Ask, None) => (true, false, None),
        }
    }
}

/// What a finished capture holds: its file from `start` up to `len`, less what the cap moved to
/// the log (up to `drained`); and whether the file still begins with its NUL byte. When a
/// truncating open emptied the file during the call, what it holds now was all written since:
/// from the beginning. (A quiet call is not looked at: were the file emptied and refilled to
/// exactly where the call began, its bytes would go unseen.) `whole`: fds 1 and 2 wrote
/// through a pipe outlet, so nothing but the cell opened the file, and its byte is not read.
fn own_bytes(
    file: &Arc<File>,
    (start, drained): (u64, u64),
    len: u64,
    whole: bool,
) -> (Captured, bool) {
    if len == start {
        return (Captured::EMPTY, true);
    }
    if len < start || !(whole || kept_base(file)) {
        return (Captured::whole(Arc::clone(file), 0, len), false);
    }
    (
        Captured::whole(Arc::clone(file), start, len).after(drained),
        true,
    )
}

/// Starts a capture with fds 1 and 2 not captured (the caller checked), for `member`.
fn start(cell: &mut Cell, member: u64, label: Arc<str>) -> Result<Capture, CaptureError> {
    watch_processes();
    let (home, file, start, outlet) = if let Some(start) = take_over_parked(cell) {
        let Streams::Parked {
            home, file, outlet, ..
        } = cell.take_streams()
        else {
            unreachable!("take_over_parked checked it is parked");
        };
        (home, file, start, outlet)
    } else {
        redirect_to_a_capture_file(cell)?
    };
    let mut outlet = outlet;
    outlet.begin(&label, start);
    if outlet.is_pipe() {
        drain::capture_began();
    }
    cell.set_streams(Streams::Capturing {
        home,
        file: Arc::clone(&file),
        holders: Holders::Sole { member, label },
        start,
        drained: start,
        spawns: spawns(),
        began: Instant::now(),
        piped: None,
        outlet,
    });
    Ok(Capture {
        file: Some(file),
        member,
    })
}

/// Points fds 1 and 2 at a capture file (a kept one or a fresh one), unparking them first;
/// answers where they go back, the file, where the capture's bytes begin in it and the outlet
/// they write through. Nothing is left redirected on an error.
fn redirect_to_a_capture_file(
    cell: &mut Cell,
) -> Result<(Home, Arc<File>, u64, Outlet), CaptureError> {
    // A parked file not taken over (a process may hold it, a result still reads it): unpark.
    cell.unpark()?;
    // Save first: once fds 1 and 2 are known to be open, the capture file cannot land on them.
    let home = match cell.take_streams() {
        Streams::Idle { kept: Some(home) } => home,
        _ => Home {
            out: save(STDOUT, BEGIN)?,
            err: Arc::new(save(STDERR, BEGIN)?),
        },
    };
    let (file, start, outlet) = capture_file(&mut cell.after, &mut cell.newest, &home)?;
    let redirected = outlet
        .target(&file)
        .map_err(descriptor(
            BEGIN,
            "making a descriptor for the capture file",
        ))
        .and_then(|target| {
            sys::redirect(STDOUT, &target).map_err(descriptor(BEGIN, "dup2 onto fd 1"))?;
            sys::redirect(STDERR, &target).map_err(descriptor(BEGIN, "dup2 onto fd 2"))
        });
    if let Err(error) = redirected {
        // Undo whatever part happened; pointing an untouched fd at its own copy is harmless.
        let _ = sys::restore(STDOUT, &home.out);
        let _ = sys::restore(STDERR, &home.err);
        return Err(error);
    }
    Ok((home, file, start, outlet))
}

/// Where the next capture's bytes begin, if fds 1 and 2 are parked on a file it can take over:
/// after the bytes it holds while it is small and intact (see `goes_on_at`), else emptied. Not
/// when a process was started since the file was parked (it may write there later), nor while
/// a result still reads the file's bytes (the capture cap's hole, or a truncating open, in the
/// next call would reach them). Bytes written since the last call ended belong to no call:
/// they go to the real stderr first (and the parked state records them as passed on).
fn take_over_parked(cell: &mut Cell) -> Option<u64> {
    let Streams::Parked {
        home,
        file,
        end,
        spawns: parked_spawns,
        intact,
        outlet,
    } = &mut cell.streams
    else {
        return None;
    };
    if spawns() != *parked_spawns || !outlet.is_ours() {
        return None;
    }
    outlet.settle(file);
    let len = match outlet.len() {
        Some(len) => len,
        None => file_len(file).ok()?,
    };
    if len < *end || len < BASE {
        return None; // emptied behind the cell's back
    }
    if len > *end {
        let stray = Captured::whole(Arc::clone(file), *end, len);
        let _ = stray.copy_labelled("[background] ", &mut RealStderr::on(&home.err));
        *end = len;
    }
    if len == BASE && *intact {
        return Some(BASE);
    }
    if Arc::strong_count(file) != 1 {
        return None;
    }
    if *intact && goes_on_at(len) {
        return Some(len);
    }
    late::empty(file).ok()?;
    *intact = true;
    Some(BASE)
}

impl Drop for Capture {
    fn drop(&mut self) {
        if let Some(file) = self.file.take() {
            sys::flush_c_stdio();
            let mut cell = cell();
            if let Streams::Capturing {
                holders: Holders::Shared(overlap),
                piped,
                outlet,
                ..
            } = &mut cell.streams
            {
                let at = settled_len(&file, piped.as_ref(), outlet).unwrap_or(0);
                let _ = overlap.leave(self.member, at);
                if overlap.running() > 0 {
                    return;
                }
            }
            // Errors cannot be reported from Drop; both descriptors are attempted regardless.
            let late = home_err(&cell.streams).map(RealStderr::on);
            if let Ok(Some(outlet)) = cell.end_capture() {
                // A child may still hold a pipe outlet: followed, never closed under it.
                outlet.let_go(&file, late);
            }
        }
    }
}

/// Writes (part of) `bytes` to `fd` (1 or 2) for call `member`: while calls share a capture
/// and `member` is one of them, what lands in the capture file is recorded as `member`'s own
/// (the binding routes a call's Python-level writes here, so that concurrent calls each get
/// their own `print`s). Otherwise a plain write. Returns the count written.
///
/// The write happens under the cell's lock, so no other attributed write interleaves; when the
/// file grew by more than was written (a child wrote at the same moment), nothing is recorded
/// and those bytes count as shared.
///
/// # Errors
///
/// The write failed.
pub fn write_attributed(member: u64, fd: i32, bytes: &[u8]) -> io::Result<usize> {
    if SHARED.load(Ordering::Acquire) {
        let mut cell = cell();
        if let Streams::Capturing {
            file,
            holders: Holders::Shared(overlap),
            piped,
            outlet,
            ..
        } = &mut cell.streams
        {
            let own = piped
                .as_ref()
                .filter(|_| overlap.is_running(member))
                .and_then(|piped| piped.write_own(file, fd, bytes))
                .or_else(|| {
                    overlap
                        .is_running(member)
                        .then(|| outlet.write_own(file, fd, bytes))
                        .flatten()
                });
            if let Some(own) = own {
                // Straight into the file, after what the pipe holds (see `piped`).
                let (before, after, written) = own?;
                if after.checked_sub(before) == Some(written as u64) {
                    overlap.tag(member, before, after);
                }
                return Ok(written);
            }
            if outlet.is_pipe() {
                // Not through the outlet (the tool moved fd 1 or 2): nothing to measure in the
                // file, and a write into a full pipe must not hold the lock its emptying needs.
                drop(cell);
                return sys::write_fd(fd, bytes);
            }
            if overlap.is_running(member) {
                let before = file_len(file)?;
                let written = sys::write_fd(fd, bytes)?;
                let after = file_len(file)?;
                if after.checked_sub(before) == Some(written as u64) {
                    overlap.tag(member, before, after);
                }
                return Ok(written);
            }
        }
    }
    sys::write_fd(fd, bytes)
}
