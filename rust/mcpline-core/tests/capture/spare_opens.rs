//! Where a capture file cannot be opened anew (Linux without `/proc`, as on macOS), the cell
//! makes it with spare opens for its outlets: once they have run out, the next capture gets a
//! fresh file that tells who holds it as well; a process short of descriptors for them, or
//! whose `$TMPDIR` refuses the file, still gets its output captured; and a file followed for
//! late output does not keep its spare opens.

use std::fs::File;
use std::io::{self, Write};
use std::process::Command;
use std::time::{Duration, Instant};

use std::os::fd::AsFd;

use crate::support::{
    err, is_child, run_passing_child_without_proc, run_passing_child_without_proc_env,
};
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
    let mut held = all_free_descriptors();
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

/// Every descriptor still free, opened on `/dev/null` (and closed again when dropped).
fn all_free_descriptors() -> Vec<File> {
    let mut held = Vec::new();
    loop {
        match File::open("/dev/null") {
            Ok(file) => held.push(file),
            Err(error) if error.raw_os_error() == Some(24) => return held, // EMFILE
            Err(error) => panic!("open /dev/null: {error}"),
        }
    }
}

const REFUSED: &str = "spare_opens::a_tmpdir_that_refuses_the_file_still_leaves_output_captured";

#[test]
fn a_tmpdir_that_refuses_the_file_still_leaves_output_captured() {
    if is_child(REFUSED) {
        let capture = Capture::begin().expect("begin with $TMPDIR refusing files");
        io::stderr()
            .write_all(b"CAPTURED-IN-MEMORY\n")
            .expect("write");
        let text = capture.finish().expect("finish").read_all().expect("read");
        assert_eq!(text, b"CAPTURED-IN-MEMORY\n");
        err("REFUSED-CHECK-DONE\n");
        return;
    }
    let env = [("TMPDIR", "/nonexistent/mcpline-test")];
    let Some((_, stderr)) = run_passing_child_without_proc_env(REFUSED, b"", &env) else {
        return;
    };
    assert!(stderr.contains("REFUSED-CHECK-DONE"), "{stderr}");
    assert!(!stderr.contains("CAPTURED-IN-MEMORY"), "{stderr}");
}

const FOLLOWED: &str = "spare_opens::a_file_followed_for_late_output_keeps_no_spare_opens";

#[test]
fn a_file_followed_for_late_output_keeps_no_spare_opens() {
    if is_child(FOLLOWED) {
        return followed_child();
    }
    let Some((_, stderr)) = run_passing_child_without_proc(FOLLOWED, b"") else {
        return;
    };
    assert!(stderr.contains("FOLLOWED-CHECK-DONE"), "{stderr}");
}

fn followed_child() {
    const ROUNDS: usize = 10;
    let free_before = all_free_descriptors().len();
    for round in 0..ROUNDS {
        // A quick capture keeps its outlet for the next one; a copy of fd 1 taken meanwhile
        // writes into its file after it ended, so the next capture finds late output there and
        // follows the file instead of reusing it.
        let capture = Capture::begin().expect("begin");
        let lingering = io::stdout()
            .as_fd()
            .try_clone_to_owned()
            .expect("copy fd 1");
        drop(capture.finish().expect("finish"));
        File::from(lingering)
            .write_all(format!("late {round}\n").as_bytes())
            .expect("write late");
    }
    drop(Capture::begin().expect("begin").finish().expect("finish"));
    // Each followed file holds its own descriptor; spare opens kept too would hold eight more.
    let used = free_before - all_free_descriptors().len();
    assert!(
        used <= 2 * ROUNDS + SPARE_OPENS_AND_OUTLET,
        "{used} descriptors held"
    );
    err("FOLLOWED-CHECK-DONE\n");
}

/// The descriptors of the newest file's outlet and spare opens, kept for its next capture.
const SPARE_OPENS_AND_OUTLET: usize = 9;
