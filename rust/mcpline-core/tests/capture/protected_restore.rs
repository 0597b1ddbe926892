//! Dropping `ProtectedStdio` restores fds 0 and 1, also when it happens during a capture (fd 1
//! is then restored when the capture ends); a second install, or an install inside a capture,
//! is refused.

use std::io::BufRead;

use crate::support::{err, is_child, out, run_passing_child};
use mcpline_core::{Capture, CaptureError, ProtectedStdio};

const TEST: &str = "protected_restore::dropping_protected_stdio_restores_fd0_and_fd1";

#[test]
fn dropping_protected_stdio_restores_fd0_and_fd1() {
    if is_child(TEST) {
        return child();
    }
    let (stdout, stderr) = run_passing_child(TEST, b"STDIN-LINE\n");
    assert!(
        stderr.contains("PROTECTED-1") && !stdout.contains("PROTECTED-1"),
        "{stdout}"
    );
    assert!(stdout.contains("AFTER-RESTORE\n"), "{stdout}");
    assert!(stdout.contains("AFTER-HANDOVER\n"), "{stdout}");
    assert!(!stdout.contains("HANDOVER-CAPTURED") && !stderr.contains("HANDOVER-CAPTURED"));
    assert!(stderr.contains("RESTORE-DONE"), "{stderr}");
}

fn child() {
    // Explicit restore, and the refusals while protected.
    let protected = ProtectedStdio::install().expect("install");
    out("PROTECTED-1\n");
    let twice = ProtectedStdio::install().map(drop);
    protected.restore().expect("restore");
    out("AFTER-RESTORE\n");
    let twice = twice.expect_err("a second install must be refused");
    assert!(matches!(twice, CaptureError::AlreadyProtected), "{twice:?}");

    let capture = Capture::begin().expect("begin");
    let inside = ProtectedStdio::install().map(drop);
    drop(capture.finish().expect("finish"));
    let inside = inside.expect_err("an install inside a capture must be refused");
    assert!(matches!(inside, CaptureError::CaptureActive), "{inside:?}");
    assert!(
        inside
            .to_string()
            .contains("before the first capture begins"),
        "{inside}"
    );

    // Dropped during a capture: fd 1 stays captured until the capture ends, then is the real
    // stdout again; fd 0 is the real stdin at once.
    let protected = ProtectedStdio::install().expect("install again");
    let capture = Capture::begin().expect("begin");
    drop(protected);
    let mut line = String::new();
    std::io::stdin()
        .lock()
        .read_line(&mut line)
        .expect("read the real stdin");
    out("HANDOVER-CAPTURED\n");
    let captured = capture.finish().expect("finish");
    out("AFTER-HANDOVER\n");

    assert_eq!(line, "STDIN-LINE\n");
    assert_eq!(
        captured.read_all().expect("read capture"),
        b"HANDOVER-CAPTURED\n"
    );
    assert!(!ProtectedStdio::is_installed());
    err("RESTORE-DONE\n");
}
