//! Windows: a handle to the parent process, waited on to notice that it exited.
//!
//! The parent is found by process id (a Toolhelp snapshot), and process ids are reused: if the
//! parent has already exited, its id may name an unrelated, younger process. So the process
//! opened by that id counts as the parent only if it was created no later than this one
//! ([`is_parent`], comparing `GetProcessTimes` creation times; opening for that needs
//! `PROCESS_QUERY_LIMITED_INFORMATION`). When the times cannot be read the watch stays passive
//! rather than watch a stranger.
//!
//! Only `WAIT_OBJECT_0` from the wait means the parent exited ([`liveness`]): `WAIT_FAILED` (an
//! unusable handle) says nothing about the parent, and the server keeps running.
#![allow(unsafe_code)]

use windows_sys::Win32::Foundation::{
    CloseHandle, FILETIME, HANDLE, INVALID_HANDLE_VALUE, WAIT_OBJECT_0, WAIT_TIMEOUT,
};
use windows_sys::Win32::System::Diagnostics::ToolHelp::{
    CreateToolhelp32Snapshot, PROCESSENTRY32W, Process32FirstW, Process32NextW, TH32CS_SNAPPROCESS,
};
use windows_sys::Win32::System::Threading::{
    GetCurrentProcess, GetCurrentProcessId, GetProcessTimes, OpenProcess,
    PROCESS_QUERY_LIMITED_INFORMATION, PROCESS_SYNCHRONIZE, WaitForSingleObject,
};

/// An open handle to the parent process.
pub(crate) struct ParentHandle(HANDLE);

// SAFETY: a process handle is a kernel object reference usable from any thread.
unsafe impl Send for ParentHandle {}
// SAFETY: WaitForSingleObject on a process handle may be called concurrently.
unsafe impl Sync for ParentHandle {}

/// What a zero-timeout wait on the parent's handle says.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Liveness {
    /// The wait timed out: the parent runs.
    Running,
    /// The handle was signalled: the parent exited.
    Exited,
    /// The wait failed (or returned anything else): nothing is known about the parent.
    Unknown,
}

/// The verdict of `WaitForSingleObject(parent, 0)`'s return value.
pub(crate) const fn liveness(wait_result: u32) -> Liveness {
    match wait_result {
        WAIT_TIMEOUT => Liveness::Running,
        WAIT_OBJECT_0 => Liveness::Exited,
        _ => Liveness::Unknown,
    }
}

/// Whether a process created at `candidate_created` can be the parent of one created at
/// `own_created` (creation times in 100 ns units since 1601): a parent exists before its child.
/// Equal times count as the parent's: both can fall in one tick of the system clock.
pub(crate) const fn is_parent(candidate_created: u64, own_created: u64) -> bool {
    candidate_created <= own_created
}

fn parent_pid() -> Option<u32> {
    // SAFETY: plain Win32 calls; the snapshot handle is checked and closed below, and the entry
    // struct is zero-initialised with its size field set as Process32FirstW requires.
    unsafe {
        let snapshot = CreateToolhelp32Snapshot(TH32CS_SNAPPROCESS, 0);
        if snapshot == INVALID_HANDLE_VALUE {
            return None;
        }
        let me = GetCurrentProcessId();
        let mut entry: PROCESSENTRY32W = std::mem::zeroed();
        entry.dwSize = u32::try_from(std::mem::size_of::<PROCESSENTRY32W>()).unwrap_or(0);
        let mut found = None;
        let mut ok = Process32FirstW(snapshot, &raw mut entry);
        while ok != 0 {
            if entry.th32ProcessID == me {
                found = Some(entry.th32ParentProcessID);
                break;
            }
            ok = Process32NextW(snapshot, &raw mut entry);
        }
        CloseHandle(snapshot);
        found
    }
}

/// The creation time of `process` (opened with at least `PROCESS_QUERY_LIMITED_INFORMATION`).
fn creation_time(process: HANDLE) -> Option<u64> {
    let mut times = [FILETIME {
        dwLowDateTime: 0,
        dwHighDateTime: 0,
    }; 4];
    let [created, exited, kernel, user] = &mut times;
    // SAFETY: GetProcessTimes writes four FILETIMEs into live locals; `process` is a valid
    // handle (the caller's, or the current-process pseudo-handle).
    let ok = unsafe { GetProcessTimes(process, created, exited, kernel, user) };
    (ok != 0).then(|| (u64::from(created.dwHighDateTime) << 32) | u64::from(created.dwLowDateTime))
}

impl ParentHandle {
    /// Opens the parent process for waiting; `None` when it cannot be found or opened (already
    /// gone, or no rights), when its creation time cannot be read, or when the process under
    /// its id is younger than this one (the id was reused): the watch stays passive then.
    pub(crate) fn open() -> Option<Self> {
        let pid = parent_pid()?;
        // SAFETY: OpenProcess has no memory-safety preconditions; a null result is checked.
        let handle = unsafe {
            OpenProcess(
                PROCESS_SYNCHRONIZE | PROCESS_QUERY_LIMITED_INFORMATION,
                0,
                pid,
            )
        };
        if handle.is_null() {
            return None;
        }
        let parent = Self(handle);
        // SAFETY: GetCurrentProcess returns a pseudo-handle that needs no closing.
        let own = creation_time(unsafe { GetCurrentProcess() })?;
        let candidate = creation_time(parent.0)?;
        is_parent(candidate, own).then_some(parent)
    }

    /// False only once the parent has exited (a failed wait counts as still running).
    pub(crate) fn alive(&self) -> bool {
        // SAFETY: self.0 is a valid process handle owned by this struct until Drop.
        let result = unsafe { WaitForSingleObject(self.0, 0) };
        liveness(result) != Liveness::Exited
    }
}

impl Drop for ParentHandle {
    fn drop(&mut self) {
        // SAFETY: the handle was opened by OpenProcess and is closed exactly once.
        unsafe {
            CloseHandle(self.0);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use windows_sys::Win32::Foundation::{WAIT_ABANDONED, WAIT_FAILED};

    #[test]
    fn only_a_signalled_handle_means_the_parent_exited() {
        assert_eq!(liveness(WAIT_TIMEOUT), Liveness::Running);
        assert_eq!(liveness(WAIT_OBJECT_0), Liveness::Exited);
        assert_eq!(liveness(WAIT_FAILED), Liveness::Unknown);
        assert_eq!(liveness(WAIT_ABANDONED), Liveness::Unknown);
    }

    #[test]
    fn a_process_younger_than_us_is_not_our_parent() {
        assert!(is_parent(100, 200), "created before us");
        assert!(is_parent(200, 200), "created in the same clock tick");
        assert!(!is_parent(201, 200), "a reused id: created after us");
    }

    #[test]
    fn a_handle_that_cannot_be_waited_on_does_not_count_as_an_exited_parent() {
        // A closed handle value makes WaitForSingleObject fail (WAIT_FAILED).
        let parent = ParentHandle(std::ptr::null_mut());
        assert!(parent.alive(), "WAIT_FAILED is not a parent's death");
        std::mem::forget(parent);
    }

    /// Run as a child of this test binary: the parent is the test process itself, which runs.
    const CHILD: &str = "MCPLINE_PARENT_WATCH_CHILD";

    #[test]
    fn the_running_parent_is_found_and_alive() {
        if std::env::var_os(CHILD).is_some() {
            let parent = ParentHandle::open().expect("the parent is found and is older");
            assert!(parent.alive(), "the parent runs");
            return;
        }
        let exe = std::env::current_exe().expect("test binary");
        let output = std::process::Command::new(exe)
            .args([
                "--exact",
                "sys::parent_windows::tests::the_running_parent_is_found_and_alive",
                "--test-threads=1",
            ])
            .env(CHILD, "1")
            .output()
            .expect("run the child");
        let stdout = String::from_utf8_lossy(&output.stdout);
        assert!(
            output.status.success() && stdout.contains("1 passed"),
            "child: {}\n{stdout}\n{}",
            output.status,
            String::from_utf8_lossy(&output.stderr)
        );
    }
}
