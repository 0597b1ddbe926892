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
#![allow(unsafe_code)]

use std::ffi::{c_int, c_void};
use std::fs::File;
use std::io;
use std::marker::PhantomData;
use std::os::windows::io::{AsRawHandle, FromRawHandle, IntoRawHandle, OwnedHandle};
use std::sync::OnceLock;

use windows_sys::Win32::Foundation::{
    DUPLICATE_SAME_ACCESS, DuplicateHandle, GetLastError, HANDLE, HANDLE_FLAG_INHERIT, HMODULE,
    SetHandleInformation,
};
use windows_sys::Win32::System::Console::{
    STD_ERROR_HANDLE, STD_INPUT_HANDLE, STD_OUTPUT_HANDLE, SetStdHandle,
};
use windows_sys::Win32::System::LibraryLoader::{GetModuleHandleW, GetProcAddress, LoadLibraryW};
use windows_sys::Win32::System::Threading::GetCurrentProcess;

use super::CrtUnavailable;

/// `_invalid_parameter_handler` from `<stdlib.h>`.
type InvalidParameterHandler = unsafe extern "C" fn(*const u16, *const u16, *const u16, u32, usize);

/// The UCRT functions used here, with their C prototypes from `<io.h>`, `<stdio.h>`,
/// `<errno.h>` and `<stdlib.h>`.
struct Crt {
    dup: unsafe extern "C" fn(c_int) -> c_int,
    dup2: unsafe extern "C" fn(c_int, c_int) -> c_int,
    close: unsafe extern "C" fn(c_int) -> c_int,
    get_osfhandle: unsafe extern "C" fn(c_int) -> isize,
    open_osfhandle: unsafe extern "C" fn(isize, c_int) -> c_int,
    fflush: unsafe extern "C" fn(*mut c_void) -> c_int,
    acrt_iob_func: unsafe extern "C" fn(u32) -> *mut c_void,
    errno: unsafe extern "C" fn() -> *mut c_int,
    set_thread_local_invalid_parameter_handler:
        unsafe extern "C" fn(Option<InvalidParameterHandler>) -> Option<InvalidParameterHandler>,
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
            dup: symbol(module, "_dup\0")?,
            dup2: symbol(module, "_dup2\0")?,
            close: symbol(module, "_close\0")?,
            get_osfhandle: symbol(module, "_get_osfhandle\0")?,
            open_osfhandle: symbol(module, "_open_osfhandle\0")?,
            fflush: symbol(module, "fflush\0")?,
            acrt_iob_func: symbol(module, "__acrt_iob_func\0")?,
            errno: symbol(module, "_errno\0")?,
            set_thread_local_invalid_parameter_handler: symbol(
                module,
                "_set_thread_local_invalid_parameter_handler\0",
            )?,
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
struct Session {
    crt: &'static Crt,
    previous: Option<InvalidParameterHandler>,
    _same_thread: PhantomData<*const ()>,
}

impl Session {
    fn open() -> io::Result<Self> {
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
    fn os_handle(&self, fd: c_int) -> Option<HANDLE> {
        // SAFETY: _get_osfhandle reads the CRT's descriptor table; a closed or out-of-range `fd`
        // returns -1 (the invalid-parameter handler is silenced by this session).
        let handle = unsafe { (self.crt.get_osfhandle)(fd) };
        (!NO_HANDLE.contains(&handle)).then_some(handle as HANDLE)
    }

    /// `_dup(fd)`: a new descriptor with an inheritable duplicate of the handle.
    fn dup(&self, fd: c_int) -> io::Result<c_int> {
        // SAFETY: _dup reads the CRT's table and adds an entry; failures are return values.
        let copy = unsafe { (self.crt.dup)(fd) };
        if copy < 0 {
            Err(self.error("_dup"))
        } else {
            Ok(copy)
        }
    }

    /// `_dup2(source, target)`, then points the Win32 standard slot of `target` at the handle
    /// the CRT now holds for it.
    fn dup2(&self, source: c_int, target: c_int) -> io::Result<()> {
        // SAFETY: _dup2 edits the CRT's table (closing what `target` held); failures are return
        // values. `target` is a standard descriptor that no Rust object owns.
        if unsafe { (self.crt.dup2)(source, target) } != 0 {
            return Err(self.error("_dup2"));
        }
        self.sync_std_handle(target)
    }

    /// `SetStdHandle(slot of fd, _get_osfhandle(fd))` for a standard descriptor.
    fn sync_std_handle(&self, fd: c_int) -> io::Result<()> {
        let slot = match fd {
            0 => STD_INPUT_HANDLE,
            1 => STD_OUTPUT_HANDLE,
            2 => STD_ERROR_HANDLE,
            _ => return Ok(()),
        };
        let Some(handle) = self.os_handle(fd) else {
            return Err(io::Error::other(format!("fd {fd} has no OS handle")));
        };
        // SAFETY: SetStdHandle stores a handle value in the process parameters; `handle` is the
        // one the CRT's `fd` owns and keeps open until the next `_dup2` onto it.
        if unsafe { SetStdHandle(slot, handle) } == 0 {
            return Err(io::Error::last_os_error());
        }
        Ok(())
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
        let raw = handle.into_raw_handle();
        // SAFETY: on success the CRT owns `raw` (closing the descriptor closes it). Flags 0:
        // binary mode, like the standard descriptors CPython sets up.
        let fd = unsafe { (self.crt.open_osfhandle)(raw as isize, 0) };
        if fd < 0 {
            let error = self.error("_open_osfhandle");
            // SAFETY: on failure the CRT did not take `raw`, which we still own; close it.
            drop(unsafe { OwnedHandle::from_raw_handle(raw) });
            return Err(error);
        }
        Ok(fd)
    }

    /// `_close(fd)`; errors are ignored (the descriptor is gone either way).
    fn close(&self, fd: c_int) {
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

/// A non-inheritable copy of a standard descriptor (a CRT descriptor numbered 3 or above),
/// closed when dropped.
#[derive(Debug)]
pub(crate) struct SavedFd(c_int);

impl Drop for SavedFd {
    fn drop(&mut self) {
        if let Ok(session) = Session::open() {
            session.close(self.0);
        }
    }
}

/// A CRT descriptor of the capture file, to `_dup2` onto fds 1 and 2; closed when dropped.
pub(crate) struct FileFd<'a> {
    fd: c_int,
    _file: PhantomData<&'a File>,
}

impl Drop for FileFd<'_> {
    fn drop(&mut self) {
        if let Ok(session) = Session::open() {
            session.close(self.fd);
        }
    }
}

/// A non-inheritable copy of standard descriptor `fd`, or `None` if `fd` is closed or has no
/// handle.
pub(crate) fn try_save(fd: c_int) -> io::Result<Option<SavedFd>> {
    let session = Session::open()?;
    if session.os_handle(fd).is_none() {
        return Ok(None);
    }
    // `_dup` hands out the lowest free descriptor, which can be a closed standard one: hold such
    // copies until one numbered 3 or above comes out, then close them again.
    let mut held = Vec::new();
    let copy = loop {
        match session.dup(fd) {
            Ok(copy) if copy <= 2 => held.push(copy),
            other => break other,
        }
    };
    for low in held {
        session.close(low);
    }
    let saved = SavedFd(copy?);
    session.set_inheritable(saved.0, false);
    Ok(Some(saved))
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

/// Points standard descriptor `fd` back at its saved copy.
pub(crate) fn restore(fd: c_int, saved: &SavedFd) -> io::Result<()> {
    Session::open()?.dup2(saved.0, fd)
}

/// A private (non-inheritable) stream on what `saved` points at, owned by the caller.
pub(crate) fn private_file(saved: &SavedFd) -> io::Result<File> {
    let session = Session::open()?;
    let Some(handle) = session.os_handle(saved.0) else {
        return Err(io::Error::other("saved descriptor has no OS handle"));
    };
    duplicate(handle).map(File::from)
}

/// A CRT descriptor for the capture file (its own handle stays with the `File`).
pub(crate) fn file_fd(file: &File) -> io::Result<FileFd<'_>> {
    let session = Session::open()?;
    let handle = duplicate(file.as_raw_handle())?;
    let fd = session.adopt(handle)?;
    Ok(FileFd {
        fd,
        _file: PhantomData,
    })
}

/// A `File` holds an OS handle, not a CRT descriptor: it can never sit on fds 0-2.
#[allow(clippy::unnecessary_wraps, reason = "same signature as the unix half")]
pub(crate) fn off_standard_fds(file: File) -> io::Result<File> {
    Ok(file)
}

/// Points standard descriptor `fd` at the capture file (`_dup2` makes an inheritable copy).
pub(crate) fn redirect(fd: c_int, file: &FileFd<'_>) -> io::Result<()> {
    Session::open()?.dup2(file.fd, fd)
}
