//! `write_real_stderr` reaches the process's real stderr whoever holds fd 2: a running capture
//! (also when written from another thread), a parked one, or nobody. The captures keep only
//! what the tool wrote.

use crate::support::{err, is_child, run_passing_child};
use mcpline_core::{Capture, ProtectedStdio, write_real_stderr};

const TEST: &str = "real_stderr::log_lines_reach_the_real_stderr_whoever_holds_fd2";

#[test]
fn log_lines_reach_the_real_stderr_whoever_holds_fd2() {
    if is_child(TEST) {
        return child();
    }
    let (_, stderr) = run_passing_child(TEST, b"");
    for line in [
        "LOG-PLAIN",
        "LOG-DURING",
        "LOG-THREAD",
        "LOG-PARKED",
        "REAL-DONE",
    ] {
        assert!(
            stderr.contains(&format!("{line}\n")),
            "{line} missing:\n{stderr}"
        );
    }
    assert!(
        !stderr.contains("TOOL-"),
        "captured output leaked:\n{stderr}"
    );
}

fn child() {
    write_real_stderr(b"LOG-PLAIN\n").expect("plain write");

    let capture = Capture::begin().expect("begin");
    err("TOOL-1\n");
    write_real_stderr(b"LOG-DURING\n").expect("write during a capture");
    std::thread::spawn(|| write_real_stderr(b"LOG-THREAD\n").expect("write from a thread"))
        .join()
        .expect("thread");
    let captured = capture.finish().expect("finish");
    assert_eq!(captured.read_all().expect("read"), b"TOOL-1\n");

    let mut protected = ProtectedStdio::install().expect("install");
    let streams = protected.take_streams();
    let capture = Capture::begin().expect("begin");
    // An empty capture while protected leaves fd 2 parked on its file.
    assert!(capture.finish().expect("park").is_empty());
    write_real_stderr(b"LOG-PARKED\n").expect("write while parked");
    let capture = Capture::begin().expect("begin from parked");
    err("TOOL-2\n");
    let captured = capture.finish().expect("finish");
    assert_eq!(
        captured.read_all().expect("read"),
        b"TOOL-2\n",
        "the parked file stayed clean"
    );
    protected.restore().expect("restore");
    drop(streams);
    err("REAL-DONE\n");
}
