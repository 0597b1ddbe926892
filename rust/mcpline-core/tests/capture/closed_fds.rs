//! A standard descriptor that is closed when the cell needs it gets the null device parked on
//! it first, so capturing and restoring stay well defined; one the cell does not need (fd 0 for
//! a capture) stays closed rather than silently receiving the capture file.
#![allow(unsafe_code)]

use std::io::Read;
use std::os::fd::{AsRawFd, FromRawFd, OwnedFd};

use crate::support::{err, is_child, raw_write, run_passing_child};
use mcpline_core::{Capture, CaptureError, ProtectedStdio};

const CAPTURE: &str = "closed_fds::capture_parks_the_null_device_on_closed_fd1_and_fd2";
const PROTECT: &str = "closed_fds::protect_handles_a_closed_stdin_and_refuses_a_closed_stdout";

fn close(fd: i32) {
    // SAFETY: closes a standard descriptor that no Rust object owns.
    assert_eq!(unsafe { libc::close(fd) }, 0, "close fd {fd}");
}

/// A close-on-exec copy of `fd`, to bring it back later.
fn keep(fd: i32) -> OwnedFd {
    // SAFETY: F_DUPFD_CLOEXEC creates a new descriptor and passes no memory.
    let copy = unsafe { libc::fcntl(fd, libc::F_DUPFD_CLOEXEC, 3) };
    assert!(copy >= 3, "dup fd {fd}");
    // SAFETY: `copy` was just created and is owned by nobody else.
    unsafe { OwnedFd::from_raw_fd(copy) }
}

fn put_back(saved: &OwnedFd, fd: i32) {
    // SAFETY: repoints a standard descriptor that no Rust object owns.
    assert_eq!(
        unsafe { libc::dup2(saved.as_raw_fd(), fd) },
        fd,
        "dup2 onto fd {fd}"
    );
}

fn target(fd: i32) -> String {
    std::fs::read_link(format!("/proc/self/fd/{fd}")).map_or_else(
        |error| format!("<{error}>"),
        |path| path.display().to_string(),
    )
}

#[test]
fn capture_parks_the_null_device_on_closed_fd1_and_fd2() {
    if is_child(CAPTURE) {
        return capture_child();
    }
    let (_, stderr) = run_passing_child(CAPTURE, b"");
    assert!(stderr.contains("CLOSED-CAPTURE-DONE"), "{stderr}");
    assert!(!stderr.contains("INTO-CAPTURE"), "{stderr}");
}

fn capture_child() {
    let real_stderr = keep(2);
    close(0);
    close(1);
    close(2);
    let capture = Capture::begin();
    if capture.is_ok() {
        raw_write(1, "INTO-CAPTURE 1\n");
        raw_write(2, "INTO-CAPTURE 2\n");
    }
    let captured = capture.map(Capture::finish);
    let (fd0, fd1, fd2) = (target(0), target(1), target(2));
    put_back(&real_stderr, 2);

    let captured = captured
        .expect("begin with fds 1 and 2 closed")
        .expect("finish");
    assert_eq!(
        captured.read_all().expect("read"),
        b"INTO-CAPTURE 1\nINTO-CAPTURE 2\n"
    );
    assert_eq!((fd1.as_str(), fd2.as_str()), ("/dev/null", "/dev/null"));
    // The capture file must not have taken the free fd 0 (a tool would read it as stdin).
    assert!(fd0.starts_with('<'), "fd 0 was taken by {fd0}");
    err("CLOSED-CAPTURE-DONE\n");
}

#[test]
fn protect_handles_a_closed_stdin_and_refuses_a_closed_stdout() {
    if is_child(PROTECT) {
        return protect_child();
    }
    let (stdout, stderr) = run_passing_child(PROTECT, b"unread stdin\n");
    assert!(stderr.contains("CLOSED-PROTECT-DONE"), "{stderr}");
    assert!(stdout.contains("STDOUT-BACK"), "{stdout}");
}

fn protect_child() {
    close(0);
    let mut protected = ProtectedStdio::install().expect("install with stdin closed");
    let (mut input, _output) = protected.take_streams();
    let mut buf = Vec::new();
    assert_eq!(input.read_to_end(&mut buf).expect("read protocol input"), 0);
    assert_eq!(target(0), "/dev/null");
    drop(protected);
    assert_eq!(
        target(0),
        "/dev/null",
        "the parked null device stays on fd 0"
    );

    let real_stdout = keep(1);
    close(1);
    let refused = ProtectedStdio::install().map(drop);
    put_back(&real_stdout, 1);
    let error = refused.expect_err("install with stdout closed");
    assert!(matches!(error, CaptureError::StdoutClosed), "{error:?}");
    assert!(
        error
            .to_string()
            .contains("fd 1 (the protocol output) is closed"),
        "{error}"
    );
    assert!(!ProtectedStdio::is_installed());
    crate::support::out("STDOUT-BACK\n");
    err("CLOSED-PROTECT-DONE\n");
}
