//! Writes by Rust code to fd 1 and fd 2 land in the capture, not on the real streams, and the
//! real streams work again after `finish`.

use crate::support::{err, is_child, out, run_passing_child};
use mcpline_core::{Capture, is_capturing};

const TEST: &str = "rust_writes::rust_writes_to_fd1_and_fd2_are_captured";

#[test]
fn rust_writes_to_fd1_and_fd2_are_captured() {
    if is_child(TEST) {
        return child();
    }
    let (stdout, stderr) = run_passing_child(TEST, b"");
    for hidden in [
        "CAPTURED-STDOUT",
        "CAPTURED-STDERR",
        "CAPTURED-RAW-1",
        "CAPTURED-RAW-2",
    ] {
        assert!(
            !stdout.contains(hidden),
            "{hidden} leaked to the real stdout:\n{stdout}"
        );
        assert!(
            !stderr.contains(hidden),
            "{hidden} leaked to the real stderr:\n{stderr}"
        );
    }
    assert!(
        stdout.contains("AFTER-STDOUT"),
        "stdout not restored:\n{stdout}"
    );
    assert!(
        stderr.contains("AFTER-STDERR"),
        "stderr not restored:\n{stderr}"
    );
}

fn child() {
    out("BEFORE-STDOUT\n");
    assert!(!is_capturing());
    let capture = Capture::begin().expect("begin");
    let during = is_capturing();
    out("CAPTURED-STDOUT\n");
    err("CAPTURED-STDERR\n");
    crate::support::raw_write(1, "CAPTURED-RAW-1\n");
    crate::support::raw_write(2, "CAPTURED-RAW-2\n");
    let captured = capture.finish().expect("finish");
    out("AFTER-STDOUT\n");
    err("AFTER-STDERR\n");

    assert!(during, "is_capturing() was false inside the capture");
    assert!(!is_capturing(), "is_capturing() still true after finish");
    let text = String::from_utf8(captured.read_all().expect("read capture")).expect("utf-8");
    // fds 1 and 2 share one file offset: writes interleave in order, none overwrites another.
    assert_eq!(
        text,
        "CAPTURED-STDOUT\nCAPTURED-STDERR\nCAPTURED-RAW-1\nCAPTURED-RAW-2\n"
    );
    assert_eq!(captured.len(), text.len() as u64);
    assert!(!captured.is_empty());
}
