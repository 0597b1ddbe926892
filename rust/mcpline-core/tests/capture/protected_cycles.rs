//! While stdio is protected, captures reuse the copies of fds 1 and 2 they restore; once the
//! protection ends those copies are stale (fd 1 was the stderr copy), so a later capture must
//! restore fd 1 to the real stdout again.

use crate::support::{err, is_child, out, run_passing_child};
use mcpline_core::{Capture, ProtectedStdio};

const TEST: &str = "protected_cycles::captures_after_the_protection_ends_restore_the_real_stdout";

#[test]
fn captures_after_the_protection_ends_restore_the_real_stdout() {
    if is_child(TEST) {
        return child();
    }
    let (stdout, stderr) = run_passing_child(TEST, b"");
    assert!(stderr.contains("WHILE-PROTECTED"), "{stderr}");
    assert!(!stdout.contains("WHILE-PROTECTED"), "{stdout}");
    assert!(
        stdout.contains("AFTER-ALL\n"),
        "stdout:\n{stdout}\nstderr:\n{stderr}"
    );
    assert!(stderr.contains("CYCLES-DONE"), "{stderr}");
}

fn cycle(text: &str) -> Vec<u8> {
    let capture = Capture::begin().expect("begin");
    out(text);
    capture.finish().expect("finish").read_all().expect("read")
}

fn child() {
    let mut protected = ProtectedStdio::install().expect("install");
    let streams = protected.take_streams();
    for round in 0..5 {
        let text = format!("ROUND-{round}\n");
        assert_eq!(cycle(&text), text.as_bytes());
        assert_eq!(cycle(""), b"");
    }
    out("WHILE-PROTECTED\n");
    protected.restore().expect("restore");
    drop(streams);
    assert_eq!(cycle("CAPTURED-AFTER\n"), b"CAPTURED-AFTER\n");
    out("AFTER-ALL\n");
    err("CYCLES-DONE\n");
}
