//! Framing: one JSON value per line; CRLF, BOM and blank lines tolerated; over-long lines
//! answered and skipped; nothing on a line can stop the server.

use std::collections::HashMap;
use std::time::Duration;

use crate::support::{self, Harness, assert_error, call_req, notif, req, result};
use proptest::prelude::*;
use serde_json::{Value, json};

#[test]
fn a_trailing_carriage_return_is_accepted() {
    let h = Harness::start();
    h.send_raw(b"{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"ping\"}\r".to_vec());
    let response = h.recv();
    assert_eq!(response["id"], 1);
    assert_eq!(*result(&response), json!({}));
}

#[test]
fn a_leading_utf8_bom_is_accepted() {
    let h = Harness::start();
    let mut line = b"\xEF\xBB\xBF".to_vec();
    line.extend_from_slice(br#"{"jsonrpc":"2.0","id":"bom","method":"ping"}"#);
    h.send_raw(line);
    let response = h.recv();
    assert_eq!(response["id"], "bom");
    assert_eq!(*result(&response), json!({}));
}

#[test]
fn blank_lines_are_skipped_without_any_output() {
    let h = Harness::start();
    for blank in [&b""[..], b"\r", b"   ", b"\t \r"] {
        h.send_raw(blank.to_vec());
    }
    h.expect_silence(Duration::from_millis(150));
    h.send(&req(2, "ping", json!({})));
    let response = h.recv();
    assert_eq!(response["id"], 2);
    h.expect_silence(Duration::from_millis(50));
}

#[test]
fn strings_with_newlines_are_written_escaped_on_one_line() {
    let h = Harness::start();
    h.initialize("2025-11-25");
    // `recv` checks that every outgoing line is free of raw line breaks.
    let response = h.call(
        1,
        "echo",
        json!({"text": "line one\nline two\r\n\u{2028}end"}),
    );
    assert_eq!(
        result(&response)["content"][0]["text"],
        "line one\nline two\r\n\u{2028}end"
    );
}

#[test]
fn a_line_over_the_cap_gets_invalid_request_with_its_id_and_the_next_line_is_answered() {
    let h = Harness::start_with_cap(1000);
    h.initialize("2025-11-25");
    let big = call_req(7, "echo", json!({"text": "x".repeat(5000)}));
    h.send(&big);
    let response = h.recv();
    assert_error(&response, -32600, Some(&json!(7)));
    assert!(
        response["error"]["message"]
            .as_str()
            .unwrap_or_default()
            .contains("1000"),
        "the message should name the limit: {response}"
    );
    h.send(&req(8, "ping", json!({})));
    let response = h.recv();
    assert_eq!(response["id"], 8);
    assert_eq!(*result(&response), json!({}));
    assert!(
        h.events().is_empty(),
        "the oversized call must not run: {:?}",
        h.events()
    );
}

#[test]
fn a_line_over_the_cap_without_a_readable_id_gets_an_error_without_id() {
    let h = Harness::start_with_cap(1000);
    // The id sits far past the cap, so it cannot be recovered from the head of the line.
    let big = format!(
        r#"{{"jsonrpc":"2.0","method":"ping","params":{{"pad":"{}"}},"id":9}}"#,
        "y".repeat(10_000)
    );
    h.send_raw(big);
    assert_error(&h.recv(), -32600, None);
    h.send(&req(10, "ping", json!({})));
    assert_eq!(h.recv()["id"], 10);
}

#[test]
fn a_line_just_under_the_cap_is_served_normally() {
    let h = Harness::start_with_cap(1000);
    let line = format!(
        r#"{{"jsonrpc":"2.0","id":1,"method":"ping","params":{{"pad":"{}"}}}}"#,
        "z".repeat(900)
    );
    assert!(line.len() < 1000);
    h.send_raw(line);
    let response = h.recv();
    assert_eq!(response["id"], 1);
    assert_eq!(*result(&response), json!({}));
}

#[test]
fn stream_two_messages_in_one_write_are_both_answered() {
    let h = Harness::start_stream(1 << 20);
    let mut bytes = req(1, "ping", json!({})).to_string().into_bytes();
    bytes.push(b'\n');
    bytes.extend(req(2, "ping", json!({})).to_string().into_bytes());
    bytes.push(b'\n');
    h.send_bytes(bytes);
    assert_eq!(h.recv()["id"], 1);
    assert_eq!(h.recv()["id"], 2);
}

#[test]
fn stream_a_message_split_byte_by_byte_through_a_multibyte_character_is_answered() {
    let h = Harness::start_stream(1 << 20);
    h.initialize("2025-11-25");
    let line = format!("{}\n", call_req(1, "echo", json!({"text": "naïve ✓ 日本"})));
    for byte in line.into_bytes() {
        h.send_bytes(vec![byte]);
    }
    let response = h.recv();
    assert_eq!(response["id"], 1);
    assert_eq!(result(&response)["content"][0]["text"], "naïve ✓ 日本");
}

#[test]
fn stream_crlf_bom_and_blank_lines_are_tolerated() {
    let h = Harness::start_stream(1 << 20);
    let mut bytes = b"\xEF\xBB\xBF".to_vec();
    bytes.extend(req(1, "ping", json!({})).to_string().into_bytes());
    bytes.extend(b"\r\n\r\n\n   \n");
    bytes.extend(req(2, "ping", json!({})).to_string().into_bytes());
    bytes.extend(b"\r\n");
    h.send_bytes(bytes);
    assert_eq!(h.recv()["id"], 1);
    assert_eq!(h.recv()["id"], 2);
    h.expect_silence(Duration::from_millis(100));
}

#[test]
fn stream_an_oversized_line_in_many_chunks_is_answered_and_the_stream_resynchronises() {
    let h = Harness::start_stream(1000);
    h.initialize("2025-11-25");
    let big = format!(
        "{}\n",
        call_req(5, "echo", json!({"text": "q".repeat(300_000)}))
    );
    for chunk in big.as_bytes().chunks(7_000) {
        h.send_bytes(chunk.to_vec());
    }
    h.send_raw(req(6, "ping", json!({})).to_string());
    assert_error(&h.recv(), -32600, Some(&json!(5)));
    assert_eq!(h.recv()["id"], 6);
    assert!(
        h.events().is_empty(),
        "the oversized call must not run: {:?}",
        h.events()
    );
}

#[test]
fn stream_a_one_mebibyte_line_under_the_default_cap_is_served() {
    let h = Harness::start_stream(mcpline_core::DEFAULT_MAX_LINE);
    h.initialize("2025-11-25");
    let text = "m".repeat(1 << 20);
    let response = h.call(1, "echo", json!({"text": text}));
    assert_eq!(
        result(&response)["content"][0]["text"]
            .as_str()
            .map(str::len),
        Some(1 << 20)
    );
}

#[test]
fn stream_a_last_line_without_newline_is_answered_at_end_of_input() {
    let h = Harness::start_stream(1 << 20);
    h.send_bytes(req(1, "ping", json!({})).to_string().into_bytes());
    h.close();
    assert_eq!(h.recv()["id"], 1);
    assert_eq!(h.finish(), mcpline_core::ServeEnd::EndOfInput);
}

#[test]
fn stream_every_outgoing_message_is_one_write_even_with_concurrent_writers() {
    let h = Harness::start_stream(1 << 20);
    h.initialize("2025-11-25");
    // Progress notifications come from the worker while the reader answers pings.
    for id in 0..20 {
        h.send(&json!({
            "jsonrpc": "2.0", "id": format!("p{id}"), "method": "tools/call",
            "params": {"name": "progress", "arguments": {}, "_meta": {"progressToken": id}}
        }));
        h.send(&req(id, "ping", json!({})));
    }
    // `recv` asserts one write per message, each ending in exactly one newline.
    let frames: Vec<_> = (0..20 * 5).map(|_| h.recv()).collect();
    let progress = frames
        .iter()
        .filter(|f| f["method"] == "notifications/progress")
        .count();
    assert_eq!(progress, 60);
    h.expect_silence(Duration::from_millis(50));
}

#[test]
fn stream_a_blank_line_at_the_end_of_a_write_does_not_break_the_next_message() {
    let h = Harness::start_stream(1 << 20);
    h.send_bytes(format!("{}\n\n", req(1, "ping", json!({}))).into_bytes());
    assert_eq!(h.recv()["id"], 1);
    h.send_bytes(format!("{}\n", req(2, "ping", json!({}))).into_bytes());
    let second = h.try_recv(Duration::from_secs(2));
    assert!(
        second.is_some(),
        "the message after the blank line was never answered"
    );
    assert_eq!(second.unwrap_or_default()["id"], 2);
}

#[test]
fn stream_messages_after_a_blank_line_are_not_merged() {
    let h = Harness::start_stream(1 << 20);
    h.send_bytes(format!("{}\n\n", req(1, "ping", json!({}))).into_bytes());
    assert_eq!(h.recv()["id"], 1);
    // Longer than the first write, so the reader does not crash but scans from a stale offset.
    let two = format!(
        "{}\n{}\n",
        req(2, "ping", json!({})),
        req(3, "ping", json!({}))
    );
    h.send_bytes(two.into_bytes());
    let frames = h.collect_until_silence(Duration::from_millis(300));
    let ids: Vec<_> = frames
        .iter()
        .map(|f| f.get("id").cloned().unwrap_or_default())
        .collect();
    assert_eq!(ids, [json!(2), json!(3)], "got {frames:?}");
}

/// Lines that look a bit like JSON-RPC, to reach deeper than pure noise does.
fn jsonish_line() -> impl Strategy<Value = Vec<u8>> {
    let atoms = prop_oneof![
        Just("{".to_string()),
        Just("}".to_string()),
        Just("[".to_string()),
        Just("]".to_string()),
        Just(",".to_string()),
        Just(":".to_string()),
        Just("\"jsonrpc\":\"2.0\"".to_string()),
        Just("\"id\":".to_string()),
        Just("\"method\":".to_string()),
        Just("\"params\":".to_string()),
        Just("\"tools/call\"".to_string()),
        Just("\"initialize\"".to_string()),
        Just("\"notifications/cancelled\"".to_string()),
        Just("null".to_string()),
        Just("true".to_string()),
        Just("1.5".to_string()),
        Just("18446744073709551616".to_string()),
        Just("-1".to_string()),
        Just("\"\\u0000\"".to_string()),
        "[a-z0-9\"\\\\]{0,6}",
    ];
    proptest::collection::vec(atoms, 0..24).prop_map(|parts| parts.concat().into_bytes())
}

/// Random JSON values, objects with protocol-ish keys included.
fn json_value() -> impl Strategy<Value = Value> {
    let leaf = prop_oneof![
        Just(Value::Null),
        any::<bool>().prop_map(Value::from),
        any::<i64>().prop_map(Value::from),
        any::<u64>().prop_map(Value::from),
        any::<f64>()
            .prop_filter("finite", |f| f.is_finite())
            .prop_map(Value::from),
        "[ -~]{0,8}".prop_map(Value::from),
        prop_oneof![
            Just("2.0"),
            Just("ping"),
            Just("tools/list"),
            Just("tools/call"),
            Just("initialize"),
            Just("add"),
            Just("2025-03-26")
        ]
        .prop_map(Value::from),
    ];
    leaf.prop_recursive(3, 24, 5, |inner| {
        prop_oneof![
            proptest::collection::vec(inner.clone(), 0..5).prop_map(Value::Array),
            proptest::collection::vec(
                (
                    prop_oneof![
                        Just("jsonrpc".to_string()),
                        Just("id".to_string()),
                        Just("method".to_string()),
                        Just("params".to_string()),
                        Just("result".to_string()),
                        Just("error".to_string()),
                        Just("name".to_string()),
                        Just("arguments".to_string()),
                        Just("_meta".to_string()),
                        "[a-z]{1,4}",
                    ],
                    inner
                ),
                0..5
            )
            .prop_map(|kv| Value::Object(kv.into_iter().collect())),
        ]
    })
}

fn garbage_lines() -> impl Strategy<Value = Vec<Vec<u8>>> {
    let chunk = prop_oneof![
        // Arbitrary bytes, split into lines.
        proptest::collection::vec(any::<u8>(), 0..200).prop_map(|bytes| {
            bytes
                .split(|&b| b == b'\n')
                .map(<[u8]>::to_vec)
                .collect::<Vec<_>>()
        }),
        jsonish_line().prop_map(|l| vec![l]),
        json_value().prop_map(|v| vec![v.to_string().into_bytes()]),
    ];
    proptest::collection::vec(chunk, 1..12).prop_map(|chunks| chunks.concat())
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 64, ..ProptestConfig::default() })]

    #[test]
    fn arbitrary_lines_never_break_the_session_and_a_later_ping_is_answered(
        initialize_first in any::<bool>(),
        lines in garbage_lines(),
    ) {
        let h = Harness::start();
        if initialize_first {
            h.initialize("2025-03-26");
        }
        for line in lines {
            h.send_raw(line);
        }
        h.send(&req("final-ping", "ping", json!({})));
        let (_others, response) = h.recv_until_response(&json!("final-ping"));
        prop_assert_eq!(&response["result"], &json!({}));
        // serve() must return normally (no panic in the reader or the worker).
        prop_assert_eq!(h.finish(), mcpline_core::ServeEnd::EndOfInput);
    }
}

#[derive(Debug, Clone)]
enum Msg {
    Ping,
    List,
    Add(i64, i64),
    Unknown,
    Notification,
}

fn msg() -> impl Strategy<Value = Msg> {
    prop_oneof![
        Just(Msg::Ping),
        Just(Msg::List),
        (-1000_i64..1000, -1000_i64..1000).prop_map(|(a, b)| Msg::Add(a, b)),
        Just(Msg::Unknown),
        Just(Msg::Notification),
    ]
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 32, ..ProptestConfig::default() })]

    #[test]
    fn every_request_with_an_id_is_answered_exactly_once(
        rev in proptest::sample::select(support::HANDSHAKE_REVS.to_vec()),
        msgs in proptest::collection::vec(msg(), 1..40),
        string_ids in any::<bool>(),
    ) {
        let h = Harness::start();
        h.initialize(rev);
        let mut expected: HashMap<Value, Option<i64>> = HashMap::new();
        for (i, m) in msgs.iter().enumerate() {
            let id = if string_ids { json!(format!("r{i}")) } else { json!(i) };
            let frame = match m {
                Msg::Ping => req(id.clone(), "ping", json!({})),
                Msg::List => req(id.clone(), "tools/list", json!({})),
                Msg::Add(a, b) => call_req(id.clone(), "add", json!({"a": a, "b": b})),
                Msg::Unknown => req(id.clone(), "no/such/method", json!({})),
                Msg::Notification => notif("notifications/whatever", json!({"n": i})),
            };
            h.send(&frame);
            match m {
                Msg::Notification => {}
                Msg::Add(a, b) => { expected.insert(id, Some(a + b)); }
                _ => { expected.insert(id, None); }
            }
        }
        // A final tool call is a barrier: calls run in order, and it is read after everything
        // else, so every other response (and any duplicate) is written before its response.
        h.send(&call_req("barrier", "echo", json!({"text": "done"})));
        let (frames, _barrier) = h.recv_until_response(&json!("barrier"));
        let mut frames = frames;
        frames.extend(h.collect_until_silence(Duration::from_millis(30)));
        let mut seen: HashMap<Value, usize> = HashMap::new();
        for frame in &frames {
            prop_assert!(frame.get("method").is_none(), "unexpected notification {}", frame);
            let id = frame.get("id").cloned().unwrap_or(Value::Null);
            prop_assert!(expected.contains_key(&id), "a response for an unknown id: {}", frame);
            *seen.entry(id.clone()).or_default() += 1;
            if let Some(Some(sum)) = expected.get(&id) {
                let mirror = json!({"result": sum}).to_string();
                prop_assert_eq!(frame["result"]["content"][0]["text"].as_str(), Some(mirror.as_str()));
            }
        }
        for id in expected.keys() {
            prop_assert_eq!(seen.get(id).copied(), Some(1), "id {} answered {:?} times", id, seen.get(id));
        }
    }
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 48, ..ProptestConfig::default() })]

    #[test]
    fn stream_arbitrary_bytes_in_arbitrary_chunks_never_break_the_session(
        bytes in proptest::collection::vec(any::<u8>(), 0..2000),
        cuts in proptest::collection::vec(1_usize..300, 1..20),
    ) {
        let h = Harness::start_stream(512);
        let mut rest = &bytes[..];
        for cut in cuts.iter().cycle() {
            if rest.is_empty() {
                break;
            }
            let (chunk, tail) = rest.split_at((*cut).min(rest.len()));
            h.send_bytes(chunk.to_vec());
            rest = tail;
        }
        // End whatever partial line is pending, then ask.
        h.send_bytes(b"\n".to_vec());
        h.send_raw(req("final-ping", "ping", json!({})).to_string());
        let (_others, response) = h.recv_until_response(&json!("final-ping"));
        prop_assert_eq!(&response["result"], &json!({}));
        prop_assert_eq!(h.finish(), mcpline_core::ServeEnd::EndOfInput);
    }

    #[test]
    fn stream_pings_with_any_line_endings_and_chunking_are_each_answered_once_in_order(
        seps in proptest::collection::vec(
            proptest::sample::select(vec!["\n", "\r\n", "\n\u{feff}", "\r\n\u{feff}"]),
            1..25,
        ),
        chunk in 1_usize..64,
    ) {
        check_pings_with_separators(&seps, chunk)?;
    }
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 32, ..ProptestConfig::default() })]

    #[test]
    fn stream_pings_separated_by_blank_lines_and_any_chunking_are_each_answered_once_in_order(
        seps in proptest::collection::vec(
            proptest::sample::select(vec!["\n", "\r\n", "\n\n", "\n \r\n", "\r\n\r\n"]),
            1..25,
        ),
        chunk in 1_usize..64,
    ) {
        check_pings_with_separators(&seps, chunk)?;
    }
}

fn check_pings_with_separators(seps: &[&str], chunk: usize) -> Result<(), TestCaseError> {
    let h = Harness::start_stream(1 << 20);
    let mut stream = String::new();
    for (i, sep) in seps.iter().enumerate() {
        stream.push_str(&req(i, "ping", json!({})).to_string());
        stream.push_str(sep);
    }
    for piece in stream.as_bytes().chunks(chunk) {
        h.send_bytes(piece.to_vec());
    }
    for i in 0..seps.len() {
        let response = h.try_recv(Duration::from_secs(2));
        prop_assert!(
            response.is_some(),
            "no answer for ping {} of {}",
            i,
            seps.len()
        );
        let response = response.unwrap_or_default();
        prop_assert_eq!(&response["id"], &json!(i));
        prop_assert_eq!(&response["result"], &json!({}));
    }
    h.expect_silence(Duration::from_millis(20));
    Ok(())
}
