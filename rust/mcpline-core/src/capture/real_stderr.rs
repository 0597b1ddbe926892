//! The process's real stderr while fds 1 and 2 may point into a capture: the server's log lines
//! ([`write_real_stderr`]), the labelled copies of calls' output ([`real_stderr`]) and late
//! output ([`LateLog`]) go there, never into a running call's capture.

use std::fs::File;
use std::io::{self, Write};
use std::sync::Arc;

use super::{STDERR, Streams, cell};
use crate::sys;
/// The real stderr for late output, copied (`dup`) on the first write only: `home` is the saved
/// stderr while fds 1 and 2 may point elsewhere, `None` when fd 2 is the real one.
pub(super) struct LateLog<'a> {
    home: Option<&'a sys::SavedFd>,
    file: Option<File>,
}

impl<'a> LateLog<'a> {
    pub(super) const fn new(home: Option<&'a sys::SavedFd>) -> Self {
        Self { home, file: None }
    }
}

impl Write for LateLog<'_> {
    fn write(&mut self, buf: &[u8]) -> io::Result<usize> {
        if self.file.is_none() {
            self.file = Some(match self.home {
                Some(home) => sys::private_file(home)?,
                None => match sys::try_save(STDERR, false)? {
                    Some(saved) => sys::private_file(&saved)?,
                    None => return Ok(buf.len()), // fd 2 closed: nowhere to write
                },
            });
        }
        self.file
            .as_mut()
            .map_or(Ok(buf.len()), |file| file.write(buf))
    }

    fn flush(&mut self) -> io::Result<()> {
        self.file.as_mut().map_or(Ok(()), Write::flush)
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
    let cell = cell();
    Ok(match &cell.streams {
        Streams::Capturing { home, .. }
        | Streams::Parked { home, .. }
        | Streams::Idle { kept: Some(home) } => Some(RealStderr(Arc::clone(&home.err))),
        // fd 2 is home: a copy of it is the real stderr.
        Streams::Idle { kept: None } => {
            sys::try_save(STDERR, false)?.map(|saved| RealStderr(Arc::new(saved)))
        }
    })
}

/// A writer on the real stderr (see [`real_stderr`]).
pub(crate) struct RealStderr(pub(super) Arc<sys::SavedFd>);

impl Write for RealStderr {
    fn write(&mut self, buf: &[u8]) -> io::Result<usize> {
        sys::write_fd(self.0.raw(), buf)
    }

    fn flush(&mut self) -> io::Result<()> {
        Ok(())
    }
}
