//! On Linux fds 1 and 2 write through a pipe during a capture, which holds 1 MiB: whoever writes
//! more than that waits until the cell moves it into the capture file. Nobody waits for long,
//! whatever the cell is doing meanwhile, and a child still holding the pipe is never cut off.
#![allow(unsafe_code)]

use std::fs::OpenOptions;
use std::os::fd::AsRawFd as _;
use std::process::Command;
use std::thread;
use std::time::Duration;

use crate::support::{err, is_child, run_passing_child};
use mcpline_core::{Capture, ProtectedStdio, new_member, settle, write_attributed};

/// More than a pipe outlet holds.
const MORE_THAN_A_PIPE: usize = 3 * 1024 * 1024;

/// Ends the child with exit code 3 if it is still running after `seconds`: a hang fails the
/// test instead of stalling the run. (`_exit`: `exit` would flush C stdio into the very pipe a
/// hung writer waits on.)
fn watchdog(seconds: u64) {
    thread::spawn(move || {
        thread::sleep(Duration::from_secs(seconds));
        // SAFETY: _exit ends the process at once; it touches no memory of ours.
        unsafe { libc::_exit(3) };
    });
}

#[test]
fn a_write_for_a_call_through_a_reopened_fd_2_does_not_wait_on_the_cell() {
    const TEST: &str =
        "pipe_outlet::a_write_for_a_call_through_a_reopened_fd_2_does_not_wait_on_the_cell";
    if is_child(TEST) {
        watchdog(20);
        let (a, b) = (new_member(), new_member());
        let first = Capture::begin_call(a, "a #1".into()).expect("begin a");
        let second = Capture::begin_call(b, "b #2".into()).expect("b joins");
        // fd 2 opened anew (C's `freopen("/dev/stderr", "w", stderr)` does this): the same
        // pipe, through a description the cell did not make.
        let again = OpenOptions::new()
            .write(true)
            .open("/proc/self/fd/2")
            .expect("open fd 2 anew");
        // SAFETY: dup2 copies a descriptor `again` keeps open onto fd 2.
        assert_eq!(unsafe { libc::dup2(again.as_raw_fd(), 2) }, 2, "dup2");
        let bytes = vec![b'x'; MORE_THAN_A_PIPE];
        let mut written = 0;
        while written < bytes.len() {
            written += write_attributed(a, 2, &bytes[written..]).expect("write for a");
        }
        let first = first.finish().expect("finish a");
        let second = second.finish().expect("finish b");
        let total = first.len() + second.len();
        assert!(total >= MORE_THAN_A_PIPE as u64, "captured {total} bytes");
        err("REOPENED-DONE\n");
        return;
    }
    let (_, stderr) = run_passing_child(TEST, b"");
    assert!(stderr.contains("REOPENED-DONE"), "{stderr}");
}

#[test]
fn a_thread_writing_a_lot_between_calls_does_not_wait_for_the_next_one() {
    const TEST: &str =
        "pipe_outlet::a_thread_writing_a_lot_between_calls_does_not_wait_for_the_next_one";
    if is_child(TEST) {
        watchdog(20);
        let protection = ProtectedStdio::install().expect("install");
        let capture = Capture::begin().expect("begin");
        drop(capture.finish().expect("finish")); // parks: fds 1 and 2 stay on the pipe
        // Nobody settles or begins another capture while this writes.
        let writer = thread::spawn(|| {
            let line = "background line\n".repeat(1024);
            let mut written = 0;
            while written < MORE_THAN_A_PIPE {
                err(&line);
                written += line.len();
            }
        });
        writer.join().expect("the writer");
        settle().expect("settle");
        protection.restore().expect("restore");
        err("PARKED-DONE\n");
        return;
    }
    let (_, stderr) = run_passing_child(TEST, b"");
    assert!(stderr.contains("PARKED-DONE"), "{stderr}");
    let passed_on = stderr.matches("[background] background line").count();
    assert!(
        passed_on >= MORE_THAN_A_PIPE / "background line\n".len(),
        "{passed_on} lines passed on"
    );
}

#[test]
fn a_capture_dropped_unfinished_leaves_its_childs_output_a_way_out() {
    const TEST: &str =
        "pipe_outlet::a_capture_dropped_unfinished_leaves_its_childs_output_a_way_out";
    if is_child(TEST) {
        let capture = Capture::begin().expect("begin");
        // Not reported to the cell, as a C library's own `posix_spawn` is not.
        let mut child = Command::new("sh")
            .args(["-c", "sleep 0.3; echo CHILD-LATE"])
            .spawn()
            .expect("spawn sh");
        drop(capture);
        let status = child.wait().expect("wait for sh");
        assert!(status.success(), "the child ended with {status}");
        thread::sleep(Duration::from_millis(300)); // its line on its way to the log
        err("DROPPED-DONE\n");
        return;
    }
    let (_, stderr) = run_passing_child(TEST, b"");
    assert!(stderr.contains("DROPPED-DONE"), "{stderr}");
    assert!(stderr.contains("[capture, late] CHILD-LATE"), "{stderr}");
}
