//! JSON-RPC batches: answered with an array on 2025-03-26 only, refused elsewhere.

use std::collections::HashMap;
use std::time::Duration;

use crate::support::{Harness, assert_error, call_req, cancel, init_params, notif, req, result};
use serde_json::{Value, json};

/// The members of a batch response, by id.
#[track_caller]
fn by_id(frame: &Value) -> HashMap<String, Value> {
    let members = frame
        .as_array()
        .unwrap_or_else(|| panic!("expected an array, got {frame}"));
    let mut out = HashMap::new();
    for member in members {
        let key = member
            .get("id")
            .map_or_else(|| "<none>".to_string(), Value::to_string);
        assert!(
            out.insert(key, member.clone()).is_none(),
            "duplicate member in {frame}"
        );
    }
    out
}

#[test]
fn a_batch_on_2025_03_26_gets_an_array_of_responses_for_its_requests_only() {
    let h = Harness::start();
    h.initialize("2025-03-26");
    h.send(&json!([
        req(1, "ping", json!({})),
        notif("notifications/whatever", json!({})),
        req("two", "tools/list", json!({})),
        call_req(3, "add", json!({"a": 2, "b": 3})),
        call_req(4, "fail", json!({})),
        req(5, "no/such/method", json!({})),
        notif("notifications/initialized", json!({})),
    ]));
    let frame = h.recv();
    let members = by_id(&frame);
    assert_eq!(members.len(), 5, "one member per request: {frame}");
    assert_eq!(*result(&members["1"]), json!({}));
    assert!(result(&members["\"two\""])["tools"].is_array());
    assert_eq!(
        result(&members["3"])["content"][0]["text"],
        r#"{"result":5}"#
    );
    assert!(
        result(&members["3"]).get("structuredContent").is_none(),
        "2025-03-26: {frame}"
    );
    assert_eq!(result(&members["4"])["isError"], true);
    assert_error(&members["5"], -32601, Some(&json!(5)));
    h.expect_silence(Duration::from_millis(100));
}

#[test]
fn a_batch_of_only_tool_calls_is_answered_once_all_have_run() {
    let h = Harness::start();
    h.initialize("2025-03-26");
    h.send(&json!([
        call_req(1, "sleepy", json!({"ms": 50})),
        call_req(2, "echo", json!({"text": "b"})),
    ]));
    let frame = h.recv();
    let members = by_id(&frame);
    assert_eq!(members.len(), 2, "{frame}");
    assert_eq!(result(&members["1"])["content"][0]["text"], "slept 50 ms");
    assert_eq!(result(&members["2"])["content"][0]["text"], "b");
    h.expect_silence(Duration::from_millis(100));
}

#[test]
fn an_all_notification_batch_gets_no_output() {
    let h = Harness::start();
    h.initialize("2025-03-26");
    h.send(&json!([
        notif("notifications/initialized", json!({})),
        notif("notifications/whatever", json!({"a": 1})),
        cancel(12345),
    ]));
    h.expect_silence(Duration::from_millis(150));
    assert_eq!(h.request(9, "ping", json!({}))["result"], json!({}));
}

#[test]
fn a_batch_of_response_shaped_members_gets_no_output() {
    let h = Harness::start();
    h.initialize("2025-03-26");
    h.send(&json!([{"jsonrpc": "2.0", "id": 1, "result": {}}]));
    h.expect_silence(Duration::from_millis(150));
}

#[test]
fn an_empty_batch_gets_a_single_invalid_request() {
    let h = Harness::start();
    h.initialize("2025-03-26");
    h.send_raw("[]");
    let frame = h.recv();
    assert!(frame.is_object(), "a single error, not an array: {frame}");
    assert_error(&frame, -32600, None);
}

#[test]
fn initialize_inside_a_batch_gets_an_error_for_that_member_only() {
    let h = Harness::start();
    h.initialize("2025-03-26");
    h.send(&json!([
        req(1, "initialize", init_params("2025-03-26")),
        req(2, "ping", json!({}))
    ]));
    let frame = h.recv();
    let members = by_id(&frame);
    assert_eq!(members.len(), 2, "{frame}");
    assert_error(&members["1"], -32600, Some(&json!(1)));
    assert_eq!(*result(&members["2"]), json!({}));
}

#[test]
fn invalid_members_get_their_own_errors_inside_the_array() {
    let h = Harness::start();
    h.initialize("2025-03-26");
    h.send(&json!([
        42,
        {"jsonrpc": "1.0", "id": 7, "method": "ping"},
        {"jsonrpc": "2.0", "id": 8, "method": "ping"},
    ]));
    let frame = h.recv();
    let members = frame
        .as_array()
        .unwrap_or_else(|| panic!("expected an array: {frame}"));
    assert_eq!(members.len(), 3, "{frame}");
    let scalar = members
        .iter()
        .find(|m| m.get("id").is_none())
        .expect("the scalar's error");
    assert_error(scalar, -32600, None);
    let bad = members
        .iter()
        .find(|m| m["id"] == 7)
        .expect("the jsonrpc 1.0 member's error");
    assert_error(bad, -32600, Some(&json!(7)));
    let good = members
        .iter()
        .find(|m| m["id"] == 8)
        .expect("the ping's response");
    assert_eq!(*result(good), json!({}));
}

#[test]
fn a_queued_batch_member_cancelled_before_it_runs_is_left_out_of_the_array() {
    let h = Harness::start();
    h.initialize("2025-03-26");
    h.send(&call_req(1, "sleepy", json!({"ms": 5000})));
    h.send(&json!([
        call_req(2, "echo", json!({"text": "x"})),
        req(3, "ping", json!({}))
    ]));
    h.send(&cancel(2));
    // The batch is complete once its last member is settled, here by the cancellation.
    let frame = h.recv();
    h.send(&cancel(1));
    let members = by_id(&frame);
    assert_eq!(members.len(), 1, "only the ping is answered: {frame}");
    assert_eq!(*result(&members["3"]), json!({}));
    h.expect_silence(Duration::from_millis(100));
    assert!(
        !h.events().iter().any(|e| e.starts_with("echo")),
        "{:?}",
        h.events()
    );
}

#[test]
fn a_batch_on_2025_06_18_gets_a_single_invalid_request_and_serving_continues() {
    let h = Harness::start();
    h.initialize("2025-06-18");
    h.send(&json!([
        req(1, "ping", json!({})),
        call_req(2, "echo", json!({"text": "no"}))
    ]));
    let frame = h.recv();
    assert!(frame.is_object(), "a single error, not an array: {frame}");
    assert_error(&frame, -32600, None);
    h.expect_silence(Duration::from_millis(100));
    assert!(
        h.events().is_empty(),
        "a refused batch ran a tool: {:?}",
        h.events()
    );
    let call = h.call(3, "echo", json!({"text": "yes"}));
    assert_eq!(result(&call)["content"][0]["text"], "yes");
}

#[test]
fn a_batch_on_other_revisions_and_before_initialize_is_refused() {
    for rev in ["2024-11-05", "2025-11-25"] {
        let h = Harness::start();
        h.initialize(rev);
        h.send(&json!([req(1, "ping", json!({}))]));
        assert_error(&h.recv(), -32600, None);
    }
    let h = Harness::start();
    h.send(&json!([req(1, "ping", json!({}))]));
    assert_error(&h.recv(), -32600, None);
    assert_eq!(h.request(2, "ping", json!({}))["result"], json!({}));
}
