//! Fatal exceptions while a call runs, the Windows counterpart of `fatal_unix`: when a tool's
//! code faults (an access violation in a C extension, a stack overflow, an illegal instruction)
//! and nothing handles the exception, what the call had written is copied to the real stderr
//! before the process dies.
//!
//! The filter is the process's top-level one (`SetUnhandledExceptionFilter`): it runs after
//! vectored handlers such as `faulthandler`'s, whose traceback is then in the capture and is
//! copied with the rest. It reads the capture through a handle published beforehand in an
//! atomic, with a buffer on its stack, writes with `WriteFile`, and then hands the exception on:
//! to the filter installed before ours, else to the system (Windows Error Reporting, a debugger),
//! so the process ends as it would have without us.
//!
//! `abort()` (Python's `os.abort()`, a C library's failed assertion) ends the process with no
//! exception the filter would see: it raises the C runtime's `SIGABRT`, so a UCRT signal
//! handler makes the same copy, then calls the handler that was there before ours
//! (`faulthandler`'s traceback) and returns to `abort()`, which ends the process.
#![allow(unsafe_code)]

use std::ffi::c_int;
use std::fs::File;
use std::os::windows::io::AsRawHandle;
use std::sync::OnceLock;
use std::sync::atomic::{AtomicI32, AtomicI64, AtomicIsize, AtomicUsize, Ordering};

use windows_sys::Win32::Foundation::HANDLE;
use windows_sys::Win32::Storage::FileSystem::{ReadFile, WriteFile};
use windows_sys::Win32::System::Diagnostics::Debug::{
    EXCEPTION_CONTINUE_SEARCH, EXCEPTION_POINTERS, LPTOP_LEVEL_EXCEPTION_FILTER,
    SetUnhandledExceptionFilter,
};
use windows_sys::Win32::System::IO::OVERLAPPED;

use super::{SIG_DFL, SIGABRT, SavedFd, crt_signal, point_at};

/// Every line of the copied output starts with this (the label of the other exit paths).
const LABEL: &[u8] = b"[call still running at exit] ";

/// A handle that reads the active capture file, or 0.
static CAPTURE: AtomicIsize = AtomicIsize::new(0);
/// Where the bytes of the active capture begin (see `fatal_unix`).
static START: AtomicI64 = AtomicI64::new(0);
/// A handle of the real stderr while fd 2 may point elsewhere, or 0.
static REAL_STDERR: AtomicIsize = AtomicIsize::new(0);
/// The same as a CRT descriptor, or -1.
static REAL_STDERR_FD: AtomicI32 = AtomicI32::new(-1);
/// The filter installed before ours.
static PREVIOUS: OnceLock<LPTOP_LEVEL_EXCEPTION_FILTER> = OnceLock::new();
/// The UCRT's `SIGABRT` handler before ours, as an integer (`SIG_DFL`: none).
static PREVIOUS_ABORT: AtomicUsize = AtomicUsize::new(SIG_DFL);
/// The UCRT's `SIG_IGN`.
const SIG_IGN: usize = 1;

/// Tells the filter where the running capture (its file, and where its bytes begin) and the
/// real stderr are (`None`: no capture / fd 2 is the real stderr). The handles must stay open
/// until published again.
pub(crate) fn publish_for_fatal(capture: Option<(&File, u64)>, real_stderr: Option<&SavedFd>) {
    publish_capture_start(capture.map_or(0, |(_, start)| start));
    CAPTURE.store(
        capture.map_or(0, |(file, _)| file.as_raw_handle() as isize),
        Ordering::Release,
    );
    let err = real_stderr.and_then(SavedFd::os_handle);
    REAL_STDERR.store(err.map_or(0, |h| h as isize), Ordering::Release);
    REAL_STDERR_FD.store(real_stderr.map_or(-1, SavedFd::raw), Ordering::Release);
}

/// The bytes of the active capture now begin at `start` (the cap moved the rest to the log).
pub(crate) fn publish_capture_start(start: u64) {
    START.store(i64::try_from(start).unwrap_or(i64::MAX), Ordering::Release);
}

/// Installs the filter and the `SIGABRT` handler, once per process (a server calls it when it
/// starts to serve).
pub(crate) fn catch_fatal_signals() {
    PREVIOUS.get_or_init(|| {
        let ours = on_abort as extern "C" fn(c_int) as usize;
        if let Some(previous) = crt_signal(SIGABRT, ours) {
            PREVIOUS_ABORT.store(previous, Ordering::Release);
        }
        // SAFETY: installs a valid `extern "system"` filter and returns the one it replaces,
        // which is kept to be called in turn.
        unsafe { SetUnhandledExceptionFilter(Some(on_fatal)) }
    });
}

/// Writes all of `bytes` to `handle`, giving up on an error.
fn write_all(handle: HANDLE, mut bytes: &[u8]) {
    while !bytes.is_empty() {
        let mut written = 0u32;
        let len = u32::try_from(bytes.len()).unwrap_or(u32::MAX);
        // SAFETY: `bytes` is a live slice of at least `len` bytes that WriteFile only reads;
        // `written` is a live local; no OVERLAPPED (the handle was not opened for overlapped
        // I/O). A bad handle is reported through the return value.
        let ok = unsafe {
            WriteFile(
                handle,
                bytes.as_ptr(),
                len,
                &raw mut written,
                std::ptr::null_mut(),
            )
        };
        if ok == 0 || written == 0 {
            return;
        }
        bytes = &bytes[written as usize..];
    }
}

/// `code` as eight hexadecimal digits, without allocating.
fn hex(code: u32) -> [u8; 10] {
    let mut out = *b"0x00000000";
    for (i, slot) in out[2..].iter_mut().enumerate() {
        let nibble = (code >> (28 - 4 * i)) & 0xF;
        *slot = b"0123456789ABCDEF"[nibble as usize];
    }
    out
}

/// Copies the capture file read through `capture` to `err`, each line labelled.
fn copy_labelled(capture: HANDLE, err: HANDLE) {
    let mut buf = [0u8; 1024];
    let mut offset = u64::try_from(START.load(Ordering::Acquire)).unwrap_or(0);
    let mut at_line_start = true;
    loop {
        // SAFETY: a zeroed OVERLAPPED is a valid "no event" value; only its offset is set.
        let mut at: OVERLAPPED = unsafe { std::mem::zeroed() };
        at.Anonymous.Anonymous.Offset = offset as u32;
        at.Anonymous.Anonymous.OffsetHigh = (offset >> 32) as u32;
        let mut read = 0u32;
        // SAFETY: ReadFile writes at most `buf.len()` bytes into `buf`, a live local, and the
        // count into `read`; `at` gives the offset of a synchronous read and outlives the call.
        let ok = unsafe {
            ReadFile(
                capture,
                buf.as_mut_ptr(),
                buf.len() as u32,
                &raw mut read,
                &raw mut at,
            )
        };
        if ok == 0 || read == 0 {
            break;
        }
        offset += u64::from(read);
        super::write_labelled(
            &buf[..read as usize],
            LABEL,
            &mut at_line_start,
            &mut |bytes| {
                write_all(err, bytes);
            },
        );
    }
    if !at_line_start {
        write_all(err, b"\n");
    }
}

/// Copies the running call's output to the real stderr after `intro`, once: nothing without a
/// running capture, or when the other handler already copied it.
fn salvage(intro: &[&[u8]]) {
    let err = REAL_STDERR.load(Ordering::Acquire) as HANDLE;
    let capture = CAPTURE.swap(0, Ordering::AcqRel) as HANDLE;
    if !err.is_null() && !capture.is_null() {
        for part in intro {
            write_all(err, part);
        }
        copy_labelled(capture, err);
    }
}

unsafe extern "system" fn on_fatal(info: *const EXCEPTION_POINTERS) -> i32 {
    // SAFETY: the system passes valid exception pointers to a top-level filter; both are
    // checked for null before the record is read.
    let code = unsafe {
        info.as_ref()
            .and_then(|info| info.ExceptionRecord.as_ref())
            .map_or(0, |record| record.ExceptionCode as u32)
    };
    salvage(&[
        b"[mcpline] fatal exception ",
        &hex(code),
        b" while a tool call ran; what it had written:\n",
    ]);
    match PREVIOUS.get().copied().flatten() {
        // SAFETY: the filter that was installed before ours, called as the system would have.
        Some(previous) => unsafe { previous(info) },
        None => EXCEPTION_CONTINUE_SEARCH,
    }
}

/// The UCRT's `SIGABRT` handler: `abort()` was called (the UCRT has reset the handler to the
/// default before calling this one). After the copy, fds 1 and 2 point at the real stderr and
/// the handler that was there before ours runs (`faulthandler`'s traceback reaches the log);
/// returning lets `abort()` end the process. A handler installed after ours (`faulthandler`
/// enabled by the tool) runs first and hands the signal on to ours: its traceback is then in the
/// capture, and part of the copy.
extern "C" fn on_abort(signal: c_int) {
    salvage(&[b"[mcpline] abort() while a tool call ran; what it had written:\n"]);
    let err = REAL_STDERR_FD.load(Ordering::Acquire);
    if err >= 0 {
        let _ = point_at(1, err);
        let _ = point_at(2, err);
    }
    let previous = PREVIOUS_ABORT.load(Ordering::Acquire);
    if previous != SIG_DFL && previous != SIG_IGN {
        let _ = crt_signal(signal, previous);
        // SAFETY: `previous` is the handler the UCRT gave back when ours was installed, neither
        // of the special values: a `void (*)(int)`, called as the UCRT would have called it.
        let handler: extern "C" fn(c_int) = unsafe { std::mem::transmute(previous) };
        handler(signal);
    }
}
