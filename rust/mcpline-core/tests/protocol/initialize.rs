//! The handshake era: `initialize` negotiation, result shape per revision, the one-handshake
//! rule and what happens before it.

use std::time::Duration;

use crate::support::{
    HANDSHAKE_REVS, Harness, assert_error, call_req, init_params, req, result, tool,
};
use serde_json::{Value, json};

/// Far below the harness's 10 s "stuck" limit, with room for a loaded machine.
const PROMPTLY: Duration = Duration::from_secs(3);

fn described_server() -> Harness {
    Harness::start_with(|server| {
        let info = server.info_mut();
        info.title = Some("Test Server".into());
        info.description = Some("A server for the integration tests.".into());
        info.website_url = Some("https://example.org/test-server".into());
        info.instructions = Some("Use add to add.".into());
    })
}

#[test]
fn each_supported_revision_is_echoed() {
    for rev in HANDSHAKE_REVS {
        let h = Harness::start();
        let result = h.initialize(rev);
        assert_eq!(result["protocolVersion"], rev, "for {rev}");
    }
}

#[test]
fn an_unknown_or_stateless_revision_gets_the_newest_handshake_revision() {
    for rev in ["1900-01-01", "2026-07-28", "2024-10-07", "", "latest"] {
        let h = Harness::start();
        let result = h.initialize(rev);
        assert_eq!(result["protocolVersion"], "2025-11-25", "for {rev:?}");
    }
}

#[test]
fn the_result_carries_server_info_and_the_tools_capability() {
    let h = Harness::start();
    let result = h.initialize("2025-11-25");
    assert_eq!(result["serverInfo"]["name"], "test-server");
    assert_eq!(result["serverInfo"]["version"], "9.9.9");
    assert!(
        result["capabilities"]["tools"].is_object(),
        "no tools capability: {result}"
    );
    assert_eq!(result["capabilities"]["tools"]["listChanged"], json!(false));
    assert!(
        result.get("instructions").is_none(),
        "instructions without being set: {result}"
    );
}

#[test]
fn server_info_fields_appear_only_from_the_revision_that_knows_them() {
    for rev in HANDSHAKE_REVS {
        let h = described_server();
        let result = h.initialize(rev);
        let info = &result["serverInfo"];
        assert_eq!(info["name"], "test-server", "for {rev}");
        assert_eq!(info["version"], "9.9.9", "for {rev}");
        let has_title = rev >= "2025-06-18";
        let has_description = rev >= "2025-11-25";
        assert_eq!(
            info.get("title").is_some(),
            has_title,
            "title for {rev}: {info}"
        );
        assert_eq!(
            info.get("description").is_some(),
            has_description,
            "for {rev}: {info}"
        );
        assert_eq!(
            info.get("websiteUrl").is_some(),
            has_description,
            "for {rev}: {info}"
        );
        if has_title {
            assert_eq!(info["title"], "Test Server");
        }
        if has_description {
            assert_eq!(info["description"], "A server for the integration tests.");
            assert_eq!(info["websiteUrl"], "https://example.org/test-server");
        }
        assert_eq!(result["instructions"], "Use add to add.", "for {rev}");
        assert!(result["capabilities"]["tools"].is_object(), "for {rev}");
    }
}

#[test]
fn a_second_initialize_gets_invalid_request_and_the_first_negotiation_is_kept() {
    let h = Harness::start();
    h.initialize("2024-11-05");
    let response = h.request(2, "initialize", init_params("2025-11-25"));
    assert_error(&response, -32600, Some(&json!(2)));
    // The 2024-11-05 shape is still in force: no title, no outputSchema, no annotations.
    let list = h.request(3, "tools/list", json!({}));
    let add = tool(result(&list), "add");
    assert!(
        add.get("title").is_none(),
        "2025-06-18 fields after a refused re-initialize: {add}"
    );
    assert!(add.get("outputSchema").is_none(), "{add}");
    assert!(add.get("annotations").is_none(), "{add}");
    let call = h.call(4, "add", json!({"a": 1, "b": 2}));
    assert!(result(&call).get("structuredContent").is_none(), "{call}");
}

#[test]
fn an_initialize_without_protocol_version_is_refused_and_a_proper_one_still_works() {
    let h = Harness::start();
    let response = h.request(1, "initialize", json!({"capabilities": {}}));
    assert_error(&response, -32602, Some(&json!(1)));
    let result = h.initialize("2025-06-18");
    assert_eq!(result["protocolVersion"], "2025-06-18");
}

#[test]
fn ping_before_initialize_gets_an_empty_result() {
    let h = Harness::start();
    let response = h.request(1, "ping", json!({}));
    assert_eq!(*result(&response), json!({}));
    let response = h.request(2, "ping", Value::Null);
    assert_eq!(*result(&response), json!({}));
}

#[test]
fn tools_list_before_initialize_gets_invalid_params_promptly() {
    let h = Harness::start();
    h.send(&req(1, "tools/list", json!({})));
    let response = h.recv_within(PROMPTLY);
    assert_error(&response, -32602, Some(&json!(1)));
}

#[test]
fn tools_call_before_initialize_gets_invalid_params_promptly_and_nothing_runs() {
    let h = Harness::start();
    h.send(&call_req(1, "echo", json!({"text": "early"})));
    let response = h.recv_within(PROMPTLY);
    assert_error(&response, -32602, Some(&json!(1)));
    assert!(
        h.events().is_empty(),
        "a tool ran before initialize: {:?}",
        h.events()
    );
    // The session is not harmed: the handshake still works afterwards.
    h.initialize("2025-11-25");
    let call = h.call(2, "echo", json!({"text": "late"}));
    assert_eq!(result(&call)["content"][0]["text"], "late");
}

#[test]
fn an_unknown_method_before_initialize_gets_an_error_promptly() {
    let h = Harness::start();
    h.send(&req(1, "server/discover", json!({})));
    let response = h.recv_within(PROMPTLY);
    assert!(
        response.get("error").is_some(),
        "expected an error: {response}"
    );
    assert_eq!(response["id"], 1);
}

#[test]
fn a_request_pipelined_right_after_initialize_is_served() {
    let h = Harness::start();
    // No waiting for the initialize response and no notifications/initialized.
    h.send(&req("init", "initialize", init_params("2025-06-18")));
    h.send(&req(2, "tools/list", json!({})));
    h.send(&call_req(3, "add", json!({"a": 20, "b": 22})));
    let init = h.recv();
    assert_eq!(init["id"], "init");
    assert_eq!(result(&init)["protocolVersion"], "2025-06-18");
    let list = h.recv();
    assert_eq!(list["id"], 2);
    assert!(result(&list)["tools"].is_array());
    let call = h.recv();
    assert_eq!(call["id"], 3);
    assert_eq!(result(&call)["structuredContent"], json!({"result": 42}));
}

#[test]
fn logging_set_level_works_in_the_handshake_era_and_rejects_bad_levels() {
    let h = Harness::start();
    h.initialize("2025-11-25");
    let response = h.request(1, "logging/setLevel", json!({"level": "warning"}));
    assert_eq!(*result(&response), json!({}));
    let response = h.request(2, "logging/setLevel", json!({"level": "loud"}));
    assert_error(&response, -32602, Some(&json!(2)));
}
