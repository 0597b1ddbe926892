//! Windows: the handles behind the cell.
//!
//! - A handle cached from `GetStdHandle(STD_ERROR_HANDLE)` before a capture stays valid during
//!   and after it (the CRT's `_dup2` would close it): writes to it go to the real stderr, never
//!   into the capture, and `GetStdHandle` returns the same value afterwards.
//! - The cell's own copies of the standard descriptors are never inheritable, and the original
//!   stdout kept open by a capture is closed once it becomes the protocol stream: a child started
//!   with handle inheritance while serving gets no copy of the protocol stream, so the host sees
//!   end-of-file when the server exits.

use std::io::Write;
use std::mem::ManuallyDrop;
use std::os::windows::io::FromRawHandle;

use windows_sys::Win32::Foundation::{GetHandleInformation, HANDLE, HANDLE_FLAG_INHERIT};
use windows_sys::Win32::System::Console::{GetStdHandle, STD_ERROR_HANDLE};

use crate::support::{err, is_child, run_passing_child};
use mcpline_core::{Capture, ProtectedStdio};

const CACHED: &str = "std_handles::a_cached_stderr_handle_stays_valid_during_and_after_captures";
const PRIVATE: &str = "std_handles::the_cells_own_descriptors_are_not_inheritable";

#[allow(unsafe_code)]
fn stderr_handle() -> HANDLE {
    // SAFETY: GetStdHandle reads a value from the process parameters.
    unsafe { GetStdHandle(STD_ERROR_HANDLE) }
}

/// Writes `text` with `WriteFile` to `handle`, which stays open (it is not ours to close).
#[allow(unsafe_code)]
fn write_to(handle: HANDLE, text: &str) -> std::io::Result<()> {
    // SAFETY: the File is never dropped, so the handle is only borrowed for the write.
    let file = ManuallyDrop::new(unsafe { std::fs::File::from_raw_handle(handle) });
    (&*file).write_all(text.as_bytes())
}

#[test]
fn a_cached_stderr_handle_stays_valid_during_and_after_captures() {
    if is_child(CACHED) {
        return cached_child();
    }
    let (_, stderr) = run_passing_child(CACHED, b"");
    for line in [
        "CACHED-DURING",
        "CACHED-AFTER",
        "CACHED-PROTECTED",
        "CACHED-END",
    ] {
        assert!(
            stderr.contains(&format!("{line}\n")),
            "{line} missing:\n{stderr}"
        );
    }
    assert!(
        !stderr.contains("TOOL-"),
        "captured output leaked:\n{stderr}"
    );
}

fn cached_child() {
    let cached = stderr_handle();

    let capture = Capture::begin().expect("begin");
    write_to(cached, "CACHED-DURING\n").expect("cached handle during a capture");
    err("TOOL-1\n");
    let captured = capture.finish().expect("finish");
    assert_eq!(captured.read_all().expect("read"), b"TOOL-1\n");
    write_to(cached, "CACHED-AFTER\n").expect("cached handle after a capture");
    assert_eq!(stderr_handle(), cached, "the standard slot is back");

    let mut protected = ProtectedStdio::install().expect("install");
    let streams = protected.take_streams();
    for round in 0..3 {
        let capture = Capture::begin().expect("begin while protected");
        write_to(cached, "CACHED-PROTECTED\n").expect("cached handle while protected");
        err(&format!("TOOL-{round}\n"));
        let captured = capture.finish().expect("finish");
        assert_eq!(
            captured.read_all().expect("read"),
            format!("TOOL-{round}\n").as_bytes()
        );
        mcpline_core::settle().expect("settle");
    }
    protected.restore().expect("restore");
    drop(streams);
    write_to(cached, "CACHED-END\n").expect("cached handle after serving");
    assert_eq!(stderr_handle(), cached, "the standard slot is back");
}

#[test]
fn the_cells_own_descriptors_are_not_inheritable() {
    if is_child(PRIVATE) {
        return private_child();
    }
    run_passing_child(PRIVATE, b"");
}

/// Does nothing: the UCRT's default invalid-parameter handler ends the process when
/// `_get_osfhandle` is asked about a closed descriptor.
extern "C" fn ignore(_: *const u16, _: *const u16, _: *const u16, _: u32, _: usize) {}

/// `_get_osfhandle` of the UCRT (the C runtime whose descriptors the cell uses), with this
/// thread's invalid-parameter handler silenced so that a closed descriptor gives -1.
#[allow(unsafe_code)]
fn os_handle(fd: i32) -> Option<HANDLE> {
    use windows_sys::Win32::System::LibraryLoader::{GetProcAddress, LoadLibraryW};
    type Proc = unsafe extern "system" fn() -> isize;
    type GetOsfhandle = unsafe extern "C" fn(i32) -> isize;
    type Handler = extern "C" fn(*const u16, *const u16, *const u16, u32, usize);
    type SetHandler = unsafe extern "C" fn(Option<Handler>) -> Option<Handler>;
    let name: Vec<u16> = "ucrtbase.dll".encode_utf16().chain(Some(0)).collect();
    // SAFETY: a NUL-terminated UTF-16 name that outlives the call.
    let module = unsafe { LoadLibraryW(name.as_ptr()) };
    assert!(!module.is_null(), "load ucrtbase.dll");
    // SAFETY: a loaded module and NUL-terminated names.
    let (get, set) = unsafe {
        (
            GetProcAddress(module, c"_get_osfhandle".as_ptr().cast()).expect("_get_osfhandle"),
            GetProcAddress(
                module,
                c"_set_thread_local_invalid_parameter_handler"
                    .as_ptr()
                    .cast(),
            )
            .expect("_set_thread_local_invalid_parameter_handler"),
        )
    };
    // SAFETY: the two exports have these C prototypes.
    let (get, set) = unsafe {
        (
            std::mem::transmute::<Proc, GetOsfhandle>(get),
            std::mem::transmute::<Proc, SetHandler>(set),
        )
    };
    // SAFETY: installs a valid handler for this thread, reads the CRT's table (a closed
    // descriptor returns -1 with the handler silenced), and puts the previous handler back.
    let handle = unsafe {
        let previous = set(Some(ignore));
        let handle = get(fd);
        set(previous);
        handle
    };
    (handle != -1 && handle != -2).then_some(handle as HANDLE)
}

#[allow(unsafe_code)]
fn inheritable(handle: HANDLE) -> bool {
    let mut flags = 0;
    // SAFETY: writes one u32 into a live local; `handle` is a CRT descriptor's open handle.
    let ok = unsafe { GetHandleInformation(handle, &raw mut flags) };
    assert_ne!(ok, 0, "GetHandleInformation");
    flags & HANDLE_FLAG_INHERIT != 0
}

/// Descriptors 3 and up that the CRT has open and `before` did not list, with their handles.
fn new_descriptors(before: &[(i32, HANDLE)]) -> Vec<(i32, HANDLE)> {
    (3..64)
        .filter_map(|fd| os_handle(fd).map(|h| (fd, h)))
        .filter(|(fd, _)| before.iter().all(|(old, _)| old != fd))
        .collect()
}

fn private_child() {
    let before = new_descriptors(&[]);
    let capture = Capture::begin().expect("begin");
    let saved = new_descriptors(&before);
    assert!(
        saved.len() >= 2,
        "copies of fds 1 and 2 are held: {saved:?}"
    );
    for &(fd, handle) in &saved {
        assert!(
            !inheritable(handle),
            "fd {fd} (a saved copy) is inheritable"
        );
    }
    drop(capture.finish().expect("finish"));

    let mut protected = ProtectedStdio::install().expect("install");
    let streams = protected.take_streams();
    let capture = Capture::begin().expect("begin while protected");
    let held = new_descriptors(&before);
    assert!(
        held.len() >= 4,
        "copies of fds 0, 1 (protocol) and 1, 2: {held:?}"
    );
    for (fd, handle) in held {
        assert!(
            !inheritable(handle),
            "fd {fd} is inheritable while protected"
        );
    }
    drop(capture.finish().expect("finish"));
    protected.restore().expect("restore");
    drop(streams);
}

const EOF: &str =
    "std_handles::the_protocol_stream_ends_while_a_child_that_inherited_handles_lives";
/// What the grandchild of [`EOF`] is told to be: a process that holds its inherited handles.
const SLEEPER: &str = "std_handles::sleeper";
const SLEEP: std::time::Duration = std::time::Duration::from_secs(20);

/// A server that starts a child with handle inheritance during a capture (after the process's
/// original stdout was kept open by an earlier capture) must not hand it the protocol stream:
/// the host sees end-of-file when the server exits, not when that child does.
#[test]
fn the_protocol_stream_ends_while_a_child_that_inherited_handles_lives() {
    use std::io::Read;
    use std::process::{Command, Stdio};
    use std::time::Instant;

    if is_child(SLEEPER) {
        std::thread::sleep(SLEEP);
        return;
    }
    if is_child(EOF) {
        return eof_child();
    }
    let exe = std::env::current_exe().expect("path of the test binary");
    let started = Instant::now();
    let mut server = Command::new(exe)
        .args(["--exact", EOF, "--nocapture", "--test-threads=1"])
        .env(crate::support::CHILD_ENV, EOF)
        .stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(Stdio::null())
        .spawn()
        .expect("spawn the server");
    let mut protocol = server.stdout.take().expect("protocol stream");
    let (tx, rx) = std::sync::mpsc::channel();
    std::thread::spawn(move || {
        let mut text = String::new();
        let _ = protocol.read_to_string(&mut text);
        let _ = tx.send((text, started.elapsed()));
    });
    let status = server.wait().expect("wait for the server");
    let (text, elapsed) = rx
        .recv_timeout(SLEEP / 2)
        .unwrap_or_else(|_| panic!("no end-of-file {:?} after the server exited", SLEEP / 2));
    assert!(status.success(), "server: {status}\n{text}");
    assert!(text.contains("PROTOCOL-DONE"), "protocol output: {text:?}");
    assert!(elapsed < SLEEP, "end-of-file came only after {elapsed:?}");
}

#[allow(
    clippy::zombie_processes,
    reason = "the sleeper must outlive this process, holding what it inherited"
)]
fn eof_child() {
    use std::process::{Command, Stdio};

    // A capture first: it keeps the original stdout handle open (the protocol pipe).
    drop(Capture::begin().expect("begin").finish().expect("finish"));
    let mut protected = ProtectedStdio::install().expect("install");
    let (_input, mut output) = protected.take_streams();
    let capture = Capture::begin().expect("begin while protected");
    let exe = std::env::current_exe().expect("path of the test binary");
    // std starts every child with bInheritHandles = TRUE.
    let _sleeper = Command::new(exe)
        .args(["--exact", EOF, "--test-threads=1"])
        .env(crate::support::CHILD_ENV, SLEEPER)
        .stdin(Stdio::null())
        .spawn()
        .expect("spawn the sleeper");
    drop(capture.finish().expect("finish"));
    output
        .write_all(b"PROTOCOL-DONE\n")
        .expect("write the protocol");
    protected.restore().expect("restore");
}
