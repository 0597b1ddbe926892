//! Where interruptible waiting on the protocol input is not implemented (Windows pipes cannot be
//! polled together with an event): no [`Waker`] can be made, so the server keeps reading on its
//! reader thread alone.

use std::io;

/// Never constructed here.
#[derive(Debug)]
pub(crate) struct Waker(());

impl Waker {
    pub(crate) fn new() -> io::Result<Self> {
        Err(io::ErrorKind::Unsupported.into())
    }

    pub(crate) fn wake(&self) {}
}

/// Why [`park`] returned.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
#[allow(
    dead_code,
    reason = "the same variants as where parking is implemented"
)]
pub(crate) enum Unparked {
    Woken,
    Alarm,
}

/// Never called here (no [`Waker`] exists).
pub(crate) fn park(_waker: &Waker, _alarm: Option<&super::Alarm>) -> Unparked {
    Unparked::Woken
}
