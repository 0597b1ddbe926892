//! The process's real stderr while fds 1 and 2 may point into a capture: the server's log lines
//! ([`write_real_stderr`]), the labelled copies of calls' output ([`real_stderr`]) and late
//! output ([`LateLog`]) go there, never into a running call's capture.

use std::io::{self, Write};
use std::sync::Arc;

use super::{STDERR, cell, home_err};
use crate::sys;

/// The real stderr for late output, found on the first write only (most calls have none):
/// `home` is the saved stderr while fds 1 and 2 may point elsewhere, `None` when fd 2 is the
/// real one.
pub(super) struct LateLog<'a> {
    home: Option<&'a Arc<sys::SavedFd>>,
    err: Option<Option<RealStderr>>,
}

impl<'a> LateLog<'a> {
    pub(super) const fn new(home: Option<&'a Arc<sys::SavedFd>>) -> Self {
        Self { home, err: None }
    }

    /// A writer of its own on the same real stderr, for what arrives later (`None`: fd 2 is
    /// closed, or cannot be copied).
    pub(super) fn real_stderr(&self) -> Option<RealStderr> {
        RealStderr::of(self.home).ok().flatten()
    }
}

impl Write for LateLog<'_> {
    fn write(&mut self, buf: &[u8]) -> io::Result<usize> {
        if self.err.is_none() {
            self.err = Some(RealStderr::of(self.home)?);
        }
        match self.err.as_mut().and_then(Option::as_mut) {
            Some(err) => err.write(buf),
            None => Ok(buf.len()), // fd 2 closed: nowhere to write
        }
    }

    fn flush(&mut self) -> io::Result<()> {
        Ok(())
    }
}

/// Writes `bytes` to the process's real stderr, also while a capture (running or parked) holds
/// fd 2: a log line written from another thread during a tool call never lands in that call's
/// captured output.
///
/// Where the real stderr is, is decided under the cell's lock and pinned by a private copy of
/// it, so a capture that begins in the meantime cannot take the line; the write itself happens
/// outside the lock (a stderr nobody reads must not block the next capture).
///
/// # Errors
///
/// Copying the descriptor or writing failed.
pub fn write_real_stderr(bytes: &[u8]) -> io::Result<()> {
    match real_stderr()? {
        Some(mut private) => private.write_all(bytes),
        None => Ok(()),
    }
}

/// The process's real stderr (see [`write_real_stderr`]), or `None` when fd 2 is closed:
/// where the labelled copy of a call's output goes, which must not land in the capture of calls
/// still running. While fds 1 and 2 may point elsewhere it is the cell's saved copy, shared
/// (no system call); otherwise a copy of fd 2.
///
/// # Errors
///
/// Copying the descriptor failed.
pub(crate) fn real_stderr() -> io::Result<Option<RealStderr>> {
    RealStderr::of(home_err(&cell().streams))
}

/// A writer on the real stderr (see [`real_stderr`]).
#[derive(Debug)]
pub(crate) struct RealStderr(Arc<sys::SavedFd>);

impl RealStderr {
    /// On the cell's saved stderr (no system call).
    pub(super) fn on(home: &Arc<sys::SavedFd>) -> Self {
        Self(Arc::clone(home))
    }

    /// On `home`, the cell's saved stderr (no system call), or when fd 2 is home (`None`) on a
    /// copy of fd 2; `None` when fd 2 is closed.
    pub(super) fn of(home: Option<&Arc<sys::SavedFd>>) -> io::Result<Option<Self>> {
        Ok(match home {
            Some(home) => Some(Self::on(home)),
            None => sys::try_save(STDERR, false)?.map(|saved| Self(Arc::new(saved))),
        })
    }
}

impl Write for RealStderr {
    fn write(&mut self, buf: &[u8]) -> io::Result<usize> {
        sys::write_fd(self.0.raw(), buf)
    }

    fn flush(&mut self) -> io::Result<()> {
        Ok(())
    }
}
