//! The OS shims: the only code in the crate allowed to use `unsafe` (each block carries a
//! `// SAFETY:` comment). Everything above this module is safe Rust.
//!
//! - `unix` / `windows`: the descriptor operations of the capture cell (`dup`, `dup2`, flushing
//!   the C runtime's buffers, private copies of the protocol streams); `capture_file_windows`:
//!   the capture file on Windows (an append-only open of it for fds 1 and 2).
//! - `outlet_unix`: the locked open file descriptions fds 1 and 2 write through during a
//!   capture, which tell whether any process still holds a capture file.
//! - `wait_unix`: waiting for input that another thread can interrupt (`poll` and a self-pipe),
//!   so the worker can read requests itself while it has nothing to run.
//! - `fatal_unix` / `fatal_windows`: a handler for fatal signals (an unhandled-exception filter
//!   on Windows) that copies the running call's output to the real stderr before the process
//!   dies.
//! - `alarm_linux`: a `timerfd` that gives a lent reading turn back to the reader thread when a
//!   call runs long, and has a worker that waits with parked streams settle them (elsewhere the
//!   turn goes back at once, and streams settle before every wait).
//! - `parent_windows`: a handle to the parent process for the parent-death watch (unix needs no
//!   shim: `std::os::unix::process::parent_id` is safe).
//! - `job_windows`: a job object of the process's own, which counts the processes started
//!   from it, however they were started, and how many still run.

#[cfg(unix)]
mod unix;
#[cfg(unix)]
pub(crate) use unix::*;

#[cfg(unix)]
mod outlet_unix;
#[cfg(unix)]
pub(crate) use outlet_unix::*;

#[cfg(unix)]
mod fatal_unix;
#[cfg(unix)]
pub(crate) use fatal_unix::{
    catch_fatal_signals, dying, publish_capture_start, publish_for_fatal, publish_pipe_for_fatal,
};

#[cfg(unix)]
mod wait_unix;
#[cfg(unix)]
pub(crate) use wait_unix::{Ready, Unparked, Waker, output_pipe, park, wait_any, wait_readable};
#[cfg(target_os = "linux")]
mod alarm_linux;
#[cfg(target_os = "linux")]
pub(crate) use alarm_linux::Alarm;
#[cfg(not(target_os = "linux"))]
mod alarm_none;
#[cfg(not(target_os = "linux"))]
pub(crate) use alarm_none::Alarm;
#[cfg(not(unix))]
mod wait_other;
#[cfg(not(unix))]
pub(crate) use wait_other::{Unparked, Waker, park};

#[cfg(windows)]
mod windows;
#[cfg(windows)]
pub(crate) use windows::*;
#[cfg(windows)]
mod capture_file_windows;
#[cfg(windows)]
pub(crate) use capture_file_windows::*;
#[cfg(windows)]
mod job_windows;
#[cfg(windows)]
pub(crate) use job_windows::{alone_in_job, join_job, processes_started};

#[cfg(windows)]
mod parent_windows;
#[cfg(windows)]
pub(crate) use parent_windows::ParentHandle;

#[cfg(windows)]
mod fatal_windows;
#[cfg(windows)]
pub(crate) use fatal_windows::{catch_fatal_signals, publish_capture_start, publish_for_fatal};

/// Writes `chunk` of a capture through `write` with `label` before every line (`at_line_start`
/// carries over from one chunk to the next): the fatal-exit copy of `fatal_unix` and
/// `fatal_windows`. Allocates nothing, since it runs in a signal handler.
fn write_labelled(
    chunk: &[u8],
    label: &[u8],
    at_line_start: &mut bool,
    write: &mut dyn FnMut(&[u8]),
) {
    let mut rest = chunk;
    while !rest.is_empty() {
        if *at_line_start {
            write(label);
        }
        let end = rest
            .iter()
            .position(|&b| b == b'\n')
            .map_or(rest.len(), |i| i + 1);
        write(&rest[..end]);
        *at_line_start = rest[end - 1] == b'\n';
        rest = &rest[end..];
    }
}

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
