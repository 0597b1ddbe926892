//! `Captured::tail_text` keeps the last bytes, marks what it left out, and never splits a
//! character at the cut.

use crate::support::{capture_of, err, is_child, run_passing_child};

const TEST: &str = "tail_text::tail_text_marks_truncation_and_cuts_on_a_char_boundary";

#[test]
fn tail_text_marks_truncation_and_cuts_on_a_char_boundary() {
    if is_child(TEST) {
        return child();
    }
    let (_, stderr) = run_passing_child(TEST, b"");
    assert!(stderr.contains("TAIL-DONE"), "{stderr}");
}

/// Splits `text` into (hidden byte count, body) at the truncation marker, if any.
fn split_marker(text: &str) -> (usize, &str) {
    let Some(rest) = text.strip_prefix("[… ") else {
        return (0, text);
    };
    let (count, body) = rest
        .split_once(" earlier bytes not shown …]\n")
        .expect("marker shape");
    (count.parse().expect("marker count"), body)
}

fn child() {
    // ASCII, 2-, 3- and 4-byte characters in a row, so every cut lands somewhere different.
    let original = "ab é € 😀 ".repeat(40) + "end of the tail";
    let text_capture = capture_of(original.as_bytes());
    let short = capture_of(b"0123456789ABCDEFGHIJ");
    let invalid = capture_of(b"ok \xff\xfe bytes");
    let empty = capture_of(b"");
    err("TAIL-DONE\n");

    assert_eq!(text_capture.len(), original.len() as u64);
    for limit in 0..=original.len() + 3 {
        let tail = text_capture.tail_text(limit);
        assert!(
            !tail.contains('\u{FFFD}'),
            "limit {limit}: replacement char in {tail:?}"
        );
        let (hidden, body) = split_marker(&tail);
        assert_eq!(
            hidden + body.len(),
            original.len(),
            "limit {limit}: {tail:?}"
        );
        assert_eq!(
            body,
            &original[hidden..],
            "limit {limit}: body is not the suffix"
        );
        assert!(
            body.len() <= limit,
            "limit {limit}: body has {} bytes",
            body.len()
        );
        assert!(
            body.len() + 3 >= limit.min(original.len()),
            "limit {limit}: cut too much"
        );
        assert_eq!(
            hidden > 0,
            limit < original.len(),
            "limit {limit}: marker presence"
        );
    }

    assert_eq!(short.tail_text(100), "0123456789ABCDEFGHIJ");
    assert_eq!(short.tail_text(20), "0123456789ABCDEFGHIJ");
    assert_eq!(
        short.tail_text(10),
        "[… 10 earlier bytes not shown …]\nABCDEFGHIJ"
    );
    assert_eq!(short.tail_text(0), "[… 20 earlier bytes not shown …]\n");
    assert_eq!(invalid.tail_text(100), "ok \u{FFFD}\u{FFFD} bytes");
    assert!(empty.is_empty());
    assert_eq!(empty.tail_text(10), "");
}
