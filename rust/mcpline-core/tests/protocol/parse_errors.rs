//! Malformed input: parse errors (-32700), invalid requests (-32600) and invalid params (-32602),
//! with the id echoed when it can be read and left out (never `null`) when it cannot.

use std::time::Duration;

use crate::support::{Harness, assert_error, req, result};
use serde_json::json;

/// After any bad line, the session still answers.
#[track_caller]
fn still_serving(h: &Harness) {
    h.send(&req("after", "ping", json!({})));
    let response = h.recv();
    assert_eq!(response["id"], "after");
    assert_eq!(*result(&response), json!({}));
}

#[test]
fn a_non_json_line_gets_parse_error_without_an_id_key() {
    let h = Harness::start();
    h.send_raw("this is not json");
    let response = h.recv();
    assert_error(&response, -32700, None);
    assert!(
        response["error"]["message"]
            .as_str()
            .unwrap_or_default()
            .contains("not JSON"),
        "the message should say what is wrong: {response}"
    );
    still_serving(&h);
}

#[test]
fn truncated_json_with_a_visible_id_still_gets_parse_error_without_id() {
    let h = Harness::start();
    h.send_raw(r#"{"jsonrpc":"2.0","id":5,"method":"ping""#);
    assert_error(&h.recv(), -32700, None);
    still_serving(&h);
}

#[test]
fn well_formed_json_beyond_the_parsers_limits_is_answered_under_its_id() {
    let h = Harness::start();
    let deep = format!(
        r#"{{"jsonrpc":"2.0","id":7,"method":"ping","params":{{"x":{}{}}}}}"#,
        "[".repeat(100_000),
        "]".repeat(100_000)
    );
    h.send_raw(deep);
    assert_error(&h.recv(), -32700, Some(&json!(7)));
    let huge = format!(
        r#"{{"jsonrpc":"2.0","id":8,"method":"ping","params":{{"n":1{}}}}}"#,
        "0".repeat(400)
    );
    h.send_raw(huge);
    assert_error(&h.recv(), -32700, Some(&json!(8)));
    still_serving(&h);
}

#[test]
fn broken_json_that_is_cut_short_inside_a_deep_or_huge_value_gets_no_id() {
    // The parser stops at its own limit before it sees the line is broken: the id it passed is
    // still no one's (it may be the id of a call in progress).
    let h = Harness::start();
    h.send_raw(r#"{"jsonrpc":"2.0","id":2,"x":1e999999"#);
    assert_error(&h.recv(), -32700, None);
    h.send_raw(format!(
        r#"{{"jsonrpc":"2.0","id":3,"x":{}"#,
        "[".repeat(200)
    ));
    assert_error(&h.recv(), -32700, None);
    still_serving(&h);
}

#[test]
fn a_lone_surrogate_escape_is_read_as_the_replacement_character_and_served() {
    let h = Harness::start();
    h.initialize("2025-11-25");
    h.send_raw(
        r#"{"jsonrpc":"2.0","id":4,"method":"tools/call","params":{"name":"echo","arguments":{"text":"cut \ud83d"}}}"#,
    );
    let response = h.recv();
    assert_eq!(response["id"], 4);
    assert_eq!(result(&response)["content"][0]["text"], "cut \u{fffd}");
    still_serving(&h);
}

#[test]
fn invalid_utf8_gets_parse_error() {
    let h = Harness::start();
    let mut line = br#"{"jsonrpc":"2.0","id":1,"method":"ping","params":{"x":""#.to_vec();
    line.extend_from_slice(b"\xff\xfe\xc3");
    line.extend_from_slice(br#""}}"#);
    h.send_raw(line);
    let response = h.recv();
    assert_error(&response, -32700, None);
    assert!(
        response["error"]["message"]
            .as_str()
            .unwrap_or_default()
            .contains("UTF-8"),
        "the message should name UTF-8: {response}"
    );
    still_serving(&h);
}

#[test]
fn an_object_without_method_that_is_not_a_response_gets_parse_error_echoing_its_id() {
    let h = Harness::start();
    h.send(&json!({"jsonrpc": "2.0", "id": 41, "params": {}}));
    assert_error(&h.recv(), -32700, Some(&json!(41)));
    h.send(&json!({"jsonrpc": "2.0", "id": "s-41"}));
    assert_error(&h.recv(), -32700, Some(&json!("s-41")));
    still_serving(&h);
}

#[test]
fn an_object_without_method_and_without_usable_id_gets_parse_error_without_id() {
    let h = Harness::start();
    h.send(&json!({"jsonrpc": "2.0", "id": 1.5}));
    assert_error(&h.recv(), -32700, None);
    h.send(&json!({}));
    assert_error(&h.recv(), -32700, None);
    still_serving(&h);
}

#[test]
fn a_response_shaped_frame_is_never_answered() {
    let h = Harness::start();
    h.send(&json!({"jsonrpc": "2.0", "id": 3, "result": {}}));
    h.send(&json!({"jsonrpc": "2.0", "id": 4, "error": {"code": -1, "message": "x"}}));
    h.send(&json!({"jsonrpc": "2.0", "error": {"code": -32700, "message": "Parse error"}}));
    h.send(&json!({"jsonrpc": "2.0", "id": true, "result": null}));
    h.expect_silence(Duration::from_millis(150));
    still_serving(&h);
}

#[test]
fn missing_jsonrpc_gets_invalid_request_with_the_id() {
    let h = Harness::start();
    h.send(&json!({"id": 1, "method": "ping"}));
    assert_error(&h.recv(), -32600, Some(&json!(1)));
    still_serving(&h);
}

#[test]
fn jsonrpc_1_0_gets_invalid_request_with_the_id() {
    let h = Harness::start();
    h.send(&json!({"jsonrpc": "1.0", "id": "v1", "method": "ping"}));
    assert_error(&h.recv(), -32600, Some(&json!("v1")));
    h.send(&json!({"jsonrpc": 2.0, "id": "v2", "method": "ping"}));
    assert_error(&h.recv(), -32600, Some(&json!("v2")));
    still_serving(&h);
}

#[test]
fn a_method_that_is_not_a_string_gets_invalid_request() {
    let h = Harness::start();
    h.send(&json!({"jsonrpc": "2.0", "id": 2, "method": 17}));
    assert_error(&h.recv(), -32600, Some(&json!(2)));
    h.send(&json!({"jsonrpc": "2.0", "id": 3, "method": null}));
    assert_error(&h.recv(), -32600, Some(&json!(3)));
    h.send(&json!({"jsonrpc": "2.0", "id": 4, "method": ["ping"]}));
    assert_error(&h.recv(), -32600, Some(&json!(4)));
    still_serving(&h);
}

#[test]
fn a_float_id_gets_invalid_request_without_id() {
    let h = Harness::start();
    h.send_raw(r#"{"jsonrpc":"2.0","id":1.5,"method":"ping"}"#);
    assert_error(&h.recv(), -32600, None);
    h.send_raw(r#"{"jsonrpc":"2.0","id":2.0,"method":"ping"}"#);
    assert_error(&h.recv(), -32600, None);
    still_serving(&h);
}

#[test]
fn a_bool_or_object_or_array_id_gets_invalid_request_without_id() {
    let h = Harness::start();
    for id in [json!(true), json!(false), json!({"a": 1}), json!([1])] {
        h.send(&json!({"jsonrpc": "2.0", "id": id, "method": "ping"}));
        assert_error(&h.recv(), -32600, None);
    }
    still_serving(&h);
}

#[test]
fn an_integer_id_too_large_for_64_bits_gets_invalid_request_without_id() {
    let h = Harness::start();
    h.send_raw(r#"{"jsonrpc":"2.0","id":18446744073709551616,"method":"ping"}"#);
    assert_error(&h.recv(), -32600, None);
    still_serving(&h);
}

#[test]
fn params_as_an_array_gets_invalid_params_with_the_id() {
    let h = Harness::start();
    h.send(&json!({"jsonrpc": "2.0", "id": 6, "method": "ping", "params": [1, 2]}));
    assert_error(&h.recv(), -32602, Some(&json!(6)));
    h.send(&json!({"jsonrpc": "2.0", "id": 7, "method": "tools/list", "params": "x"}));
    assert_error(&h.recv(), -32602, Some(&json!(7)));
    still_serving(&h);
}

#[test]
fn a_scalar_json_line_gets_invalid_request_without_id() {
    let h = Harness::start();
    for line in ["42", "\"ping\"", "true", "null", "-0.5"] {
        h.send_raw(line);
        let response = h.recv();
        assert_error(&response, -32600, None);
    }
    still_serving(&h);
}

#[test]
fn nesting_beyond_the_parser_limit_is_a_parse_error_not_a_crash() {
    let h = Harness::start();
    let deep = format!("{}{}", "[".repeat(100_000), "]".repeat(100_000));
    h.send_raw(deep);
    assert_error(&h.recv(), -32700, None);
    still_serving(&h);
}

#[test]
fn an_unknown_method_gets_method_not_found_with_the_id() {
    let h = Harness::start();
    h.initialize("2025-11-25");
    let response = h.request(9, "resources/list", json!({}));
    assert_error(&response, -32601, Some(&json!(9)));
    still_serving(&h);
}
