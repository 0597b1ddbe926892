//! Windows: fds 1 and 2 stay on the capture file when a call starts a process. Nothing opens
//! them anew there (no `/dev/stderr`), and late output is looked for in the file (see `late`).

use std::fs::File;
use std::io;
use std::sync::Arc;

use super::RealStderr;

/// Never made (see the unix half).
#[derive(Debug)]
pub(super) enum Piped {}

#[allow(
    clippy::unused_self,
    clippy::needless_pass_by_value,
    reason = "same signatures as the unix half"
)]
impl Piped {
    pub(super) fn start(
        _file: &Arc<File>,
        _back: &crate::sys::FileFd<'_>,
        _spawned_before: bool,
        _targets: &[i32],
        _labels: Vec<Arc<str>>,
    ) -> io::Result<Self> {
        Err(io::ErrorKind::Unsupported.into())
    }

    pub(super) fn joined(&mut self, _label: Arc<str>) {
        match *self {}
    }

    pub(super) fn file_inherited(&mut self) {
        match *self {}
    }

    pub(super) const fn spawned_before(&self) -> bool {
        match *self {}
    }

    pub(super) fn settle(&self) {
        match *self {}
    }

    pub(super) fn write_own(
        &self,
        _file: &File,
        _fd: i32,
        _bytes: &[u8],
    ) -> Option<io::Result<(u64, u64, usize)>> {
        match *self {}
    }

    pub(super) fn end(self, _err: RealStderr) {
        match self {}
    }
}
