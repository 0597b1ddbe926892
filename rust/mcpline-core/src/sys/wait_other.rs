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
