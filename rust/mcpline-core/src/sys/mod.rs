//! The OS shims: the only code in the crate allowed to use `unsafe` (each block carries a
//! `// SAFETY:` comment). Everything above this module is safe Rust.
//!
//! - `unix` / `windows`: the descriptor operations of the capture cell (`dup`, `dup2`, flushing
//!   the C runtime's buffers, private copies of the protocol streams).
//! - `parent_windows`: a handle to the parent process for the parent-death watch (unix needs no
//!   shim: `std::os::unix::process::parent_id` is safe).

#[cfg(unix)]
mod unix;
#[cfg(unix)]
pub(crate) use unix::*;

#[cfg(windows)]
mod windows;
#[cfg(windows)]
pub(crate) use windows::*;

#[cfg(windows)]
mod parent_windows;
#[cfg(windows)]
pub(crate) use parent_windows::ParentHandle;

#[cfg(not(any(unix, windows)))]
compile_error!("mcpline supports unix and Windows only");

/// Windows: the C runtime functions the capture cell needs could not be resolved from
/// `ucrtbase.dll` (never on unix).
#[derive(Debug, Clone, Copy)]
pub(crate) struct CrtUnavailable {
    /// The DLL or function that was missing.
    pub(crate) what: &'static str,
    /// `GetLastError()` at the failure.
    pub(crate) code: u32,
}
