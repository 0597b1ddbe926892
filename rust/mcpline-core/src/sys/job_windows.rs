//! Windows: a job object of the process's own, which sees every process started from it.
//!
//! A child inherits the standard handles, so one a call started may hold its capture file and
//! write there after the call ended. Children the language runtime reports are counted by the
//! cell, but nothing reports a C library's own `CreateProcess`, nor a child's children. Every
//! process created by a member of a job is a member too (unless it asks to break away), and the
//! job counts them: `TotalProcesses` grows by one for each process ever started in it, and
//! `ActiveProcesses` is how many still run. So the process joins a job of its own
//! ([`join_job`]) when the cell first needs it, and asks it ([`processes_started`],
//! [`alone_in_job`]): one `QueryInformationJobObject` each.
//!
//! The job sets no limit, except that it lets a child break away (`CREATE_BREAKAWAY_FROM_JOB`),
//! so starting processes works as before (a child that breaks away is not seen). Jobs nest (Windows 8 and later): a host that runs the
//! server in a job of its own keeps it there, and its limits still apply. When the process
//! cannot join (an older system, a job that forbids nesting), both questions have no answer and
//! the cell goes by the processes it is told of.
#![allow(unsafe_code)]

use std::sync::OnceLock;

use windows_sys::Win32::Foundation::{CloseHandle, HANDLE};
use windows_sys::Win32::System::JobObjects::{
    AssignProcessToJobObject, CreateJobObjectW, JOB_OBJECT_LIMIT_BREAKAWAY_OK,
    JOBOBJECT_BASIC_ACCOUNTING_INFORMATION, JOBOBJECT_BASIC_LIMIT_INFORMATION,
    JobObjectBasicAccountingInformation, JobObjectBasicLimitInformation, QueryInformationJobObject,
    SetInformationJobObject,
};
use windows_sys::Win32::System::Threading::GetCurrentProcess;

/// The process's job, once joined, with its process count right after joining.
struct Job {
    handle: HANDLE,
    started_at_join: u32,
}

// SAFETY: a job handle is a kernel object reference usable from any thread, and
// QueryInformationJobObject may be called on it concurrently.
unsafe impl Send for Job {}
// SAFETY: as above; the handle is never closed once the job is joined.
unsafe impl Sync for Job {}

static JOB: OnceLock<Option<Job>> = OnceLock::new();

/// Makes the process a member of a job of its own, once (later calls only look): whether it is
/// one. Processes started before it joined are not counted.
pub(crate) fn join_job() -> bool {
    JOB.get_or_init(create_and_join).is_some()
}

fn create_and_join() -> Option<Job> {
    // SAFETY: plain Win32 calls on a handle created here and checked before use; the limit
    // struct lives across SetInformationJobObject, which reads exactly its size. On failure the
    // job handle is closed and never used again.
    let handle = unsafe {
        let handle = CreateJobObjectW(std::ptr::null(), std::ptr::null());
        if handle.is_null() {
            return None;
        }
        let limits = JOBOBJECT_BASIC_LIMIT_INFORMATION {
            LimitFlags: JOB_OBJECT_LIMIT_BREAKAWAY_OK,
            ..Default::default()
        };
        // Wine does not implement job limits (the call fails there, and breaking away is not
        // implemented either): the process joins all the same.
        SetInformationJobObject(
            handle,
            JobObjectBasicLimitInformation,
            (&raw const limits).cast(),
            size_of_u32::<JOBOBJECT_BASIC_LIMIT_INFORMATION>(),
        );
        if AssignProcessToJobObject(handle, GetCurrentProcess()) == 0 {
            CloseHandle(handle);
            return None;
        }
        handle
    };
    let counts = accounting(handle)?;
    Some(Job {
        handle,
        started_at_join: counts.TotalProcesses,
    })
}

fn accounting(handle: HANDLE) -> Option<JOBOBJECT_BASIC_ACCOUNTING_INFORMATION> {
    let mut info = JOBOBJECT_BASIC_ACCOUNTING_INFORMATION::default();
    // SAFETY: `info` lives across the call, which writes at most the size it is given into it;
    // `handle` is the joined job's, never closed.
    let ok = unsafe {
        QueryInformationJobObject(
            handle,
            JobObjectBasicAccountingInformation,
            (&raw mut info).cast(),
            size_of_u32::<JOBOBJECT_BASIC_ACCOUNTING_INFORMATION>(),
            std::ptr::null_mut(),
        )
    };
    (ok != 0).then_some(info)
}

const fn size_of_u32<T>() -> u32 {
    // Job information structs are a few dozen bytes.
    #[allow(clippy::cast_possible_truncation)]
    let size = std::mem::size_of::<T>() as u32;
    size
}

/// Processes started in the process's job since it joined (by it or by any of them): 0 when it
/// is in none.
pub(crate) fn processes_started() -> u64 {
    JOB.get()
        .and_then(Option::as_ref)
        .and_then(|job| {
            let counts = accounting(job.handle)?;
            Some(u64::from(
                counts.TotalProcesses.saturating_sub(job.started_at_join),
            ))
        })
        .unwrap_or(0)
}

/// Whether no process but this one runs in its job: then none it started, directly or not,
/// can hold a handle it inherited. `false` when that cannot be told.
pub(crate) fn alone_in_job() -> bool {
    JOB.get()
        .and_then(Option::as_ref)
        .and_then(|job| accounting(job.handle))
        .is_some_and(|counts| counts.ActiveProcesses == 1)
}
