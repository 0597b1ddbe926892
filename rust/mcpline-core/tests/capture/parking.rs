//! While stdio is protected, an empty capture may leave fds 1 and 2 parked on its file for the
//! next capture (no `dup2` between quiet calls). Parking never changes what a capture holds:
//! bytes written while parked belong to no capture and reach the real stderr; unparking, or
//! ending the protection, points the descriptors back.

use crate::support::{err, is_child, out, run_passing_child};
use mcpline_core::{Capture, ProtectedStdio, is_capturing, is_parked};

const TEST: &str = "parking::parked_descriptors_never_change_what_a_capture_holds";

#[test]
fn parked_descriptors_never_change_what_a_capture_holds() {
    if is_child(TEST) {
        return child();
    }
    let (stdout, stderr) = run_passing_child(TEST, b"");
    assert!(stderr.contains("BETWEEN-CALLS\n"), "{stderr}");
    assert!(stderr.contains("AFTER-UNPARK\n"), "{stderr}");
    assert!(
        stdout.contains("AFTER-PROTECTION\n"),
        "stdout:\n{stdout}\nstderr:\n{stderr}"
    );
    for captured in ["LOUD-1", "LOUD-2"] {
        assert!(!stderr.contains(captured), "{captured} leaked: {stderr}");
    }
    assert!(stderr.contains("PARKING-DONE"), "{stderr}");
}

fn quiet_then_park() {
    let capture = Capture::begin().expect("begin");
    let captured = capture.finish_or_park().expect("finish or park");
    assert!(captured.is_empty());
    assert!(is_parked(), "an empty capture parks while protected");
    assert!(!is_capturing());
}

fn loud(text: &str) -> Vec<u8> {
    let capture = Capture::begin().expect("begin");
    assert!(!is_parked() && is_capturing());
    out(text);
    let captured = capture.finish_or_park().expect("finish or park");
    assert!(
        !is_parked(),
        "a capture that holds bytes is finished, not parked"
    );
    captured.read_all().expect("read")
}

fn child() {
    // Without protection nothing parks.
    let capture = Capture::begin().expect("begin");
    assert!(capture.finish_or_park().expect("finish").is_empty());
    assert!(!is_parked());

    let mut protected = ProtectedStdio::install().expect("install");
    let streams = protected.take_streams();

    // Quiet, quiet, loud: the loud capture starts on the parked file and holds only its bytes.
    quiet_then_park();
    let capture = Capture::begin().expect("begin from parked");
    assert!(!is_parked());
    assert!(capture.finish_or_park().expect("park again").is_empty());
    assert_eq!(loud("LOUD-1\n"), b"LOUD-1\n");

    // Bytes written while parked go to the real stderr, not into the next capture.
    quiet_then_park();
    err("BETWEEN-CALLS\n");
    assert_eq!(loud("LOUD-2\n"), b"LOUD-2\n");

    // Unparking points fds 1 and 2 back at once (fd 1 is the stderr copy while protected).
    quiet_then_park();
    Capture::unpark().expect("unpark");
    assert!(!is_parked());
    out("AFTER-UNPARK\n");

    // Ending the protection while parked restores the real stdout.
    quiet_then_park();
    protected.restore().expect("restore");
    assert!(!is_parked());
    drop(streams);
    out("AFTER-PROTECTION\n");
    err("PARKING-DONE\n");
}
