//! A panic inside a capture cannot leave the process mute: unwinding drops the `Capture`, which
//! restores fds 1 and 2, and a new capture can begin afterwards.

use crate::support::{err, is_child, out, run_passing_child};
use mcpline_core::{Capture, is_capturing};

const TEST: &str = "panic_restore::panic_inside_a_capture_restores_the_real_streams";

#[test]
fn panic_inside_a_capture_restores_the_real_streams() {
    if is_child(TEST) {
        return child();
    }
    let (stdout, stderr) = run_passing_child(TEST, b"");
    assert!(
        !stderr.contains("TOOL-PANICKED"),
        "panic message was not captured:\n{stderr}"
    );
    assert!(
        !stdout.contains("BEFORE-PANIC"),
        "captured output leaked:\n{stdout}"
    );
    assert!(
        stderr.contains("AFTER-PANIC-STDERR"),
        "stderr stayed mute:\n{stderr}"
    );
    assert!(
        stdout.contains("AFTER-PANIC-STDOUT"),
        "stdout stayed mute:\n{stdout}"
    );
}

fn child() {
    let result = std::panic::catch_unwind(|| {
        let _capture = Capture::begin().expect("begin");
        out("BEFORE-PANIC\n");
        panic!("TOOL-PANICKED");
    });
    err("AFTER-PANIC-STDERR\n");
    out("AFTER-PANIC-STDOUT\n");

    assert!(result.is_err(), "the closure should have panicked");
    assert!(!is_capturing(), "still capturing after the panic");
    let again = Capture::begin().expect("a new capture after the panic");
    err("SECOND\n");
    let captured = again.finish().expect("finish");
    assert_eq!(captured.read_all().expect("read capture"), b"SECOND\n");
}
