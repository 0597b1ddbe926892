//! Captures must not nest or run concurrently: a second `begin` (same thread or another one)
//! is refused with an error citing the rule, and the first capture keeps capturing.

use crate::support::{err, is_child, run_passing_child};
use mcpline_core::{Capture, CaptureError};

const TEST: &str = "nesting::second_capture_is_refused_and_the_first_keeps_capturing";

#[test]
fn second_capture_is_refused_and_the_first_keeps_capturing() {
    if is_child(TEST) {
        return child();
    }
    let (_, stderr) = run_passing_child(TEST, b"");
    assert!(
        !stderr.contains("INSIDE-FIRST"),
        "captured output leaked:\n{stderr}"
    );
    assert!(
        stderr.contains("AFTER-FIRST"),
        "stderr not restored:\n{stderr}"
    );
}

fn child() {
    let first = Capture::begin().expect("begin the first capture");
    err("INSIDE-FIRST before\n");
    let nested = Capture::begin();
    let concurrent = std::thread::spawn(|| Capture::begin().map(drop))
        .join()
        .expect("thread");
    err("INSIDE-FIRST after\n");
    // Dropping the refused attempts must not disturb the first capture.
    let nested_error = nested.err();
    err("INSIDE-FIRST end\n");
    let captured = first.finish().expect("finish the first capture");
    err("AFTER-FIRST\n");

    let nested_error = nested_error.expect("a nested begin must be refused");
    assert!(
        matches!(nested_error, CaptureError::AlreadyActive),
        "{nested_error:?}"
    );
    let message = nested_error.to_string();
    assert!(
        message.contains("must not nest or run concurrently"),
        "{message}"
    );
    let concurrent_error = concurrent.expect_err("a concurrent begin must be refused");
    assert!(
        matches!(concurrent_error, CaptureError::AlreadyActive),
        "{concurrent_error:?}"
    );

    let text = String::from_utf8(captured.read_all().expect("read capture")).expect("utf-8");
    assert_eq!(
        text,
        "INSIDE-FIRST before\nINSIDE-FIRST after\nINSIDE-FIRST end\n"
    );
    // The rule is about simultaneity only: captures in sequence are fine.
    Capture::begin()
        .expect("begin after the first finished")
        .finish()
        .expect("finish");
}
