//! For the capture tests. Descriptor changes are process-global, so each test runs its case in
//! a child: the test binary re-executed for that one test with `MCPLINE_CAPTURE_CHILD` set. The
//! parent checks the child's real stdout, stderr and exit code.

use std::io::{self, Write};
use std::process::{Command, Output, Stdio};
use std::sync::Mutex;

use mcpline_core::{Capture, Captured, lock};

/// Names the test a child process is running.
pub const CHILD_ENV: &str = "MCPLINE_CAPTURE_CHILD";

/// Whether this process is the child running `test`.
pub fn is_child(test: &str) -> bool {
    std::env::var_os(CHILD_ENV).is_some_and(|value| value == test)
}

/// Held while a child runs. The children never share descriptors, but side by side they would
/// share the CPU while one of them measures the cost of a capture cycle.
static ONE_CHILD_AT_A_TIME: Mutex<()> = Mutex::new(());

/// Runs `test` (a test function of this binary, named by its path inside the program, e.g.
/// `nesting::second_capture_is_refused_and_the_first_keeps_capturing`) in a child process,
/// feeding it `stdin`, and returns its output.
pub fn run_child(test: &str, stdin: &[u8]) -> Output {
    let exe = std::env::current_exe().expect("path of the test binary");
    run_child_command(Command::new(exe), test, stdin)
}

/// Runs `test` as [`run_child`] does, by `command` (the test binary, or a program that executes
/// it with the arguments added here).
fn run_child_command(mut command: Command, test: &str, stdin: &[u8]) -> Output {
    let _one_child = lock(&ONE_CHILD_AT_A_TIME);
    let mut child = command
        .args(["--exact", test, "--nocapture", "--test-threads=1"])
        .env(CHILD_ENV, test)
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .expect("spawn the child test process");
    let mut pipe = child.stdin.take().expect("child stdin");
    // A child that closes its stdin unread makes this a broken pipe, which is fine.
    if let Err(error) = pipe.write_all(stdin) {
        assert_eq!(
            error.kind(),
            io::ErrorKind::BrokenPipe,
            "write the child's stdin"
        );
    }
    drop(pipe);
    let output = child
        .wait_with_output()
        .expect("wait for the child test process");
    // A name that is not the test's full path runs nothing, and an empty run passes.
    assert!(
        String::from_utf8_lossy(&output.stdout).contains("running 1 test"),
        "the child ran no test named {test:?}\n{}",
        describe(&output)
    );
    output
}

/// The child's stdout and stderr as text, for assertion messages.
pub fn describe(output: &Output) -> String {
    format!(
        "status: {}\n--- stdout ---\n{}\n--- stderr ---\n{}",
        output.status,
        String::from_utf8_lossy(&output.stdout),
        String::from_utf8_lossy(&output.stderr)
    )
}

/// Runs `test` in a child and asserts that it passed; returns (stdout, stderr) as text.
pub fn run_passing_child(test: &str, stdin: &[u8]) -> (String, String) {
    let output = run_child(test, stdin);
    assert!(
        output.status.success(),
        "child case failed\n{}",
        describe(&output)
    );
    (
        String::from_utf8_lossy(&output.stdout).into_owned(),
        String::from_utf8_lossy(&output.stderr).into_owned(),
    )
}

/// [`run_passing_child`] with `/proc` hidden from the child: a tmpfs mounted over it in mount
/// and user namespaces of its own (`unshare -rm`). The capture cell then cannot open a capture
/// file anew and works as on macOS. `None` (with a note) where the system allows no such
/// namespaces.
#[cfg(target_os = "linux")]
pub fn run_passing_child_without_proc(test: &str, stdin: &[u8]) -> Option<(String, String)> {
    run_passing_child_without_proc_env(test, stdin, &[])
}

/// [`run_passing_child_without_proc`] with `env` added to the child's environment.
#[cfg(target_os = "linux")]
pub fn run_passing_child_without_proc_env(
    test: &str,
    stdin: &[u8],
    env: &[(&str, &str)],
) -> Option<(String, String)> {
    const HIDE_PROC: &str = "mount -t tmpfs none /proc && exec \"$0\" \"$@\"";
    let allowed = Command::new("unshare")
        .args(["-rm", "sh", "-c", HIDE_PROC, "true"])
        .stderr(Stdio::null())
        .status()
        .is_ok_and(|status| status.success());
    if !allowed {
        err("skipped: `unshare -rm` cannot hide /proc here\n");
        return None;
    }
    let exe = std::env::current_exe().expect("path of the test binary");
    let mut command = Command::new("unshare");
    command
        .args(["-rm", "sh", "-c", HIDE_PROC])
        .arg(exe)
        .envs(env.iter().copied());
    let output = run_child_command(command, test, stdin);
    assert!(
        output.status.success(),
        "child case failed\n{}",
        describe(&output)
    );
    Some((
        String::from_utf8_lossy(&output.stdout).into_owned(),
        String::from_utf8_lossy(&output.stderr).into_owned(),
    ))
}

/// Captures whatever `bytes` are written to stderr (fd 2) in between `begin` and `finish`.
pub fn capture_of(bytes: &[u8]) -> Captured {
    let capture = Capture::begin().expect("begin");
    io::stderr().write_all(bytes).expect("write");
    capture.finish().expect("finish")
}

/// Writes `text` to this process's current stdout (fd 1) and flushes Rust's line buffer.
pub fn out(text: &str) {
    let mut stdout = std::io::stdout().lock();
    stdout.write_all(text.as_bytes()).expect("write to stdout");
    stdout.flush().expect("flush stdout");
}

/// Writes `text` to this process's current stderr (fd 2).
pub fn err(text: &str) {
    std::io::stderr()
        .write_all(text.as_bytes())
        .expect("write to stderr");
}

/// Writes `text` straight to descriptor `fd` with `write(2)`, bypassing every Rust buffer.
#[cfg(unix)]
#[allow(unsafe_code)]
pub fn raw_write(fd: i32, text: &str) {
    // SAFETY: write(2) reads `text.len()` bytes from a live buffer; `fd` is just a number.
    let written = unsafe { libc::write(fd, text.as_ptr().cast(), text.len()) };
    assert_eq!(
        usize::try_from(written).ok(),
        Some(text.len()),
        "write to fd {fd}"
    );
}

/// Writes `text` to C runtime descriptor `fd` with the UCRT's `_write` (what CPython's
/// `os.write` and C extensions use), whatever C runtime this test binary links.
#[cfg(windows)]
#[allow(unsafe_code)]
pub fn raw_write(fd: i32, text: &str) {
    use windows_sys::Win32::System::LibraryLoader::{GetProcAddress, LoadLibraryW};
    type WriteFn = unsafe extern "C" fn(i32, *const std::ffi::c_void, u32) -> i32;
    let name: Vec<u16> = "ucrtbase.dll".encode_utf16().chain(Some(0)).collect();
    // SAFETY: a NUL-terminated UTF-16 name that outlives the call.
    let module = unsafe { LoadLibraryW(name.as_ptr()) };
    assert!(!module.is_null(), "load ucrtbase.dll");
    // SAFETY: a loaded module and a NUL-terminated name.
    let proc = unsafe { GetProcAddress(module, c"_write".as_ptr().cast()) }.expect("_write");
    // SAFETY: `_write` has the prototype `int _write(int, const void *, unsigned int)`.
    let write =
        unsafe { std::mem::transmute::<unsafe extern "system" fn() -> isize, WriteFn>(proc) };
    let len = u32::try_from(text.len()).expect("short text");
    // SAFETY: `_write` reads `len` bytes from a live buffer.
    let written = unsafe { write(fd, text.as_ptr().cast(), len) };
    assert_eq!(
        usize::try_from(written).ok(),
        Some(text.len()),
        "_write to fd {fd}"
    );
}
