//! An empty capture keeps its file for the next capture, but only while nobody writes to it:
//! bytes that reach the kept file between captures (a descriptor that outlived its capture)
//! never show up in the next capture, which starts on a fresh file.

use std::fs::File;
use std::io::Write;
use std::os::fd::AsFd;

use crate::support::{err, is_child, out, run_passing_child};
use mcpline_core::Capture;

const TEST: &str =
    "spare_file::bytes_written_to_the_kept_file_between_captures_stay_out_of_the_next_one";

#[test]
fn bytes_written_to_the_kept_file_between_captures_stay_out_of_the_next_one() {
    if is_child(TEST) {
        return child();
    }
    let (_, stderr) = run_passing_child(TEST, b"");
    assert!(stderr.contains("SPARE-CHECK-DONE"), "{stderr}");
}

fn child() {
    let first = Capture::begin().expect("begin the first capture");
    // A copy of fd 1 taken during the capture points into the capture file after it ends.
    let lingering = std::io::stdout()
        .as_fd()
        .try_clone_to_owned()
        .expect("copy fd 1");
    let captured = first.finish().expect("finish the first capture");
    assert!(captured.is_empty(), "nothing was written during the first");

    File::from(lingering)
        .write_all(b"LATE\n")
        .expect("write through the lingering copy");

    let second = Capture::begin().expect("begin the second capture");
    out("MINE\n");
    let captured = second.finish().expect("finish the second capture");
    let text = String::from_utf8(captured.read_all().expect("read")).expect("utf-8");
    assert_eq!(text, "MINE\n", "only the second capture's own bytes");

    // An untouched kept file is reused and starts empty.
    let third = Capture::begin().expect("begin the third capture");
    let captured = third.finish().expect("finish the third capture");
    assert!(captured.is_empty());
    let fourth = Capture::begin().expect("begin the fourth capture");
    out("FOURTH\n");
    let captured = fourth.finish().expect("finish the fourth capture");
    assert_eq!(captured.read_all().expect("read"), b"FOURTH\n");
    err("SPARE-CHECK-DONE\n");
}
