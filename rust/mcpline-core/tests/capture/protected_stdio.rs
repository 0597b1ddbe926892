//! `ProtectedStdio::install` moves the protocol streams aside: writes to fd 1 (Rust, raw, child
//! processes) land on the real stderr, fd 0 reads end-of-file at once, and the protocol streams
//! reach the real stdin and stdout. A capture inside the protection restores to the protected
//! state, not to the real stdout.

use std::io::{BufRead, BufReader, Read, Write};
use std::process::Command;

use crate::support::{is_child, out, run_passing_child};
use mcpline_core::{Capture, ProtectedStdio};

const TEST: &str = "protected_stdio::protected_stdio_diverts_fd1_and_silences_fd0";

#[test]
fn protected_stdio_diverts_fd1_and_silences_fd0() {
    if is_child(TEST) {
        return child();
    }
    let (stdout, stderr) = run_passing_child(TEST, b"PROTOCOL-LINE\n");
    for stray in ["STRAY-RUST", "STRAY-CHILD", "STRAY-AGAIN"] {
        assert!(
            !stdout.contains(stray),
            "{stray} reached the protocol stream:\n{stdout}"
        );
        assert!(
            stderr.contains(stray),
            "{stray} did not reach the real stderr:\n{stderr}"
        );
    }
    #[cfg(unix)]
    assert!(
        stderr.contains("STRAY-RAW") && !stdout.contains("STRAY-RAW"),
        "{stdout}\n{stderr}"
    );
    assert!(
        stderr.contains("CHILD-READ:[]"),
        "a child read something from fd 0:\n{stderr}"
    );
    assert!(stdout.contains("PROTOCOL-OUT:PROTOCOL-LINE\n"), "{stdout}");
    assert!(stdout.contains("PROTOCOL-AFTER-DROP\n"), "{stdout}");
    assert!(stdout.contains("AFTER-DROP\n"), "{stdout}");
    assert!(
        !stdout.contains("CAPTURED") && !stderr.contains("CAPTURED"),
        "{stdout}\n{stderr}"
    );
}

/// A child that writes a line to its stdout and reports what it reads from its stdin.
fn stray_child() -> Command {
    #[cfg(unix)]
    {
        let mut command = Command::new("sh");
        command.args([
            "-c",
            "echo STRAY-CHILD; read line; echo \"CHILD-READ:[$line]\"",
        ]);
        command
    }
    #[cfg(windows)]
    {
        use std::os::windows::process::CommandExt;
        let mut command = Command::new("cmd");
        // `%line%` would expand before `set /p` runs; `if defined` tells whether it read a line.
        command.arg("/C").raw_arg(
            "echo STRAY-CHILD& set /p line=& if defined line (echo CHILD-READ:[%line%]) else \
             echo CHILD-READ:[]",
        );
        command
    }
}

fn child() {
    let mut protected = ProtectedStdio::install().expect("install");
    let (input, mut output) = protected.take_streams();
    let second_take = protected.try_take_streams();
    let installed = ProtectedStdio::is_installed();

    out("STRAY-RUST\n");
    #[cfg(unix)]
    crate::support::raw_write(1, "STRAY-RAW\n");
    let child_status = stray_child().status().expect("run the stray child");
    let mut from_fd0 = Vec::new();
    let fd0_read = std::io::stdin()
        .read_to_end(&mut from_fd0)
        .expect("read fd 0");

    let mut line = String::new();
    BufReader::new(input)
        .read_line(&mut line)
        .expect("read the protocol input");
    output
        .write_all(format!("PROTOCOL-OUT:{line}").as_bytes())
        .expect("protocol write");

    let capture = Capture::begin().expect("begin inside the protection");
    out("CAPTURED-INSIDE\n");
    let captured = capture.finish().expect("finish");
    out("STRAY-AGAIN\n");

    drop(protected);
    out("AFTER-DROP\n");
    output
        .write_all(b"PROTOCOL-AFTER-DROP\n")
        .expect("protocol stream outlives the guard");

    assert!(second_take.is_none(), "take_streams gives the streams once");
    assert!(installed && !ProtectedStdio::is_installed());
    assert!(child_status.success());
    assert_eq!(
        (fd0_read, from_fd0.as_slice()),
        (0, &b""[..]),
        "fd 0 must read end-of-file"
    );
    assert_eq!(line, "PROTOCOL-LINE\n");
    assert_eq!(
        captured.read_all().expect("read capture"),
        b"CAPTURED-INSIDE\n"
    );
}
