//! The Windows half of the capture cell: the C runtime's `_dup`/`_dup2` plus `SetStdHandle`.
//!
//! Two C runtimes are a trap. CPython (and every C extension it loads) uses the Universal CRT,
//! `ucrtbase.dll`; a `*-windows-gnu` Rust build links mingw's `msvcrt.dll`. A `_dup2` in one
//! runtime closes the OS handle that the other runtime's fd 2 still wraps. So every CRT call here
//! goes to the UCRT, resolved at run time with `GetModuleHandleW`/`LoadLibraryW` and
//! `GetProcAddress`: right whatever runtime this crate was linked against (and never with
//! `+crt-static`).
//!
//! After each `_dup2` onto fd 0, 1 or 2, `SetStdHandle` is called with the handle the CRT now
//! holds (`_get_osfhandle(fd)`): Win32 writers (Rust's std, `WriteFile(GetStdHandle(..))`, child
//! processes that inherit the standard handles) follow that slot, and the real UCRT updates it
//! only for console programs.
//!
//! Every CRT call runs with this thread's invalid-parameter handler silenced ([`Session`]): the
//! UCRT's default handler terminates the process on a closed descriptor, where we want an error.
//!
//! # Handles the cell keeps for itself
//!
//! Saved copies of the standard descriptors are made non-inheritable from the start
//! (`DuplicateHandle` with `bInheritHandle = FALSE`, then `_open_osfhandle`), never with `_dup`,
//! whose copy is inheritable until its flag is cleared: a `CreateProcess` with inheritance on
//! another thread in between would hand the protocol stdout to a child, and the host would then
//! not see end-of-file until that child exits. Like the standard descriptors CPython sets up,
//! the copies are in binary mode, so a standard descriptor restored from one is in binary mode
//! too.
//!
//! # The process's own standard handles
//!
//! `_dup2` onto a descriptor closes the OS handle it held. For fds 1 and 2 that is the handle in
//! the process's standard slot, which other code may have cached (`GetStdHandle` in ctypes code,
//! colorama, C extensions on another C runtime, `CPython`'s console writers): it would write to
//! a closed handle, or to whatever object reuses the value. So before the cell first points fd 1
//! or fd 2 elsewhere, the handle in its standard slot (when the CRT descriptor holds that very
//! handle) is marked `HANDLE_FLAG_PROTECT_FROM_CLOSE` and kept open for the life of the process
//! ([`KEPT`]). The UCRT's `_dup2` ignores the failed `CloseHandle` ("an error simply means that
//! the OS handle value may remain bound"; wine does the same) and installs the new handle.
//! Restoring puts the standard slot back at the kept handle, so a cached value stays valid and
//! equal to `GetStdHandle`, and writes to it go where the descriptor goes again; during a capture
//! they go to the real stream, not into the capture. The CRT descriptor itself holds a duplicate
//! after a restore (the CRT cannot adopt a given handle onto a given descriptor).
//!
//! Not kept: the original stdout while [`ProtectedStdio`](crate::ProtectedStdio) is installed.
//! It is the protocol stream, and a handle cached before serving must not write into it, so
//! [`release_std_handle`] closes it when the protocol takes stdout (the behaviour of plain
//! `_dup2`). Under a debugger, the UCRT's attempt to close a protected handle raises a
//! first-chance `STATUS_HANDLE_NOT_CLOSABLE` exception, which the debugger continues.
#![allow(unsafe_code)]

use std::ffi::{c_int, c_void};
use std::fs::File;
use std::io;
use std::marker::PhantomData;
use std::os::windows::io::{FromRawHandle, IntoRawHandle, OwnedHandle};
use std::sync::OnceLock;
use std::sync::atomic::{AtomicIsize, Ordering};

use windows_sys::Win32::Foundation::{
    CloseHandle, DUPLICATE_SAME_ACCESS, DuplicateHandle, GetLastError, HANDLE, HANDLE_FLAG_INHERIT,
    HANDLE_FLAG_PROTECT_FROM_CLOSE, HMODULE, INVALID_HANDLE_VALUE, SetHandleInformation,
};
use windows_sys::Win32::System::Console::{
    GetStdHandle, STD_ERROR_HANDLE, STD_HANDLE, STD_INPUT_HANDLE, STD_OUTPUT_HANDLE, SetStdHandle,
};
use windows_sys::Win32::System::LibraryLoader::{GetModuleHandleW, GetProcAddress, LoadLibraryW};
use windows_sys::Win32::System::Threading::GetCurrentProcess;

use super::CrtUnavailable;

/// `_invalid_parameter_handler` from `<stdlib.h>`.
type InvalidParameterHandler = unsafe extern "C" fn(*const u16, *const u16, *const u16, u32, usize);

/// The UCRT functions used here, with their C prototypes from `<io.h>`, `<stdio.h>`,
/// `<errno.h>` and `<stdlib.h>`.
struct Crt {
    dup2: unsafe extern "C" fn(c_int, c_int) -> c_int,
    close: unsafe extern "C" fn(c_int) -> c_int,
    write: unsafe extern "C" fn(c_int, *const c_void, u32) -> c_int,
    get_osfhandle: unsafe extern "C" fn(c_int) -> isize,
    open_osfhandle: unsafe extern "C" fn(isize, c_int) -> c_int,
    fflush: unsafe extern "C" fn(*mut c_void) -> c_int,
    acrt_iob_func: unsafe extern "C" fn(u32) -> *mut c_void,
    errno: unsafe extern "C" fn() -> *mut c_int,
    set_thread_local_invalid_parameter_handler:
        unsafe extern "C" fn(Option<InvalidParameterHandler>) -> Option<InvalidParameterHandler>,
    /// `signal`, with handler values as integers (`SIG_DFL` 0, `SIG_IGN` 1, `SIG_ERR` -1).
    signal: unsafe extern "C" fn(c_int, usize) -> usize,
}

/// Why the UCRT could not be resolved: the missing piece and `GetLastError()`.
#[derive(Clone, Copy, Debug)]
struct LoadError {
    what: &'static str,
    code: u32,
}

static CRT: OnceLock<Result<Crt, LoadError>> = OnceLock::new();

/// `_get_osfhandle`'s "no handle" values: -1 (closed) and -2 (`_NO_CONSOLE_FILENO`, what the UCRT
/// gives the standard descriptors of a program started without them, e.g. `pythonw.exe`).
const NO_HANDLE: [isize; 2] = [-1, -2];

/// The standard handles kept open for the life of the process, indexed by descriptor (0: none;
/// fd 0's is never kept), see the module docs. Written under the cell's lock.
static KEPT: [AtomicIsize; 3] = [const { AtomicIsize::new(0) }; 3];

/// The Win32 standard slot of a standard descriptor.
const fn std_slot(fd: c_int) -> Option<STD_HANDLE> {
    match fd {
        0 => Some(STD_INPUT_HANDLE),
        1 => Some(STD_OUTPUT_HANDLE),
        2 => Some(STD_ERROR_HANDLE),
        _ => None,
    }
}

/// The handle in the standard slot `slot`, if it holds one.
fn std_handle(slot: STD_HANDLE) -> Option<HANDLE> {
    // SAFETY: GetStdHandle reads a value from the process parameters; no memory is passed.
    let handle = unsafe { GetStdHandle(slot) };
    (!handle.is_null() && handle != INVALID_HANDLE_VALUE).then_some(handle)
}

fn last_error() -> u32 {
    // SAFETY: GetLastError reads this thread's last-error value; it has no preconditions.
    unsafe { GetLastError() }
}

fn load() -> Result<Crt, LoadError> {
    let name: Vec<u16> = "ucrtbase.dll".encode_utf16().chain(Some(0)).collect();
    // SAFETY: `name` is a NUL-terminated UTF-16 string that outlives the call.
    let mut module = unsafe { GetModuleHandleW(name.as_ptr()) };
    if module.is_null() {
        // SAFETY: as above. The module is never freed: the resolved pointers are kept for the
        // life of the process.
        module = unsafe { LoadLibraryW(name.as_ptr()) };
    }
    if module.is_null() {
        return Err(LoadError {
            what: "ucrtbase.dll",
            code: last_error(),
        });
    }
    // SAFETY (all calls below): each name is a UCRT export and each field type is the function
    // pointer type of that export's C prototype; `module` is loaded and stays loaded.
    unsafe {
        Ok(Crt {
            dup2: symbol(module, "_dup2\0")?,
            close: symbol(module, "_close\0")?,
            write: symbol(module, "_write\0")?,
            get_osfhandle: symbol(module, "_get_osfhandle\0")?,
            open_osfhandle: symbol(module, "_open_osfhandle\0")?,
            fflush: symbol(module, "fflush\0")?,
            acrt_iob_func: symbol(module, "__acrt_iob_func\0")?,
            errno: symbol(module, "_errno\0")?,
            set_thread_local_invalid_parameter_handler: symbol(
                module,
                "_set_thread_local_invalid_parameter_handler\0",
            )?,
            signal: symbol(module, "signal\0")?,
        })
    }
}

/// Resolves export `name` (NUL-terminated) of `module` as a function pointer of type `T`.
///
/// # Safety
///
/// `module` must be a loaded module handle, and `T` must be an `extern "C"` function pointer
/// type matching the C prototype of the export `name`.
unsafe fn symbol<T: Copy>(module: HMODULE, name: &'static str) -> Result<T, LoadError> {
    type Proc = unsafe extern "system" fn() -> isize;
    const { assert!(size_of::<T>() == size_of::<Proc>()) };
    debug_assert!(
        name.ends_with('\0'),
        "export names are passed NUL-terminated"
    );
    // SAFETY: `module` is loaded (caller) and `name` is a NUL-terminated ASCII string.
    let Some(proc) = (unsafe { GetProcAddress(module, name.as_ptr()) }) else {
        return Err(LoadError {
            what: name.trim_end_matches('\0'),
            code: last_error(),
        });
    };
    // SAFETY: `T` is a function pointer type of the same size (asserted above) whose prototype
    // is the export's real one (caller); a function pointer may be reinterpreted that way.
    Ok(unsafe { std::mem::transmute_copy::<Proc, T>(&proc) })
}

/// Resolves the UCRT once per process.
pub(crate) fn init() -> Result<(), CrtUnavailable> {
    match CRT.get_or_init(load) {
        Ok(_) => Ok(()),
        Err(error) => Err(CrtUnavailable {
            what: error.what,
            code: error.code,
        }),
    }
}

/// Does nothing: the invalid-parameter handler installed while the CRT is called.
extern "C" fn ignore_invalid_parameter(
    _expression: *const u16,
    _function: *const u16,
    _file: *const u16,
    _line: u32,
    _reserved: usize,
) {
}

/// A stretch of CRT calls on this thread with the invalid-parameter handler silenced, so that
/// a closed or invalid descriptor is an error return, not a process abort. Restores the previous
/// handler when dropped. Not `Send`: the handler is per thread.
pub(super) struct Session {
    crt: &'static Crt,
    previous: Option<InvalidParameterHandler>,
    _same_thread: PhantomData<*const ()>,
}

impl Session {
    pub(super) fn open() -> io::Result<Self> {
        let crt = match CRT.get_or_init(load) {
            Ok(crt) => crt,
            Err(error) => {
                return Err(io::Error::other(format!(
                    "{} not resolved from ucrtbase.dll (OS error {})",
                    error.what, error.code
                )));
            }
        };
        // SAFETY: installs a valid handler for this thread only; Drop reinstates the previous
        // one on the same thread (Session is not Send).
        let previous = unsafe {
            (crt.set_thread_local_invalid_parameter_handler)(Some(ignore_invalid_parameter))
        };
        Ok(Self {
            crt,
            previous,
            _same_thread: PhantomData,
        })
    }

    /// An error carrying the CRT's `errno` after `call` failed.
    fn error(&self, call: &str) -> io::Error {
        // SAFETY: `_errno` returns a pointer to this thread's errno, valid while the thread
        // lives; it is read at once.
        let errno = unsafe { *(self.crt.errno)() };
        let meaning = match errno {
            9 => "bad file descriptor",
            12 => "not enough memory",
            13 => "permission denied",
            22 => "invalid argument",
            24 => "too many open files",
            _ => "C runtime error",
        };
        io::Error::other(format!("{call}: {meaning} (errno {errno})"))
    }

    /// The OS handle behind `fd`, or `None` if `fd` is closed or has no handle.
    pub(super) fn os_handle(&self, fd: c_int) -> Option<HANDLE> {
        // SAFETY: _get_osfhandle reads the CRT's descriptor table; a closed or out-of-range `fd`
        // returns -1 (the invalid-parameter handler is silenced by this session).
        let handle = unsafe { (self.crt.get_osfhandle)(fd) };
        (!NO_HANDLE.contains(&handle)).then_some(handle as HANDLE)
    }

    /// A descriptor numbered 3 or above holding a new non-inheritable duplicate of `handle`.
    ///
    /// `_open_osfhandle` takes the lowest free descriptor, which can be a closed standard one:
    /// copies landing there are held until one numbered 3 or above comes out, then closed again.
    fn save_copy(&self, handle: HANDLE) -> io::Result<c_int> {
        let mut held = Vec::new();
        let copy = loop {
            match duplicate(handle).and_then(|copy| self.adopt(copy)) {
                Ok(fd) if fd <= 2 => held.push(fd),
                other => break other,
            }
        };
        for low in held {
            self.close(low);
        }
        copy
    }

    /// `_dup2(source, target)`, then points the Win32 standard slot of `target` at the handle
    /// the CRT now holds for it.
    pub(super) fn dup2(&self, source: c_int, target: c_int) -> io::Result<()> {
        self.dup2_only(source, target)?;
        self.sync_std_handle(target)
    }

    /// `_dup2(source, target)` alone.
    fn dup2_only(&self, source: c_int, target: c_int) -> io::Result<()> {
        // SAFETY: _dup2 edits the CRT's table (closing what `target` held); failures are return
        // values. `target` is a standard descriptor that no Rust object owns.
        if unsafe { (self.crt.dup2)(source, target) } != 0 {
            return Err(self.error("_dup2"));
        }
        Ok(())
    }

    /// `SetStdHandle(slot of fd, _get_osfhandle(fd))` for a standard descriptor.
    fn sync_std_handle(&self, fd: c_int) -> io::Result<()> {
        if std_slot(fd).is_none() {
            return Ok(());
        }
        let Some(handle) = self.os_handle(fd) else {
            return Err(io::Error::other(format!("fd {fd} has no OS handle")));
        };
        set_std_handle(fd, handle)
    }

    /// Sets or clears the inherit flag of the handle behind `fd` (best effort: old console
    /// pseudo-handles refuse it, and the flag only limits what children receive).
    fn set_inheritable(&self, fd: c_int, inheritable: bool) {
        if let Some(handle) = self.os_handle(fd) {
            let flags = if inheritable { HANDLE_FLAG_INHERIT } else { 0 };
            // SAFETY: changes a flag of a handle the CRT's `fd` owns and keeps open.
            let _ = unsafe { SetHandleInformation(handle, HANDLE_FLAG_INHERIT, flags) };
        }
    }

    /// `_open_osfhandle`: a binary-mode descriptor that takes ownership of `handle`.
    fn adopt(&self, handle: OwnedHandle) -> io::Result<c_int> {
        self.adopt_with(handle, 0)
    }

    /// `_open_osfhandle` with `flags` (binary mode unless they say otherwise).
    pub(super) fn adopt_with(&self, handle: OwnedHandle, flags: c_int) -> io::Result<c_int> {
        let raw = handle.into_raw_handle();
        // SAFETY: on success the CRT owns `raw` (closing the descriptor closes it). Without
        // `_O_TEXT` the mode is binary, like the standard descriptors CPython sets up.
        let fd = unsafe { (self.crt.open_osfhandle)(raw as isize, flags) };
        if fd < 0 {
            let error = self.error("_open_osfhandle");
            // SAFETY: on failure the CRT did not take `raw`, which we still own; close it.
            drop(unsafe { OwnedHandle::from_raw_handle(raw) });
            return Err(error);
        }
        Ok(fd)
    }

    /// `_close(fd)`; errors are ignored (the descriptor is gone either way).
    pub(super) fn close(&self, fd: c_int) {
        // SAFETY: closes a descriptor this module created and still owns.
        let _ = unsafe { (self.crt.close)(fd) };
    }
}

impl Drop for Session {
    fn drop(&mut self) {
        // SAFETY: reinstates this thread's previous handler (possibly none) on the same thread.
        let _ = unsafe { (self.crt.set_thread_local_invalid_parameter_handler)(self.previous) };
    }
}

/// `SetStdHandle(slot of fd, handle)`. The caller keeps `handle` open while it is in the slot
/// (the CRT's own handle for `fd`, or a kept one).
fn set_std_handle(fd: c_int, handle: HANDLE) -> io::Result<()> {
    let Some(slot) = std_slot(fd) else {
        return Ok(());
    };
    // SAFETY: SetStdHandle stores a handle value in the process parameters; no memory is passed.
    if unsafe { SetStdHandle(slot, handle) } == 0 {
        return Err(io::Error::last_os_error());
    }
    Ok(())
}

/// Keeps the handle in the standard slot of fd 1 or 2 open across the cell's `_dup2` onto `fd`
/// (see the module docs) and returns it; `None` for fd 0, an empty slot, or a slot that does not
/// hold the CRT's handle `crt_handle` (then the `_dup2` does not close it).
fn keep_std_handle(fd: c_int, crt_handle: HANDLE) -> Option<isize> {
    let kept = KEPT.get(usize::try_from(fd).ok().filter(|&fd| fd > 0)?)?;
    let current = std_handle(std_slot(fd)?)?;
    if kept.load(Ordering::Acquire) == current as isize {
        return Some(current as isize);
    }
    if current != crt_handle {
        return None;
    }
    // SAFETY: sets a flag of the handle the CRT's `fd` owns and keeps open; from now on it is
    // never closed (the CRT's attempt fails and is ignored), which is the point.
    let protected = unsafe {
        SetHandleInformation(
            current,
            HANDLE_FLAG_PROTECT_FROM_CLOSE,
            HANDLE_FLAG_PROTECT_FROM_CLOSE,
        )
    };
    if protected == 0 {
        return None;
    }
    kept.store(current as isize, Ordering::Release);
    Some(current as isize)
}

/// Stops keeping the standard handle of `fd` open (see the module docs) and closes it, unless
/// it is still kept for the other stream or in use by a standard slot or descriptor (stdout and
/// stderr can share one handle). Used when stdout becomes the protocol stream, which a cached
/// handle must not write into.
pub(crate) fn release_std_handle(fd: c_int) {
    let Some(kept) = usize::try_from(fd).ok().and_then(|fd| KEPT.get(fd)) else {
        return;
    };
    let handle = kept.swap(0, Ordering::AcqRel) as HANDLE;
    if handle.is_null()
        || KEPT
            .iter()
            .any(|k| k.load(Ordering::Acquire) == handle as isize)
    {
        return;
    }
    // SAFETY: `handle` was kept open by `keep_std_handle` and nothing else owns it: the CRT
    // dropped it at its failed close. Clearing the flag lets it be closed.
    unsafe { SetHandleInformation(handle, HANDLE_FLAG_PROTECT_FROM_CLOSE, 0) };
    let session = Session::open().ok();
    let in_use = (0..=2).any(|std_fd| {
        std_slot(std_fd).and_then(std_handle) == Some(handle)
            || session.as_ref().and_then(|s| s.os_handle(std_fd)) == Some(handle)
    });
    if !in_use {
        // SAFETY: closes the released handle once (it was swapped out of KEPT above, and no
        // standard slot or descriptor holds it).
        unsafe { CloseHandle(handle) };
    }
}

/// A non-inheritable duplicate of `handle`, owned by the caller.
fn duplicate(handle: HANDLE) -> io::Result<OwnedHandle> {
    let mut copy: HANDLE = std::ptr::null_mut();
    // SAFETY: DuplicateHandle writes one handle into `copy`, a live local. `handle` is kept open
    // by its owner (the CRT or a File) for the duration of the call. GetCurrentProcess returns a
    // pseudo-handle that needs no closing.
    let ok = unsafe {
        let process = GetCurrentProcess();
        DuplicateHandle(
            process,
            handle,
            process,
            &mut copy,
            0,
            0,
            DUPLICATE_SAME_ACCESS,
        )
    };
    if ok == 0 {
        return Err(io::Error::last_os_error());
    }
    // SAFETY: `copy` is a fresh handle that only we own.
    Ok(unsafe { OwnedHandle::from_raw_handle(copy) })
}

/// Flushes the UCRT's `stdout` and `stderr` (the runtime CPython's C code writes with). Not
/// `fflush(NULL)`, which would wait for another thread's C read (see the unix half).
pub(crate) fn flush_c_stdio() {
    if let Ok(crt) = CRT.get_or_init(load) {
        for index in [1, 2] {
            // SAFETY: `__acrt_iob_func(1)`/`(2)` return the UCRT's own `stdout`/`stderr`, valid
            // for the life of the process; fflush locks that stream itself.
            let _ = unsafe { (crt.fflush)((crt.acrt_iob_func)(index)) };
        }
    }
}

/// `SIGABRT` in the UCRT's numbering.
pub(crate) const SIGABRT: c_int = 22;
/// The UCRT's `SIG_DFL` and `SIG_ERR` handler values.
pub(crate) const SIG_DFL: usize = 0;
const SIG_ERR: usize = usize::MAX;

/// Installs `handler` (a `void (*)(int)` as an integer, or `SIG_DFL`/`SIG_IGN`) for UCRT
/// signal `signal`, the runtime CPython's `abort()` raises through; answers the handler it
/// replaces, `None` if it could not be installed.
pub(crate) fn crt_signal(signal: c_int, handler: usize) -> Option<usize> {
    let crt = CRT.get_or_init(load).as_ref().ok()?;
    // SAFETY: `signal` is the UCRT export with this prototype; `handler` is a valid `void
    // (*)(int)` function or one of the special values (caller). It edits the UCRT's global
    // handler table only.
    let previous = unsafe { (crt.signal)(signal, handler) };
    (previous != SIG_ERR).then_some(previous)
}

/// Points standard descriptor `target` (1 or 2) at CRT descriptor `source`: for a process
/// about to end (the abort handler), whose later writers must reach the real stderr.
pub(crate) fn point_at(target: c_int, source: c_int) -> io::Result<()> {
    Session::open()?.dup2(source, target)
}

/// Windows processes do not fork (children are reported through `capture::note_spawn`).
pub(crate) const fn forked_count() -> u64 {
    0
}

/// Writes (part of) `bytes` to CRT descriptor `fd` with `_write`; the count written.
pub(crate) fn write_fd(fd: c_int, bytes: &[u8]) -> io::Result<usize> {
    let session = Session::open()?;
    let len = u32::try_from(bytes.len()).unwrap_or(u32::MAX);
    // SAFETY: `bytes` is a live slice of at least `len` bytes that `_write` only reads; a bad
    // `fd` is reported through the return value (the session's handler stops the UCRT from
    // aborting on it).
    let written = unsafe { (session.crt.write)(fd, bytes.as_ptr().cast(), len) };
    usize::try_from(written).map_err(|_| session.error("_write"))
}

/// A non-inheritable copy of a standard descriptor (a CRT descriptor numbered 3 or above),
/// closed when dropped.
#[derive(Debug)]
pub(crate) struct SavedFd {
    fd: c_int,
    /// The kept standard handle restoring puts back in the standard slot (see the module docs);
    /// `None`: the handle the CRT then holds.
    std_handle: Option<isize>,
}

impl SavedFd {
    /// The CRT descriptor number.
    pub(crate) const fn raw(&self) -> c_int {
        self.fd
    }

    /// The OS handle the CRT holds for this descriptor.
    pub(crate) fn os_handle(&self) -> Option<HANDLE> {
        Session::open().ok()?.os_handle(self.fd)
    }
}

impl Drop for SavedFd {
    fn drop(&mut self) {
        if let Ok(session) = Session::open() {
            session.close(self.fd);
        }
    }
}

/// A non-inheritable copy of standard descriptor `fd`, or `None` if `fd` is closed or has no
/// handle. With `keep`, the handle in the standard slot of fd 1 or 2 is kept open for good and
/// restoring puts it back there (see the module docs).
pub(crate) fn try_save(fd: c_int, keep: bool) -> io::Result<Option<SavedFd>> {
    let session = Session::open()?;
    let Some(handle) = session.os_handle(fd) else {
        return Ok(None);
    };
    let copy = session.save_copy(handle)?;
    let std_handle = if keep {
        keep_std_handle(fd, handle)
    } else {
        None
    };
    Ok(Some(SavedFd {
        fd: copy,
        std_handle,
    }))
}

/// Points standard descriptor `fd` (open or closed) at `NUL`, inheritable.
pub(crate) fn point_at_null(fd: c_int) -> io::Result<()> {
    let session = Session::open()?;
    let null = File::options().read(true).write(true).open("NUL")?;
    let null_fd = session.adopt(null.into())?;
    if null_fd == fd {
        // `fd` was closed and the lowest free descriptor: `NUL` landed on it. Keep it there.
        session.set_inheritable(fd, true);
        return session.sync_std_handle(fd);
    }
    let result = session.dup2(null_fd, fd);
    session.close(null_fd);
    result
}

/// Points standard descriptor `target` at what standard descriptor `source` points at.
pub(crate) fn copy_fd(source: c_int, target: c_int) -> io::Result<()> {
    Session::open()?.dup2(source, target)
}

/// Points standard descriptor `fd` back at its saved copy, and its standard slot at the kept
/// handle if there is one.
pub(crate) fn restore(fd: c_int, saved: &SavedFd) -> io::Result<()> {
    let session = Session::open()?;
    match saved.std_handle {
        Some(kept) => {
            session.dup2_only(saved.fd, fd)?;
            set_std_handle(fd, kept as HANDLE)
        }
        None => session.dup2(saved.fd, fd),
    }
}

/// A private (non-inheritable) stream on what `saved` points at, owned by the caller.
pub(crate) fn private_file(saved: &SavedFd) -> io::Result<File> {
    let session = Session::open()?;
    let Some(handle) = session.os_handle(saved.fd) else {
        return Err(io::Error::other("saved descriptor has no OS handle"));
    };
    duplicate(handle).map(File::from)
}
