//! Waiting for input that another thread can interrupt: a self-pipe [`Waker`] and
//! [`wait_readable`] (`poll` on the input and the waker together); [`output_pipe`] and
//! [`wait_any`] for the pipe a call's children write through (see `capture::piped`).
#![allow(unsafe_code)]

use std::io;
use std::os::fd::{AsRawFd, BorrowedFd, FromRawFd, OwnedFd, RawFd};
use std::time::Duration;

/// A self-pipe: [`Waker::wake`] makes a [`wait_readable`] on it return [`Ready::Woken`].
#[derive(Debug)]
pub(crate) struct Waker {
    read: OwnedFd,
    write: OwnedFd,
}

/// Why [`wait_readable`] returned.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Ready {
    /// The input has bytes (or its end) to read.
    Input,
    /// The waker was woken (checked first: a woken waiter yields even if input is ready).
    Woken,
    /// The timeout passed, or a signal interrupted the wait.
    TimedOut,
}

/// Sets `O_NONBLOCK` and `FD_CLOEXEC` on a descriptor we own.
fn nonblocking_cloexec(fd: RawFd) -> io::Result<()> {
    // SAFETY: F_GETFL/F_SETFL and F_SETFD read and set flags of `fd`, a descriptor the caller
    // owns; no memory is passed.
    unsafe {
        let flags = libc::fcntl(fd, libc::F_GETFL);
        if flags < 0
            || libc::fcntl(fd, libc::F_SETFL, flags | libc::O_NONBLOCK) < 0
            || libc::fcntl(fd, libc::F_SETFD, libc::FD_CLOEXEC) < 0
        {
            return Err(io::Error::last_os_error());
        }
    }
    Ok(())
}

/// A new pipe, both ends close-on-exec (at once on Linux, `pipe2`; elsewhere just after, so a
/// process another thread starts in between may inherit them) and numbered 3 or above: a
/// closed standard descriptor must never end up holding one.
fn new_pipe() -> io::Result<(OwnedFd, OwnedFd)> {
    let mut fds = [0 as RawFd; 2];
    // SAFETY: `pipe2` writes two descriptors into the two-element array it is given.
    #[cfg(target_os = "linux")]
    let made = unsafe { libc::pipe2(fds.as_mut_ptr(), libc::O_CLOEXEC) };
    // SAFETY: `pipe` writes two descriptors into the two-element array it is given.
    #[cfg(not(target_os = "linux"))]
    let made = unsafe { libc::pipe(fds.as_mut_ptr()) };
    if made < 0 {
        return Err(io::Error::last_os_error());
    }
    // SAFETY: both descriptors were just created and nothing else owns them.
    let (read, write) = unsafe { (OwnedFd::from_raw_fd(fds[0]), OwnedFd::from_raw_fd(fds[1])) };
    Ok((above_standard(read)?, above_standard(write)?))
}

/// `fd` itself if it is numbered 3 or above, else a close-on-exec copy that is (and `fd` is
/// closed, leaving its standard number free as it was).
fn above_standard(fd: OwnedFd) -> io::Result<OwnedFd> {
    if fd.as_raw_fd() > 2 {
        return Ok(fd);
    }
    // SAFETY: F_DUPFD_CLOEXEC reads only the descriptor number and creates a new one; no
    // memory is passed.
    let new = unsafe { libc::fcntl(fd.as_raw_fd(), libc::F_DUPFD_CLOEXEC, 3) };
    if new < 0 {
        return Err(io::Error::last_os_error());
    }
    // SAFETY: `new` was just created by fcntl and nothing else owns it.
    Ok(unsafe { OwnedFd::from_raw_fd(new) })
}

impl Waker {
    /// A fresh self-pipe (both ends non-blocking and close-on-exec).
    pub(crate) fn new() -> io::Result<Self> {
        let (read, write) = new_pipe()?;
        nonblocking_cloexec(read.as_raw_fd())?;
        nonblocking_cloexec(write.as_raw_fd())?;
        Ok(Self { read, write })
    }

    /// Wakes the current (or the next) waiter. Never blocks: a full pipe is awake already.
    pub(crate) fn wake(&self) {
        // SAFETY: writes one byte from a live one-byte buffer to a descriptor we own.
        let _ = unsafe { libc::write(self.write.as_raw_fd(), [1u8].as_ptr().cast(), 1) };
    }

    /// Consumes pending wake-ups.
    pub(crate) fn drain(&self) {
        let mut buf = [0u8; 64];
        loop {
            // SAFETY: reads at most `buf.len()` bytes into a live buffer of that size from a
            // non-blocking descriptor we own.
            let n =
                unsafe { libc::read(self.read.as_raw_fd(), buf.as_mut_ptr().cast(), buf.len()) };
            if usize::try_from(n).map_or(true, |n| n < buf.len()) {
                return;
            }
        }
    }
}

/// Waits until `input` is readable, `waker` is woken, or `timeout` passes (forever when `None`).
/// Without an input, waits for the waker (or the timeout) alone.
///
/// # Errors
/// `poll` failed for a reason other than a signal.
pub(crate) fn wait_readable(
    input: Option<BorrowedFd<'_>>,
    waker: &Waker,
    timeout: Option<Duration>,
) -> io::Result<Ready> {
    let mut fds = [
        libc::pollfd {
            fd: waker.read.as_raw_fd(),
            events: libc::POLLIN,
            revents: 0,
        },
        libc::pollfd {
            // A negative descriptor is ignored by poll.
            fd: input.map_or(-1, |fd| fd.as_raw_fd()),
            events: libc::POLLIN,
            revents: 0,
        },
    ];
    // Whole milliseconds, rounded up so that a short wait is not a busy look (zero stays zero).
    let millis = timeout.map_or(-1, |d| {
        let ms = d.as_millis() + u128::from(d.subsec_nanos() % 1_000_000 != 0);
        libc::c_int::try_from(ms).unwrap_or(libc::c_int::MAX)
    });
    // SAFETY: `fds` is a live array of two initialised pollfd structs and its length is passed.
    let n = unsafe { libc::poll(fds.as_mut_ptr(), 2, millis) };
    if n < 0 {
        let error = io::Error::last_os_error();
        return if error.kind() == io::ErrorKind::Interrupted {
            Ok(Ready::TimedOut)
        } else {
            Err(error)
        };
    }
    if fds[0].revents != 0 {
        Ok(Ready::Woken)
    } else if fds[1].revents != 0 {
        // POLLIN, POLLHUP (end of input) or POLLERR: a read will not block and will tell.
        Ok(Ready::Input)
    } else {
        Ok(Ready::TimedOut)
    }
}

/// A pipe for fds 1 and 2 to point at: the reading end non-blocking, both ends close-on-exec
/// (the `dup2` copies of the writing end on fds 1 and 2 are inherited) and numbered 3 or above.
pub(crate) fn output_pipe() -> io::Result<(std::fs::File, OwnedFd)> {
    let (read, write) = new_pipe()?;
    nonblocking_cloexec(read.as_raw_fd())?;
    // SAFETY: F_SETFD reads only the descriptor number; no memory is passed.
    #[cfg(not(target_os = "linux"))]
    if unsafe { libc::fcntl(write.as_raw_fd(), libc::F_SETFD, libc::FD_CLOEXEC) } < 0 {
        return Err(io::Error::last_os_error());
    }
    Ok((std::fs::File::from(read), write))
}

/// Waits until `waker` is woken or some of `inputs` are readable (or at their end), and
/// answers the indexes of those. Woken: the waker is drained and the answer may be empty.
///
/// # Errors
/// `poll` failed for a reason other than a signal.
pub(crate) fn wait_any(inputs: &[BorrowedFd<'_>], waker: &Waker) -> io::Result<Vec<usize>> {
    let mut fds: Vec<libc::pollfd> = std::iter::once(waker.read.as_raw_fd())
        .chain(inputs.iter().map(AsRawFd::as_raw_fd))
        .map(|fd| libc::pollfd {
            fd,
            events: libc::POLLIN,
            revents: 0,
        })
        .collect();
    let count = libc::nfds_t::try_from(fds.len())
        .map_err(|_| io::Error::new(io::ErrorKind::InvalidInput, "too many descriptors"))?;
    // SAFETY: `fds` is a live vector of `count` initialised pollfd structs.
    if unsafe { libc::poll(fds.as_mut_ptr(), count, -1) } < 0 {
        let error = io::Error::last_os_error();
        return if error.kind() == io::ErrorKind::Interrupted {
            Ok(Vec::new())
        } else {
            Err(error)
        };
    }
    if fds[0].revents != 0 {
        waker.drain();
    }
    Ok(fds[1..]
        .iter()
        .enumerate()
        .filter(|(_, fd)| fd.revents != 0)
        .map(|(index, _)| index)
        .collect())
}

/// Why [`park`] returned.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Unparked {
    /// The waker was woken (and drained).
    Woken,
    /// The alarm expired (and was cleared), or a signal interrupted the wait.
    Alarm,
}

#[cfg(target_os = "linux")]
fn alarm_fd(alarm: Option<&super::Alarm>) -> Option<BorrowedFd<'_>> {
    alarm.map(super::Alarm::as_fd)
}

#[cfg(not(target_os = "linux"))]
fn alarm_fd(_alarm: Option<&super::Alarm>) -> Option<BorrowedFd<'_>> {
    None
}

/// Waits for `waker`, or for `alarm` to expire.
pub(crate) fn park(waker: &Waker, alarm: Option<&super::Alarm>) -> Unparked {
    match wait_readable(alarm_fd(alarm), waker, None) {
        Ok(Ready::Woken) => {
            waker.drain();
            Unparked::Woken
        }
        Ok(Ready::Input | Ready::TimedOut) | Err(_) => {
            if let Some(alarm) = alarm {
                alarm.clear();
            }
            Unparked::Alarm
        }
    }
}
