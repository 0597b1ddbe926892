//! Where no timer can be waited on together with the waker (everywhere but Linux): a turn lent
//! to the worker goes back to the reader thread at once instead.

use std::io;

/// Never constructed here.
#[derive(Debug)]
pub(crate) struct Alarm(());

impl Alarm {
    pub(crate) fn new() -> io::Result<Self> {
        Err(io::ErrorKind::Unsupported.into())
    }

    pub(crate) fn arm(&self, _after: std::time::Duration) {}

    #[cfg_attr(not(unix), allow(dead_code, reason = "parking exists on unix only"))]
    pub(crate) fn clear(&self) {}
}
