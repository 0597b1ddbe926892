//! Where a capture file cannot be opened anew (Linux without `/proc`, as on macOS), the cell
//! makes it with spare opens for its outlets; a process short of descriptors for them still
//! gets its output captured.

use std::fs::File;
use std::io::{self, Write};

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
