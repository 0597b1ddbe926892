//! Every descriptor the cell keeps for itself (saved copies, the capture file's reading handle,
//! the spare file, the protocol streams) is close-on-exec, so children never inherit it, while
//! fds 0, 1 and 2 stay inheritable.
#![allow(unsafe_code)]

use std::collections::BTreeSet;

use crate::support::{err, is_child, run_passing_child};
use mcpline_core::{Capture, ProtectedStdio};

const TEST: &str = "cloexec::descriptors_kept_by_the_cell_are_close_on_exec";

#[test]
fn descriptors_kept_by_the_cell_are_close_on_exec() {
    if is_child(TEST) {
        return child();
    }
    let (_, stderr) = run_passing_child(TEST, b"");
    assert!(stderr.contains("CLOEXEC-DONE"), "{stderr}");
}

fn open_descriptors() -> BTreeSet<i32> {
    let mut fds: BTreeSet<i32> = std::fs::read_dir("/proc/self/fd")
        .expect("list /proc/self/fd")
        .map(|entry| {
            entry
                .expect("entry")
                .file_name()
                .to_string_lossy()
                .parse()
                .expect("fd")
        })
        .collect();
    // The directory stream's own descriptor is closed by now.
    fds.retain(|&fd| {
        // SAFETY: F_GETFD only queries a flag of a descriptor number.
        unsafe { libc::fcntl(fd, libc::F_GETFD) >= 0 }
    });
    fds
}

/// The descriptors opened since `before` that children would inherit, and fds 0-2 that they
/// would not.
fn wrong_flags(before: &BTreeSet<i32>) -> Vec<(i32, bool)> {
    open_descriptors()
        .into_iter()
        .filter_map(|fd| {
            // SAFETY: F_GETFD only queries a flag of a descriptor number.
            let cloexec = unsafe { libc::fcntl(fd, libc::F_GETFD) } & libc::FD_CLOEXEC != 0;
            let new = !before.contains(&fd);
            let wrong = if fd <= 2 { cloexec } else { new && !cloexec };
            wrong.then_some((fd, cloexec))
        })
        .collect()
}

fn child() {
    let before = open_descriptors();

    let mut protected = ProtectedStdio::install().expect("install");
    let streams = protected.take_streams();
    let while_protected = wrong_flags(&before);

    let capture = Capture::begin().expect("begin");
    let while_capturing = wrong_flags(&before);
    err("bytes so that the file is kept by the Captured\n");
    let captured = capture.finish().expect("finish");
    let after_finish = wrong_flags(&before);
    let empty = Capture::begin().expect("begin").finish().expect("finish"); // leaves a spare
    let with_spare = wrong_flags(&before);

    drop((protected, streams, captured, empty));
    let after_all = wrong_flags(&before);

    assert_eq!(
        while_protected,
        [],
        "(fd, close-on-exec) with the wrong flag"
    );
    assert_eq!(
        while_capturing,
        [],
        "(fd, close-on-exec) with the wrong flag"
    );
    assert_eq!(after_finish, [], "(fd, close-on-exec) with the wrong flag");
    assert_eq!(with_spare, [], "(fd, close-on-exec) with the wrong flag");
    assert_eq!(after_all, [], "(fd, close-on-exec) with the wrong flag");
    err("CLOEXEC-DONE\n");
}
