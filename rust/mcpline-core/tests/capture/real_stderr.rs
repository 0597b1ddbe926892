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

const RACE: &str = "real_stderr::log_lines_written_while_captures_come_and_go_never_enter_them";

/// Where the real stderr is, is decided and pinned under the cell's lock: a capture that begins
/// between that decision and the write cannot take the line.
#[test]
fn log_lines_written_while_captures_come_and_go_never_enter_them() {
    if is_child(RACE) {
        return race_child();
    }
    let (_, stderr) = run_passing_child(RACE, b"");
    assert!(stderr.contains("RACE-DONE"), "{stderr}");
}

fn race_child() {
    use std::sync::Arc;
    use std::sync::atomic::{AtomicBool, Ordering};

    let stop = Arc::new(AtomicBool::new(false));
    // Several loggers contend for the cell's lock with the captures, so a capture often takes
    // the lock right after a logger decided where its line goes.
    let loggers: Vec<_> = (0..4)
        .map(|_| {
            let stop = Arc::clone(&stop);
            std::thread::spawn(move || {
                while !stop.load(Ordering::Relaxed) {
                    write_real_stderr(b"LOG-LINE\n").expect("log");
                }
            })
        })
        .collect();
    // Unprotected captures first, then captures inside the protection (which keeps copies of
    // fds 1 and 2 between captures, and parks empty ones).
    let mut leaked = 0;
    for round in 0..2 {
        let protected = (round == 1).then(|| ProtectedStdio::install().expect("install"));
        for _ in 0..2000 {
            let capture = Capture::begin().expect("begin");
            err("T");
            let text = capture.finish().expect("finish").read_all().expect("read");
            if text != b"T" {
                leaked += 1;
            }
        }
        if let Some(mut protected) = protected {
            drop(protected.take_streams());
            protected.restore().expect("restore");
        }
    }
    stop.store(true, Ordering::Relaxed);
    for logger in loggers {
        logger.join().expect("logger");
    }
    assert_eq!(leaked, 0, "log lines entered {leaked} captures");
    err("RACE-DONE\n");
}
