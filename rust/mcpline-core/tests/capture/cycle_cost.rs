//! An empty begin/finish cycle costs a handful of system calls: it stays far below the budget
//! of a tool call. The child prints `NS_PER_CYCLE=<n>` on its stdout.

use std::time::Instant;

use crate::support::{describe, is_child, out, run_child};
use mcpline_core::Capture;

const TEST: &str = "cycle_cost::empty_capture_cycle_is_cheap";
/// Fewer on Windows, where tests may run under wine (milliseconds per cycle).
const CYCLES: u32 = if cfg!(windows) { 500 } else { 20_000 };
/// Generous: a debug build on a slow CI machine (or wine). Release builds on Linux measure
/// a few microseconds, about ten system calls.
const LIMIT_NS: u128 = if cfg!(windows) { 20_000_000 } else { 200_000 };

#[test]
fn empty_capture_cycle_is_cheap() {
    if is_child(TEST) {
        return child();
    }
    let output = run_child(TEST, b"");
    assert!(output.status.success(), "{}", describe(&output));
    let stdout = String::from_utf8_lossy(&output.stdout);
    let ns: u128 = stdout
        .lines()
        .find_map(|line| line.split_once("NS_PER_CYCLE=").map(|(_, value)| value))
        .and_then(|value| value.parse().ok())
        .unwrap_or_else(|| panic!("no measurement\n{}", describe(&output)));
    assert!(ns < LIMIT_NS, "an empty capture cycle took {ns} ns");
}

fn child() {
    for _ in 0..CYCLES / 20 {
        Capture::begin().expect("begin").finish().expect("finish");
    }
    let start = Instant::now();
    for _ in 0..CYCLES {
        let captured = Capture::begin().expect("begin").finish().expect("finish");
        assert!(captured.is_empty());
    }
    let ns = start.elapsed().as_nanos() / u128::from(CYCLES);
    // libtest may have left "test ... " unterminated on this line.
    out(&format!("\nNS_PER_CYCLE={ns}\n"));
}
