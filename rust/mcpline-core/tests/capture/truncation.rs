//! A truncating open of fd 1 or 2 during a capture (`> /dev/stderr` in a shell, C's
//! `fopen("/dev/stderr", "w")`, neither reported to the cell) loses nothing: on Linux fds 1 and 2
//! write through a pipe, which such an open reaches without emptying anything; on macOS the
//! system makes such an open a duplicate of fd 2, truncation ignored. Calls after it get only
//! their own bytes, whether the file is parked, reused or emptied for them, and a result still
//! being read never loses bytes to the next call.

use std::io::Write as _;

use crate::support::{err, is_child, out, run_passing_child};
#[cfg(target_os = "linux")]
use mcpline_core::set_capture_cap;
use mcpline_core::{Capture, ProtectedStdio, settle};

/// Fd 2's path, which opens it anew (Linux) or duplicates it (macOS).
#[cfg(target_os = "linux")]
const FD_2: &str = "/proc/self/fd/2";
#[cfg(not(target_os = "linux"))]
const FD_2: &str = "/dev/fd/2";

/// Opens the capture file again through fd 2's path, truncating it, and writes `text`.
fn truncate_and_write(text: &str) {
    let mut again = std::fs::OpenOptions::new()
        .write(true)
        .truncate(true)
        .open(FD_2)
        .expect("open fd 2's path for writing");
    again.write_all(text.as_bytes()).expect("write");
}

fn call(text: &str) -> Vec<u8> {
    let capture = Capture::begin().expect("begin");
    out(text);
    capture.finish().expect("finish").read_all().expect("read")
}

#[test]
fn a_truncating_open_loses_nothing_and_later_calls_get_only_their_own_bytes() {
    const TEST: &str =
        "truncation::a_truncating_open_loses_nothing_and_later_calls_get_only_their_own_bytes";
    if is_child(TEST) {
        for protected in [false, true] {
            let protection = protected.then(|| ProtectedStdio::install().expect("install"));
            assert_eq!(call("ONE\n"), b"ONE\n");
            let capture = Capture::begin().expect("begin");
            out("TWO-BEFORE\n");
            truncate_and_write("TRUNCATED\n");
            out("TWO-AFTER\n");
            let two = capture.finish().expect("finish").read_all().expect("read");
            assert_eq!(
                two, b"TWO-BEFORE\nTRUNCATED\nTWO-AFTER\n",
                "nothing emptied"
            );
            for text in ["THREE\n", "FOUR\n", "FIVE\n"] {
                assert_eq!(call(text), text.as_bytes(), "protected: {protected}");
            }
            settle().expect("settle");
            if let Some(protection) = protection {
                protection.restore().expect("restore");
            }
        }
        err("TRUNCATION-DONE\n");
        return;
    }
    let (_, stderr) = run_passing_child(TEST, b"");
    assert!(stderr.contains("TRUNCATION-DONE"), "{stderr}");
}

#[test]
fn a_file_refilled_past_the_refill_size_is_emptied_to_a_clean_start() {
    const TEST: &str =
        "truncation::a_file_refilled_past_the_refill_size_is_emptied_to_a_clean_start";
    if is_child(TEST) {
        // What follows the truncation is more than the file is kept going for: the next
        // capture empties it, and must not keep the truncating writer's first byte.
        let big = "Z".repeat(70 * 1024) + "\n";
        let capture = Capture::begin().expect("begin");
        truncate_and_write(&big);
        let first = capture.finish().expect("finish");
        assert_eq!(first.len(), big.len() as u64);
        drop(first);
        for text in ["TWO\n", "THREE\n"] {
            assert_eq!(call(text), text.as_bytes());
        }
        err("TRUNCATION-DONE\n");
        return;
    }
    let (_, stderr) = run_passing_child(TEST, b"");
    assert!(stderr.contains("TRUNCATION-DONE"), "{stderr}");
}

#[cfg(target_os = "linux")]
#[test]
fn a_result_still_read_keeps_its_bytes_when_the_next_capture_passes_the_cap() {
    const TEST: &str =
        "truncation::a_result_still_read_keeps_its_bytes_when_the_next_capture_passes_the_cap";
    if is_child(TEST) {
        set_capture_cap(64 * 1024);
        let _protection = ProtectedStdio::install().expect("install");
        let capture = Capture::begin().expect("begin");
        out("HELD\n");
        let held = capture.finish().expect("finish");
        // The next capture passes the cap: the watcher moves its front to the log and gives the
        // room back. The held result's bytes must not be part of that room.
        let capture = Capture::begin().expect("begin");
        let line = "Y".repeat(1023) + "\n";
        for _ in 0..200 {
            out(&line);
        }
        std::thread::sleep(std::time::Duration::from_millis(400));
        drop(capture.finish().expect("finish"));
        assert_eq!(held.read_all().expect("read held"), b"HELD\n");
        settle().expect("settle");
        err("TRUNCATION-DONE\n");
        return;
    }
    let (_, stderr) = run_passing_child(TEST, b"");
    assert!(stderr.contains("TRUNCATION-DONE"), "{stderr}");
}
