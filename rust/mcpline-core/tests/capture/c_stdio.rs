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
