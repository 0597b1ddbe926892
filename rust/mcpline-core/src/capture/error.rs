//! The capture layer's error type: [`CaptureError`].

use std::fmt;
use std::io;
use std::path::PathBuf;

use crate::sys::CrtUnavailable;

/// Errors of the capture layer. Every message names the mechanism that failed and the fix.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum CaptureError {
    /// [`Capture::begin`](super::Capture::begin) while another capture is active.
    #[error(
        "capture refused: a capture is already active (captures must not nest or run \
         concurrently); finish or drop the active capture first"
    )]
    AlreadyActive,
    /// [`ProtectedStdio::install`](super::ProtectedStdio::install) while a `ProtectedStdio` is alive.
    #[error(
        "stdio protection refused: the protocol streams are already protected (install \
         ProtectedStdio once; dropping it restores fds 0 and 1)"
    )]
    AlreadyProtected,
    /// [`ProtectedStdio::install`](super::ProtectedStdio::install) while a capture is active.
    #[error(
        "stdio protection refused: a capture is active (install ProtectedStdio before the first \
         capture begins, not inside one)"
    )]
    CaptureActive,
    /// [`ProtectedStdio::install`](super::ProtectedStdio::install) found fd 1 closed: there is no protocol output.
    #[error(
        "cannot protect stdio: fd 1 (the protocol output) is closed; start the server with its \
         standard output connected to the client"
    )]
    StdoutClosed,
    /// The temporary capture file could not be created.
    #[error(
        "cannot create capture file in $TMPDIR={}: {source}; set TMPDIR to a writable directory",
        dir.display()
    )]
    TempFile {
        /// The directory that was tried (`std::env::temp_dir()`).
        dir: PathBuf,
        /// What the OS said.
        source: io::Error,
    },
    /// A descriptor operation (`dup`, `dup2`, opening the null device, ...) failed.
    #[error(
        "cannot {action}: {op} failed: {source}; the process may be out of file descriptors \
         (raise the open-file limit) or a standard descriptor is unusable"
    )]
    Descriptor {
        /// What the cell was doing, e.g. "protect stdio".
        action: &'static str,
        /// The failing operation, e.g. "dup of fd 1".
        op: String,
        /// What the OS or the C runtime said.
        source: io::Error,
    },
    /// The size of the capture file could not be read back.
    #[error(
        "cannot read the size of the capture file: {source}; the temporary directory ($TMPDIR) \
         may have failed or been unmounted"
    )]
    CaptureFile {
        /// What the OS said.
        source: io::Error,
    },
    /// Windows: the UCRT functions could not be resolved from `ucrtbase.dll`.
    #[error(
        "cannot redirect stdio on Windows: {what} could not be resolved from ucrtbase.dll \
         (OS error {code}); mcpline needs the Universal C Runtime that CPython uses (part of \
         Windows 10 and later; install the UCRT update on older systems)"
    )]
    CrtUnavailable {
        /// The DLL or function that was missing.
        what: &'static str,
        /// `GetLastError()` at the failure.
        code: u32,
    },
}

/// Builds a [`CaptureError::Descriptor`] mapper for `map_err`.
pub(super) fn descriptor(
    action: &'static str,
    op: impl fmt::Display,
) -> impl FnOnce(io::Error) -> CaptureError {
    move |source| CaptureError::Descriptor {
        action,
        op: op.to_string(),
        source,
    }
}

impl From<CrtUnavailable> for CaptureError {
    fn from(e: CrtUnavailable) -> Self {
        Self::CrtUnavailable {
            what: e.what,
            code: e.code,
        }
    }
}
