//! A one-shot timer the reader thread can wait on together with its waker: [`Alarm`]
//! (`timerfd`). Arming it wakes nobody; only its expiry does. (Each setting reprograms the
//! timer hardware, which in a virtual machine costs a trap to the hypervisor: callers set it
//! rarely, not around every call.)
#![allow(unsafe_code)]

use std::io;
use std::os::fd::{AsFd, AsRawFd, BorrowedFd, FromRawFd, OwnedFd};
use std::time::Duration;

/// A `timerfd` on the monotonic clock (non-blocking, close-on-exec).
#[derive(Debug)]
pub(crate) struct Alarm(OwnedFd);

impl Alarm {
    pub(crate) fn new() -> io::Result<Self> {
        // SAFETY: timerfd_create takes two integers and returns a new descriptor or -1.
        let fd = unsafe {
            libc::timerfd_create(
                libc::CLOCK_MONOTONIC,
                libc::TFD_CLOEXEC | libc::TFD_NONBLOCK,
            )
        };
        if fd < 0 {
            return Err(io::Error::last_os_error());
        }
        // SAFETY: `fd` was just created by timerfd_create and nothing else owns it.
        Ok(Self(unsafe { OwnedFd::from_raw_fd(fd) }))
    }

    /// Expires once, `after` from now (a zero `after` is taken as 1 ns), replacing any earlier
    /// setting.
    #[allow(
        clippy::unnecessary_fallible_conversions,
        reason = "c_long is 32 bits on some targets"
    )]
    pub(crate) fn arm(&self, after: Duration) {
        let after = after.max(Duration::from_nanos(1));
        let value = libc::itimerspec {
            it_interval: libc::timespec {
                tv_sec: 0,
                tv_nsec: 0,
            },
            it_value: libc::timespec {
                tv_sec: libc::time_t::try_from(after.as_secs()).unwrap_or(libc::time_t::MAX),
                tv_nsec: libc::c_long::try_from(after.subsec_nanos()).unwrap_or(0),
            },
        };
        // SAFETY: `value` is a live, initialised itimerspec; the old value is not asked for
        // (null). Setting a timer cannot fail on a valid timerfd with a valid value.
        let _ = unsafe {
            libc::timerfd_settime(
                self.0.as_raw_fd(),
                0,
                &raw const value,
                std::ptr::null_mut(),
            )
        };
    }

    /// Consumes an expiry so the alarm stops reading as ready.
    pub(crate) fn clear(&self) {
        let mut ticks = [0u8; 8];
        // SAFETY: reads at most 8 bytes into a live 8-byte buffer from a non-blocking timerfd
        // we own; EAGAIN (no expiry) is fine.
        let _ = unsafe { libc::read(self.0.as_raw_fd(), ticks.as_mut_ptr().cast(), 8) };
    }

    pub(crate) fn as_fd(&self) -> BorrowedFd<'_> {
        self.0.as_fd()
    }
}
