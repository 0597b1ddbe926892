//! Windows: a handle to the parent process, waited on to notice that it exited.
#![allow(unsafe_code)]

use windows_sys::Win32::Foundation::{CloseHandle, HANDLE, INVALID_HANDLE_VALUE, WAIT_TIMEOUT};
use windows_sys::Win32::System::Diagnostics::ToolHelp::{
    CreateToolhelp32Snapshot, PROCESSENTRY32W, Process32FirstW, Process32NextW, TH32CS_SNAPPROCESS,
};
use windows_sys::Win32::System::Threading::{
    GetCurrentProcessId, OpenProcess, PROCESS_SYNCHRONIZE, WaitForSingleObject,
};

/// An open handle to the parent process.
pub(crate) struct ParentHandle(HANDLE);

// SAFETY: a process handle is a kernel object reference usable from any thread.
unsafe impl Send for ParentHandle {}
// SAFETY: WaitForSingleObject on a process handle may be called concurrently.
unsafe impl Sync for ParentHandle {}

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

impl ParentHandle {
    /// Opens the parent process for waiting; `None` when it cannot be found or opened (already
    /// gone, or no rights), in which case the watch stays passive.
    pub(crate) fn open() -> Option<Self> {
        let pid = parent_pid()?;
        // SAFETY: OpenProcess has no memory-safety preconditions; a null result is checked.
        let handle = unsafe { OpenProcess(PROCESS_SYNCHRONIZE, 0, pid) };
        (!handle.is_null()).then_some(Self(handle))
    }

    /// True while the parent has not exited.
    pub(crate) fn alive(&self) -> bool {
        // SAFETY: self.0 is a valid process handle owned by this struct until Drop.
        unsafe { WaitForSingleObject(self.0, 0) == WAIT_TIMEOUT }
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
