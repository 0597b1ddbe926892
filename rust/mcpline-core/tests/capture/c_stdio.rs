//! C stdio buffers are flushed at both edges of a capture: what C code buffered before `begin`
//! reaches the real stdout, what it buffered inside lands in the capture (never leaks later).
#![allow(unsafe_code)]

use crate::support::{err, is_child, run_passing_child};
use mcpline_core::Capture;

const TEST: &str = "c_stdio::c_stdio_buffers_are_flushed_at_both_edges";

#[test]
fn c_stdio_buffers_are_flushed_at_both_edges() {
    if is_child(TEST) {
        return child();
    }
    let (stdout, stderr) = run_passing_child(TEST, b"");
    assert!(
        stdout.contains("C-BEFORE"),
        "C output from before the capture was lost:\n{stdout}"
    );
    assert!(
        !stdout.contains("C-INSIDE"),
        "C output from inside the capture leaked:\n{stdout}"
    );
    assert!(stderr.contains("AFTER-C"), "stderr not restored:\n{stderr}");
}

fn printf(text: &std::ffi::CStr) {
    // SAFETY: "%s" consumes exactly one argument, a NUL-terminated string that outlives the call.
    unsafe { libc::printf(c"%s".as_ptr(), text.as_ptr()) };
}

fn child() {
    // The child's stdout is a pipe, so C's stdout is fully buffered: nothing reaches fd 1 before
    // a flush.
    printf(c"C-BEFORE ");
    let capture = Capture::begin().expect("begin");
    printf(c"C-INSIDE (no newline)");
    let captured = capture.finish().expect("finish");
    err("AFTER-C\n");

    let text = String::from_utf8(captured.read_all().expect("read capture")).expect("utf-8");
    assert_eq!(text, "C-INSIDE (no newline)");
}

const BLOCKED_READ: &str = "c_stdio::a_thread_blocked_in_a_c_read_does_not_hold_up_captures";

/// Only C's `stdout` and `stderr` are flushed: `fflush(NULL)` would lock every stream, and wait
/// for as long as another thread sits in a C read.
#[test]
fn a_thread_blocked_in_a_c_read_does_not_hold_up_captures() {
    if is_child(BLOCKED_READ) {
        return blocked_read_child();
    }
    let (_, stderr) = run_passing_child(BLOCKED_READ, b"");
    assert!(stderr.contains("CYCLES-DONE"), "{stderr}");
}

fn blocked_read_child() {
    let mut fds = [0; 2];
    // SAFETY: pipe() writes two descriptors into a live two-element array.
    assert_eq!(unsafe { libc::pipe(fds.as_mut_ptr()) }, 0, "pipe");
    let [read_end, _write_end_kept_open] = fds;
    // A C stream on the pipe's read end, read by a thread that will never get a byte: it holds
    // the stream's lock inside fgets for the rest of the process.
    let reader = read_end as usize;
    std::thread::spawn(move || {
        // SAFETY: `reader` is an open descriptor this thread alone turns into a FILE; "r" is a
        // valid mode string. fgets writes at most 64 bytes into a live 64-byte buffer.
        unsafe {
            let file = libc::fdopen(reader as i32, c"r".as_ptr());
            assert!(!file.is_null(), "fdopen");
            let mut buf = [0 as libc::c_char; 64];
            libc::fgets(buf.as_mut_ptr(), 64, file);
        }
    });
    std::thread::sleep(std::time::Duration::from_millis(100));
    let (done, finished) = std::sync::mpsc::channel();
    std::thread::spawn(move || {
        for _ in 0..3 {
            let capture = Capture::begin().expect("begin");
            printf(c"C-INSIDE");
            let captured = capture.finish().expect("finish");
            assert_eq!(captured.read_all().expect("read"), b"C-INSIDE");
        }
        done.send(()).expect("report");
    });
    if finished
        .recv_timeout(std::time::Duration::from_secs(10))
        .is_err()
    {
        err("captures were held up by a thread blocked in fgets\n");
        // SAFETY: _exit ends the process without the stdio flush that would itself block on the
        // locked stream.
        unsafe { libc::_exit(3) };
    }
    err("CYCLES-DONE\n");
}
