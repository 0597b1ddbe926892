//! Calls that run at the same time share one capture (`Capture::begin_call`): each gets back
//! its own bytes (written while it ran alone, or through `write_attributed` for it), the bytes
//! written while several ran marked as shared, and fds 1 and 2 come home when the last ends.

use crate::support::{err, is_child, run_passing_child};
use mcpline_core::{Capture, new_member, write_attributed};

const TEST: &str = "shared::overlapping_calls_each_get_their_own_bytes";

#[test]
fn overlapping_calls_each_get_their_own_bytes() {
    if is_child(TEST) {
        return child();
    }
    let (_, stderr) = run_passing_child(TEST, b"");
    assert!(
        stderr.contains("AFTER-BOTH\n"),
        "fd 2 not restored:\n{stderr}"
    );
    for captured in ["alone", "both", "own"] {
        assert!(
            !stderr.contains(captured),
            "captured bytes leaked to stderr:\n{stderr}"
        );
    }
}

fn child() {
    let (a, b) = (new_member(), new_member());
    let first = Capture::begin_call(a, "a #1".into()).expect("begin a");
    err("a alone\n");
    let second = Capture::begin_call(b, "b #2".into()).expect("b joins");
    err("both running\n");
    write_attributed(a, 2, b"a own\n").expect("write for a");
    write_attributed(b, 1, b"b own\n").expect("write for b");
    let first = first.finish().expect("finish a");
    err("b alone\n");
    let second = second.finish().expect("finish b");
    err("AFTER-BOTH\n");

    assert_eq!(
        first.tail_text(usize::MAX),
        "a alone\n[shared with b #2] both running\na own\n"
    );
    assert_eq!(
        second.tail_text(usize::MAX),
        "[shared with a #1] both running\nb own\nb alone\n"
    );
    // The log copy: a's own lines; the shared line only once, by b, the last to end.
    let mut log = Vec::new();
    first.copy_labelled("[a #1] ", &mut log).expect("copy a");
    second.copy_labelled("[b #2] ", &mut log).expect("copy b");
    assert_eq!(
        String::from_utf8(log).expect("utf-8"),
        "[a #1] a alone\n[a #1] a own\n[a #1 + b #2] both running\n[b #2] b own\n[b #2] b alone\n"
    );
    // Once the last call ended, the cell is free for any capture.
    let again = Capture::begin().expect("a capture after the shared one ended");
    drop(again);
}
