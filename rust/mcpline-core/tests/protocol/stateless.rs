//! The stateless era (2026-07-28): the per-request `_meta` envelope, `server/discover`, result
//! stamping, removed methods, and coexistence with the handshake era in one process.

use crate::support::{
    self, Harness, assert_error, init_params, modern, modern_meta, req, result, text_of,
};
use serde_json::{Value, json};

const SERVER_INFO: &str = "io.modelcontextprotocol/serverInfo";

fn meta_without(key: &str) -> Value {
    let mut meta = modern_meta();
    if let Some(m) = meta.as_object_mut() {
        m.remove(key);
    }
    meta
}

#[test]
fn a_request_without_meta_on_a_fresh_process_gets_invalid_params() {
    let h = Harness::start();
    let response = h.request(1, "server/discover", json!({}));
    assert_error(&response, -32602, Some(&json!(1)));
    let response = h.request(2, "tools/list", json!({"_meta": {}}));
    assert_error(&response, -32602, Some(&json!(2)));
}

#[test]
fn a_request_without_the_protocol_version_gets_invalid_params() {
    let h = Harness::start();
    let meta = meta_without("io.modelcontextprotocol/protocolVersion");
    let response = h.request(1, "tools/list", json!({"_meta": meta}));
    assert_error(&response, -32602, Some(&json!(1)));
    let message = response["error"]["message"].as_str().unwrap_or_default();
    assert!(
        message.contains("protocolVersion"),
        "the message should name the key: {response}"
    );
}

#[test]
fn a_request_without_client_capabilities_gets_invalid_params() {
    let h = Harness::start();
    let meta = meta_without("io.modelcontextprotocol/clientCapabilities");
    let response = h.request(1, "server/discover", json!({"_meta": meta}));
    assert_error(&response, -32602, Some(&json!(1)));
    let message = response["error"]["message"].as_str().unwrap_or_default();
    assert!(
        message.contains("clientCapabilities"),
        "the message should name the key: {response}"
    );
}

#[test]
fn a_request_without_client_info_is_served() {
    let h = Harness::start();
    let meta = meta_without("io.modelcontextprotocol/clientInfo");
    let response = h.request(1, "server/discover", json!({"_meta": meta}));
    assert_eq!(result(&response)["resultType"], "complete");
}

#[test]
fn an_unsupported_version_gets_32022_with_supported_and_requested() {
    for requested in ["1900-01-01", "2025-11-25", "2027-01-01"] {
        let h = Harness::start();
        let mut meta = modern_meta();
        meta["io.modelcontextprotocol/protocolVersion"] = json!(requested);
        let response = h.request(1, "tools/list", json!({"_meta": meta}));
        assert_error(&response, -32022, Some(&json!(1)));
        assert_eq!(
            response["error"]["data"]["supported"],
            json!(["2026-07-28"]),
            "{response}"
        );
        assert_eq!(
            response["error"]["data"]["requested"], requested,
            "{response}"
        );
    }
}

#[test]
fn server_discover_describes_the_server() {
    let h = Harness::start_with(|server| {
        server.info_mut().instructions = Some("Be nice.".into());
        server.config_mut().list_ttl_ms = 60_000;
    });
    let response = h.request("d", "server/discover", modern(json!({})));
    let discover = result(&response);
    assert_eq!(discover["resultType"], "complete");
    assert_eq!(discover["supportedVersions"], json!(["2026-07-28"]));
    assert!(discover["capabilities"]["tools"].is_object(), "{discover}");
    assert_eq!(discover["ttlMs"], 60_000);
    assert!(
        discover["cacheScope"] == "public" || discover["cacheScope"] == "private",
        "{discover}"
    );
    assert_eq!(discover["instructions"], "Be nice.");
    let info = &discover["_meta"][SERVER_INFO];
    assert_eq!(info["name"], "test-server", "{discover}");
    assert_eq!(info["version"], "9.9.9", "{discover}");
}

#[test]
fn tools_list_is_stamped_complete_with_ttl_cache_scope_and_server_info() {
    let h = Harness::start();
    let response = h.request(1, "tools/list", modern(json!({})));
    let list = result(&response);
    assert_eq!(list["resultType"], "complete");
    assert!(
        list["ttlMs"].as_u64().is_some(),
        "ttlMs must be a non-negative integer: {list}"
    );
    assert!(
        list["cacheScope"] == "public" || list["cacheScope"] == "private",
        "{list}"
    );
    assert_eq!(list["_meta"][SERVER_INFO]["name"], "test-server");
    let add = support::tool(list, "add");
    assert_eq!(add["title"], "Adder", "2026-07-28 knows titles: {add}");
    assert!(add["outputSchema"].is_object(), "{add}");
}

#[test]
fn cache_scope_is_the_same_on_every_page() {
    let h = Harness::start_with(|server| server.config_mut().page_size = 2);
    let first = h.request(1, "tools/list", modern(json!({})));
    let cursor = result(&first)["nextCursor"].clone();
    assert!(cursor.is_string(), "{first}");
    let second = h.request(2, "tools/list", modern(json!({"cursor": cursor})));
    assert_eq!(result(&first)["cacheScope"], result(&second)["cacheScope"]);
    assert_eq!(result(&second)["resultType"], "complete");
}

#[test]
fn tool_call_results_are_stamped_complete() {
    let h = Harness::start();
    let params = modern(json!({"name": "add", "arguments": {"a": 1, "b": 2}}));
    let response = h.request(1, "tools/call", params);
    let call = result(&response);
    assert_eq!(call["resultType"], "complete");
    assert_eq!(call["structuredContent"], json!({"result": 3}));
    assert_eq!(call["_meta"][SERVER_INFO]["name"], "test-server");

    let params = modern(json!({"name": "fail", "arguments": {}}));
    let response = h.request(2, "tools/call", params);
    let call = result(&response);
    assert_eq!(
        call["resultType"], "complete",
        "tool errors are results too: {call}"
    );
    assert_eq!(call["isError"], true);
    assert!(text_of(call).contains("on purpose"));
}

#[test]
fn ping_initialize_and_logging_set_level_do_not_exist_in_2026_07_28() {
    let h = Harness::start();
    let mut init = init_params("2026-07-28");
    init["_meta"] = modern_meta();
    for (id, method, params) in [
        (1, "ping", modern(json!({}))),
        (2, "initialize", init),
        (3, "logging/setLevel", modern(json!({"level": "info"}))),
        (
            4,
            "resources/subscribe",
            modern(json!({"uri": "file:///x"})),
        ),
    ] {
        let response = h.request(id, method, params);
        assert_error(&response, -32601, Some(&json!(id)));
    }
    // The refused initialize did not start a handshake session: legacy requests still need one.
    let response = h.request(5, "tools/list", json!({}));
    assert_error(&response, -32602, Some(&json!(5)));
}

#[test]
fn a_bad_log_level_in_meta_gets_invalid_params() {
    let h = Harness::start();
    let mut params = modern(json!({}));
    params["_meta"]["io.modelcontextprotocol/logLevel"] = json!("shouting");
    let response = h.request(1, "tools/list", params);
    assert_error(&response, -32602, Some(&json!(1)));
}

#[test]
fn a_fresh_process_serves_modern_requests_and_later_a_legacy_initialize() {
    let h = Harness::start();
    let response = h.request(1, "tools/list", modern(json!({})));
    assert_eq!(result(&response)["resultType"], "complete");
    let init = h.initialize("2025-03-26");
    assert_eq!(init["protocolVersion"], "2025-03-26");
    let list = h.request(2, "tools/list", json!({}));
    let list = result(&list);
    assert!(
        list.get("resultType").is_none(),
        "legacy results are not stamped: {list}"
    );
    assert!(list.get("ttlMs").is_none(), "{list}");
    let add = support::tool(list, "add");
    assert!(add.get("outputSchema").is_none(), "2025-03-26 shape: {add}");
    // Modern requests are still served after the handshake, each on its own terms.
    let response = h.request(3, "tools/list", modern(json!({})));
    assert_eq!(result(&response)["resultType"], "complete");
    assert!(support::tool(result(&response), "add")["outputSchema"].is_object());
}

#[test]
fn a_legacy_session_can_also_serve_modern_requests() {
    let h = Harness::start();
    h.initialize("2024-11-05");
    let params = modern(json!({"name": "add", "arguments": {"a": 4, "b": 5}}));
    let response = h.request(1, "tools/call", params);
    let call = result(&response);
    assert_eq!(call["resultType"], "complete");
    assert_eq!(
        call["structuredContent"],
        json!({"result": 9}),
        "modern shape: {call}"
    );
    let response = h.call(2, "add", json!({"a": 4, "b": 5}));
    let call = result(&response);
    assert!(
        call.get("structuredContent").is_none(),
        "legacy shape: {call}"
    );
    assert!(call.get("resultType").is_none(), "legacy shape: {call}");
    assert_eq!(h.request(3, "ping", json!({}))["result"], json!({}));
}

#[test]
fn modern_requests_with_errors_in_tool_dispatch_keep_jsonrpc_codes() {
    let h = Harness::start();
    let response = h.request(1, "tools/call", modern(json!({"name": "nope"})));
    assert_error(&response, -32601, Some(&json!(1)));
    let response = h.request(2, "tools/call", modern(json!({})));
    assert_error(&response, -32602, Some(&json!(2)));
    let response = h.request(3, "no/such/method", modern(json!({})));
    assert_error(&response, -32601, Some(&json!(3)));
}

#[test]
fn a_modern_tools_call_pipelined_with_other_requests_gets_one_response_each() {
    let h = Harness::start();
    h.send(&req(1, "server/discover", modern(json!({}))));
    h.send(&req(
        2,
        "tools/call",
        modern(json!({"name": "echo", "arguments": {"text": "a"}})),
    ));
    h.send(&req(3, "tools/list", modern(json!({}))));
    let frames = [h.recv(), h.recv(), h.recv()];
    let mut ids: Vec<i64> = frames.iter().filter_map(|f| f["id"].as_i64()).collect();
    ids.sort_unstable();
    assert_eq!(ids, vec![1, 2, 3]);
    for frame in &frames {
        assert_eq!(result(frame)["resultType"], "complete", "{frame}");
    }
}
