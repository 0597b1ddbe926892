//! Many begin/finish cycles (empty ones, ones that captured bytes, ones that ran a child) and
//! protect/restore cycles leave the number of open descriptors (handles on Windows) unchanged.

use std::process::Command;

use crate::support::{err, is_child, run_passing_child};
use mcpline_core::{Capture, ProtectedStdio, is_capturing};

const TEST: &str = "fd_leak::ten_thousand_cycles_leak_no_descriptor";
/// Fewer on Windows, where tests may run under wine (milliseconds per cycle).
const CYCLES: usize = if cfg!(windows) { 1_000 } else { 10_000 };

#[test]
fn ten_thousand_cycles_leak_no_descriptor() {
    if is_child(TEST) {
        return child();
    }
    let (_, stderr) = run_passing_child(TEST, b"");
    assert!(stderr.contains("LEAK-CHECK-DONE"), "{stderr}");
}

#[cfg(target_os = "linux")]
fn open_descriptors() -> usize {
    // The directory stream's own descriptor is counted both times.
    std::fs::read_dir("/proc/self/fd")
        .expect("list /proc/self/fd")
        .count()
}

/// The number of open handles (wine always reports 0).
#[cfg(windows)]
#[allow(unsafe_code)]
fn open_descriptors() -> usize {
    use windows_sys::Win32::System::Threading::{GetCurrentProcess, GetProcessHandleCount};
    let mut count = 0_u32;
    // SAFETY: writes one u32 into a live local; the pseudo-handle needs no closing.
    let ok = unsafe { GetProcessHandleCount(GetCurrentProcess(), &raw mut count) };
    assert_ne!(ok, 0, "GetProcessHandleCount");
    count as usize
}

fn echo() -> Command {
    #[cfg(unix)]
    {
        let mut command = Command::new("sh");
        command.args(["-c", "echo child"]);
        command
    }
    #[cfg(windows)]
    {
        let mut command = Command::new("cmd");
        command.args(["/C", "echo child"]);
        command
    }
}

fn cycle(round: usize) {
    let capture = Capture::begin().expect("begin");
    if round % 3 == 1 {
        err("some bytes\n");
    }
    if round % 1000 == 2 {
        assert!(echo().status().expect("run a child").success());
    }
    let captured = capture.finish().expect("finish");
    assert_eq!(
        captured.is_empty(),
        round % 3 != 1 && round % 1000 != 2,
        "round {round}"
    );
}

fn child() {
    // Warm up: the first cycles create the spare capture file that later cycles keep reusing
    // (and let the runtime allocate whatever it keeps, e.g. for the first child process).
    for round in 0..5 {
        cycle(round);
    }
    cycle(0);
    let before = open_descriptors();
    for round in 0..CYCLES {
        cycle(round);
    }
    for _ in 0..CYCLES / 100 {
        let mut protected = ProtectedStdio::install().expect("install");
        drop(protected.take_streams());
        cycle(1);
        protected.restore().expect("restore");
    }
    // End as the warm-up did: an empty cycle leaves exactly one spare file open.
    cycle(0);
    let after = open_descriptors();
    assert!(!is_capturing());
    // wine reports 0 handles whatever is open: nothing to compare there.
    if before != 0 {
        assert_eq!(before, after, "descriptors leaked over the cycles");
    }
    err("LEAK-CHECK-DONE\n");
}
