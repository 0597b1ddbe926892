//! Request ids are echoed exactly, with their JSON type.

use crate::support::{Harness, call_req, result, text_of};
use serde_json::{Value, json};

/// Sends `raw_id` verbatim (so big integers are not reformatted) and returns the raw response.
fn raw_ping(h: &Harness, raw_id: &str) -> String {
    h.send_raw(format!(
        r#"{{"jsonrpc":"2.0","id":{raw_id},"method":"ping"}}"#
    ));
    let response = h.recv();
    assert_eq!(*result(&response), json!({}));
    response.to_string()
}

#[test]
fn integer_and_string_ids_keep_their_type() {
    let h = Harness::start();
    let response = h.request(1, "ping", json!({}));
    assert_eq!(response["id"], json!(1));
    assert!(response["id"].is_u64());
    let response = h.request("1", "ping", json!({}));
    assert_eq!(response["id"], json!("1"));
    assert!(response["id"].is_string());
}

#[test]
fn zero_negative_and_large_integer_ids_are_echoed_exactly() {
    let h = Harness::start();
    for raw in [
        "0",
        "-1",
        "-9223372036854775808",
        "9007199254740992",
        "18446744073709551615",
    ] {
        let response = raw_ping(&h, raw);
        assert!(
            response.contains(&format!(r#""id":{raw}"#)),
            "id {raw} became {response}"
        );
    }
}

#[test]
fn unusual_string_ids_are_echoed_exactly() {
    let h = Harness::start();
    for id in [
        "",
        " ",
        "0",
        "line\nbreak",
        "quote\"and\\slash",
        "ünïcødé ✓",
        "null",
    ] {
        let response = h.request(id, "ping", json!({}));
        assert_eq!(response["id"], json!(id));
    }
}

#[test]
fn tool_call_responses_echo_the_id_type() {
    let h = Harness::start();
    h.initialize("2025-11-25");
    let ids: [Value; 4] = [json!(0), json!("0"), json!(u64::MAX), json!(-42)];
    for id in &ids {
        h.send(&call_req(
            id.clone(),
            "echo",
            json!({"text": id.to_string()}),
        ));
    }
    for id in &ids {
        let response = h.recv();
        assert_eq!(&response["id"], id);
        assert_eq!(text_of(result(&response)), id.to_string());
    }
}

#[test]
fn error_responses_echo_the_id_type() {
    let h = Harness::start();
    for id in [json!(5), json!("5"), json!(-5)] {
        let response = h.request(id.clone(), "tools/list", json!({}));
        assert!(
            response.get("error").is_some(),
            "tools/list before initialize: {response}"
        );
        assert_eq!(response["id"], id);
    }
}
