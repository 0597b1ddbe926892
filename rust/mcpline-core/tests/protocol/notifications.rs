//! Notifications (no `id`, or `"id": null`) are never answered; unknown ones are ignored.

use std::time::Duration;

use crate::support::{self, Harness, notif, req, result};
use serde_json::json;

const SILENCE: Duration = Duration::from_millis(150);

#[test]
fn notifications_initialized_is_not_answered() {
    let h = Harness::start();
    let response = h.request("i", "initialize", support::init_params("2025-11-25"));
    assert!(response.get("result").is_some());
    h.send(&notif("notifications/initialized", json!({})));
    h.expect_silence(SILENCE);
}

#[test]
fn unknown_notifications_are_ignored_before_and_after_initialize() {
    let h = Harness::start();
    h.send(&notif("notifications/unknown", json!({"x": 1})));
    h.send(&json!({"jsonrpc": "2.0", "method": "notifications/no-params"}));
    h.expect_silence(SILENCE);
    h.initialize("2025-06-18");
    h.send(&notif("notifications/roots/list_changed", json!({})));
    h.send(&notif("totally/made/up", json!([1, 2, 3])));
    h.expect_silence(SILENCE);
    let response = h.request(1, "ping", json!({}));
    assert_eq!(*result(&response), json!({}));
}

#[test]
fn a_request_method_sent_as_a_notification_is_not_answered() {
    let h = Harness::start();
    h.initialize("2025-11-25");
    h.send(&notif("ping", json!({})));
    h.send(&notif("tools/list", json!({})));
    h.send(&notif("initialize", support::init_params("2025-11-25")));
    h.expect_silence(SILENCE);
}

#[test]
fn a_tool_call_sent_as_a_notification_is_neither_answered_nor_run() {
    let h = Harness::start();
    h.initialize("2025-11-25");
    h.send(&notif(
        "tools/call",
        json!({"name": "echo", "arguments": {"text": "hi"}}),
    ));
    h.expect_silence(SILENCE);
    assert!(
        h.events().is_empty(),
        "a notification ran a tool: {:?}",
        h.events()
    );
}

#[test]
fn a_null_id_makes_a_notification_that_is_never_answered() {
    let h = Harness::start();
    h.send(&json!({"jsonrpc": "2.0", "id": null, "method": "ping"}));
    h.expect_silence(SILENCE);
    h.initialize("2025-11-25");
    h.send(&json!({"jsonrpc": "2.0", "id": null, "method": "tools/list"}));
    h.send(&json!({"jsonrpc": "2.0", "id": null, "method": "no/such/method"}));
    h.send(&json!({
        "jsonrpc": "2.0", "id": null, "method": "tools/call",
        "params": {"name": "echo", "arguments": {"text": "x"}}
    }));
    h.expect_silence(SILENCE);
    assert!(
        h.events().is_empty(),
        "a null-id call ran a tool: {:?}",
        h.events()
    );
}

#[test]
fn malformed_cancellations_are_ignored() {
    let h = Harness::start();
    h.initialize("2025-11-25");
    h.send(&notif("notifications/cancelled", json!({})));
    h.send(&notif(
        "notifications/cancelled",
        json!({"requestId": null}),
    ));
    h.send(&notif(
        "notifications/cancelled",
        json!({"requestId": {"a": 1}}),
    ));
    h.send(&notif("notifications/cancelled", json!([1])));
    h.send(&json!({"jsonrpc": "2.0", "method": "notifications/cancelled"}));
    h.expect_silence(SILENCE);
    h.send(&req(1, "ping", json!({})));
    assert_eq!(h.recv()["id"], 1);
}

#[test]
fn notifications_with_params_of_the_wrong_type_are_not_answered() {
    let h = Harness::start();
    h.initialize("2025-11-25");
    h.send(&json!({"jsonrpc": "2.0", "method": "notifications/initialized", "params": 5}));
    h.send(&json!({"jsonrpc": "2.0", "method": "notifications/progress", "params": "x"}));
    h.expect_silence(SILENCE);
}
