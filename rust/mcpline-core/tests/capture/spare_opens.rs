//! Where a capture file cannot be opened anew (Linux without `/proc`, as on macOS), the cell
//! makes it with spare opens for its outlets: once they have run out, the next capture gets a
//! fresh file that tells who holds it as well; a process short of descriptors for them still
//! gets its output captured.

use std::fs::File;
use std::io::{self, Write};
use std::process::Command;
use std::time::{Duration, Instant};

use crate::support::{err, is_child, run_passing_child_without_proc};
use mcpline_core::Capture;

const TEST: &str = "spare_opens::a_process_short_of_descriptors_for_the_spare_opens_still_captures";

/// Descriptors left free for the capture: the copies of fds 1 and 2 it saves, and two more
/// (one file, and one spare open before the next is refused).
const LEFT_FREE: usize = 4;

#[test]
fn a_process_short_of_descriptors_for_the_spare_opens_still_captures() {
    if is_child(TEST) {
        return child();
    }
    let Some((_, stderr)) = run_passing_child_without_proc(TEST, b"") else {
        return;
    };
    assert!(stderr.contains("SHORT-CHECK-DONE"), "{stderr}");
    assert!(!stderr.contains("CAPTURED-BYTES"), "{stderr}");
}

fn child() {
    assert!(
        !std::path::Path::new("/proc/self/fd").exists(),
        "this case runs with /proc hidden"
    );
    // Take every free descriptor, then give a few back.
    let mut held = Vec::new();
    loop {
        match File::open("/dev/null") {
            Ok(file) => held.push(file),
            Err(error) if error.raw_os_error() == Some(24) => break, // EMFILE
            Err(error) => panic!("open /dev/null: {error}"),
        }
    }
    held.truncate(held.len() - LEFT_FREE);
    let capture = Capture::begin().expect("begin with few descriptors free");
    io::stderr().write_all(b"CAPTURED-BYTES\n").expect("write");
    let captured = capture.finish().expect("finish");
    drop(held);
    let text = String::from_utf8(captured.read_all().expect("read")).expect("utf-8");
    assert_eq!(text, "CAPTURED-BYTES\n");
    err("SHORT-CHECK-DONE\n");
}

const RUN_OUT: &str =
    "spare_opens::once_the_spare_opens_have_run_out_a_fresh_file_still_tells_who_holds_it";

#[test]
fn once_the_spare_opens_have_run_out_a_fresh_file_still_tells_who_holds_it() {
    if is_child(RUN_OUT) {
        return run_out_child();
    }
    let Some((stdout, stderr)) = run_passing_child_without_proc(RUN_OUT, b"") else {
        return;
    };
    assert!(!stdout.contains("LATE-AFTER-SPARES"), "{stdout}");
    assert!(
        stderr.contains("[capture, late] LATE-AFTER-SPARES\n"),
        "{stderr}"
    );
    assert!(stderr.contains("RUN-OUT-DONE"), "{stderr}");
}

/// A capture that lasts long enough to have started a process, so that its end asks (and uses
/// up a spare open).
fn asking_capture() -> mcpline_core::Captured {
    let capture = Capture::begin().expect("begin");
    std::thread::sleep(Duration::from_millis(1));
    capture.finish().expect("finish")
}

fn run_out_child() {
    // More asking captures than one file has spare opens.
    for _ in 0..20 {
        assert!(asking_capture().is_empty());
    }
    // A shell started unreported leaves a writer behind and exits within the capture.
    let capture = Capture::begin().expect("begin");
    let status = Command::new("sh")
        .args(["-c", "(sleep 0.2; echo LATE-AFTER-SPARES) &"])
        .status();
    assert!(status.expect("run the shell").success());
    assert!(capture.finish().expect("finish").is_empty());
    // Captures while the writer writes: none of them gets its line.
    let deadline = Instant::now() + Duration::from_millis(600);
    while Instant::now() < deadline {
        let later = asking_capture();
        assert!(
            later.is_empty(),
            "a later capture got {:?}",
            later.tail_text(200)
        );
    }
    err("RUN-OUT-DONE\n");
}
