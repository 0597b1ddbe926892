//! While stdio is protected, a finished capture leaves fds 1 and 2 parked on its file for the
//! next capture (no `dup2` between calls). Parking never changes what a capture holds: bytes
//! written while parked belong to no capture and reach the real stderr; `settle`, or ending the
//! protection, points the descriptors back. Parking is the cell's own decision: it is observed
//! here through what fd 1 points at.

use std::time::{Duration, Instant};

use crate::support::{err, is_child, out, run_passing_child};
use mcpline_core::{Capture, ProtectedStdio, is_capturing, note_spawn, settle};

const TEST: &str = "parking::parked_descriptors_never_change_what_a_capture_holds";

#[test]
fn parked_descriptors_never_change_what_a_capture_holds() {
    if is_child(TEST) {
        return child();
    }
    let (stdout, stderr) = run_passing_child(TEST, b"");
    assert!(stderr.contains("BETWEEN-CALLS\n"), "{stderr}");
    assert_eq!(stderr.matches("STRAY-ONCE").count(), 1, "{stderr}");
    assert!(stderr.contains("AFTER-UNPARK\n"), "{stderr}");
    assert!(
        stdout.contains("AFTER-PROTECTION\n"),
        "stdout:\n{stdout}\nstderr:\n{stderr}"
    );
    for captured in ["LOUD-1", "LOUD-2", "LOUD-3", "LOUD-4", "LOUD-5", "HELD"] {
        assert!(!stderr.contains(captured), "{captured} leaked: {stderr}");
    }
    assert!(stderr.contains("PARKING-DONE"), "{stderr}");
}

#[test]
fn a_file_parked_while_a_process_started_is_never_used_again() {
    const TEST: &str = "parking::a_file_parked_while_a_process_started_is_never_used_again";
    if is_child(TEST) {
        let _protected = ProtectedStdio::install().expect("install");
        let parked = quiet_then_park();
        // A background thread starts a process, which inherits fds 1 and 2 parked on the file.
        let mut holder = lingering_child().spawn().expect("spawn a child");
        note_spawn();
        for text in ["AFTER-SPAWN-1\n", "AFTER-SPAWN-2\n"] {
            let capture = Capture::begin().expect("begin");
            if parked.is_some() {
                assert_ne!(fd1(), parked, "the file a process may hold is not reused");
            }
            out(text);
            assert_eq!(
                capture.finish().expect("finish").read_all().unwrap(),
                text.as_bytes()
            );
        }
        settle().expect("settle");
        assert!(holder.wait().expect("wait").success());
        err("SPAWN-DONE\n");
        return;
    }
    let (_, stderr) = run_passing_child(TEST, b"");
    assert!(stderr.contains("SPAWN-DONE"), "{stderr}");
}

/// A child that holds its inherited fds 1 and 2 for a moment and writes nothing.
fn lingering_child() -> std::process::Command {
    #[cfg(unix)]
    {
        let mut command = std::process::Command::new("sh");
        command.args(["-c", "sleep 0.3"]);
        command
    }
    #[cfg(windows)]
    {
        use std::os::windows::process::CommandExt;
        let mut command = std::process::Command::new("cmd");
        command.arg("/C").raw_arg("ping -n 2 127.0.0.1 >NUL");
        command
    }
}

/// What fd 1 points at (device and inode), where the platform can tell.
fn fd1() -> Option<(u64, u64)> {
    #[cfg(unix)]
    {
        use std::os::unix::fs::MetadataExt as _;
        let meta = std::fs::metadata("/dev/fd/1").expect("stat fd 1");
        Some((meta.dev(), meta.ino()))
    }
    #[cfg(not(unix))]
    {
        None
    }
}

/// A capture that lasts this long may have started a process nobody reported, so its end
/// points fds 1 and 2 home and asks whether anybody still holds its file instead of parking
/// (the cell's `SPAWN_TAKES`). A capture the test saw end sooner, from `begin` to `finish`,
/// lasted less than that to the cell too, and must park; on a busy machine one may not.
const MAY_HAVE_STARTED_A_PROCESS: Duration = Duration::from_micros(50);

/// Asserts that fd 1 is still `during`, parked, if the capture begun at `began` was quick
/// enough that it must have parked; answers whether it was.
fn parked_if_quick(began: Instant, during: Option<(u64, u64)>, what: &str) -> bool {
    let quick = began.elapsed() < MAY_HAVE_STARTED_A_PROCESS;
    if quick {
        assert_eq!(fd1(), during, "{what}");
    }
    quick
}

/// An empty capture while protected; returns the file fd 1 is parked on, or `None` where that
/// cannot be told or the capture was too slow to be sure it parked.
fn quiet_then_park() -> Option<(u64, u64)> {
    let began = Instant::now();
    let capture = Capture::begin().expect("begin");
    let during = fd1();
    let captured = capture.finish().expect("finish");
    assert!(captured.is_empty());
    let quick = parked_if_quick(began, during, "an empty capture parks while protected");
    assert!(!is_capturing());
    during.filter(|_| quick)
}

fn loud(text: &str) -> Vec<u8> {
    loud_parked(text).0
}

/// What a capture of `text` holds, and whether it was quick enough that it must have parked.
fn loud_parked(text: &str) -> (Vec<u8>, bool) {
    let began = Instant::now();
    let capture = Capture::begin().expect("begin");
    assert!(is_capturing());
    let during = fd1();
    out(text);
    let captured = capture.finish().expect("finish");
    let quick = parked_if_quick(began, during, "a capture that holds bytes parks too");
    (captured.read_all().expect("read"), quick)
}

fn child() {
    // Without protection nothing parks.
    let before = fd1();
    let capture = Capture::begin().expect("begin");
    assert!(capture.finish().expect("finish").is_empty());
    assert_eq!(fd1(), before);

    let mut protected = ProtectedStdio::install().expect("install");
    let streams = protected.take_streams();

    // Quiet, quiet, loud: the loud capture starts on the parked file and holds only its bytes.
    let parked = quiet_then_park();
    let capture = Capture::begin().expect("begin from parked");
    if parked.is_some() {
        assert_eq!(fd1(), parked, "the next capture takes the parked file over");
    }
    assert!(capture.finish().expect("park again").is_empty());
    assert_eq!(loud("LOUD-1\n"), b"LOUD-1\n");
    // The next capture takes the parked file over: it holds only its own bytes, which follow
    // the last call's.
    assert_eq!(loud("LOUD-3\n"), b"LOUD-3\n");

    // A result still being read keeps its bytes: the next capture gets a file of its own.
    let capture = Capture::begin().expect("begin");
    out("HELD\n");
    let held = capture.finish().expect("finish");
    assert_eq!(loud("LOUD-4\n"), b"LOUD-4\n");
    assert_eq!(held.read_all().expect("read held"), b"HELD\n");
    drop(held);

    // Bytes written between calls reach the real stderr once, also when the parked file they
    // landed in cannot be taken over (a result still reads it).
    let capture = Capture::begin().expect("begin");
    out("HELD-2\n");
    let held = capture.finish().expect("finish");
    err("STRAY-ONCE\n");
    assert_eq!(loud("LOUD-5\n"), b"LOUD-5\n");
    assert_eq!(held.read_all().expect("read held"), b"HELD-2\n");
    drop(held);

    // The same with a large result; once nothing reads it, its file is emptied and taken over.
    let big = "B".repeat(1023) + "\n";
    let capture = Capture::begin().expect("begin");
    let large = fd1();
    for _ in 0..300 {
        out(&big);
    }
    let held = capture.finish().expect("finish");
    assert_eq!(loud("SMALL-1\n"), b"SMALL-1\n");
    if large.is_some() {
        assert_ne!(fd1(), large, "a file still read is not emptied");
    }
    assert_eq!(held.read_all().expect("read held").len(), 300 * 1024);
    drop(held);
    let capture = Capture::begin().expect("begin");
    let before = fd1();
    for _ in 0..300 {
        out(&big);
    }
    assert_eq!(capture.finish().expect("finish").len(), 300 * 1024);
    let (small, quick) = loud_parked("SMALL-2\n");
    assert_eq!(small, b"SMALL-2\n");
    if let (true, Some(_), Some(file)) = (quick, before, std::fs::metadata("/dev/fd/1").ok()) {
        assert_eq!(fd1(), before, "an unread file is emptied and taken over");
        assert!(file.len() < 1024, "emptied: {} bytes", file.len());
    }

    // Bytes written while parked go to the real stderr, not into the next capture.
    quiet_then_park();
    err("BETWEEN-CALLS\n");
    assert_eq!(loud("LOUD-2\n"), b"LOUD-2\n");

    // Unparking points fds 1 and 2 back at once (fd 1 is the stderr copy while protected).
    let parked = quiet_then_park();
    settle().expect("settle");
    if parked.is_some() {
        assert_ne!(fd1(), parked);
    }
    out("AFTER-UNPARK\n");

    // Ending the protection while parked restores the real stdout.
    let parked = quiet_then_park();
    protected.restore().expect("restore");
    if parked.is_some() {
        assert_ne!(fd1(), parked);
    }
    drop(streams);
    out("AFTER-PROTECTION\n");
    err("PARKING-DONE\n");
}

#[cfg(unix)]
#[test]
fn a_capture_whose_tool_closed_fd_2_does_not_park_on_a_free_slot() {
    const TEST: &str = "parking::a_capture_whose_tool_closed_fd_2_does_not_park_on_a_free_slot";
    if is_child(TEST) {
        use std::io::{Read as _, Seek as _, SeekFrom, Write as _};
        let _protected = ProtectedStdio::install().expect("install");
        let capture = Capture::begin().expect("begin");
        out("A\n");
        // SAFETY: closing fd 2 is what the case is about; nothing in this child owns it.
        #[allow(unsafe_code)]
        unsafe {
            libc::close(2);
        }
        drop(capture.finish().expect("finish"));
        // A file opened now must not get fd 2, which the next capture would point elsewhere.
        let mut mine = tempfile::tempfile().expect("tempfile");
        let capture = Capture::begin().expect("begin");
        drop(capture.finish().expect("finish"));
        settle().expect("settle");
        mine.write_all(b"MINE\n").expect("write");
        mine.seek(SeekFrom::Start(0)).expect("seek");
        let mut back = String::new();
        mine.read_to_string(&mut back).expect("read");
        assert_eq!(back, "MINE\n");
        err("CLOSED-FD2-DONE\n");
        return;
    }
    let (_, stderr) = run_passing_child(TEST, b"");
    assert!(stderr.contains("CLOSED-FD2-DONE"), "{stderr}");
    assert!(!stderr.contains("MINE"), "{stderr}");
}
