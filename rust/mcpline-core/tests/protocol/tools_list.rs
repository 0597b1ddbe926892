//! `tools/list`: stable order, cursor pagination, and descriptor fields per revision.

use std::sync::Arc;

use crate::support::{HANDSHAKE_REVS, Harness, assert_error, result, tool, tool_names};
use mcpline_core::{CallContext, FnTool, Server, ServerInfo, ToolOutput, ToolSpec};
use serde_json::{Value, json};

/// A server with five tools registered out of order.
fn five_tools(page_size: usize) -> Harness {
    let mut server = Server::new(ServerInfo::new("five", "1.0.0"));
    server.config_mut().capture = false;
    server.config_mut().page_size = page_size;
    for name in ["echo", "alpha", "delta", "bravo", "charlie"] {
        let spec =
            ToolSpec::new(name, json!({"type": "object"})).description(format!("Tool {name}."));
        let handler = FnTool(move |_args: Value, _ctx: &CallContext| ToolOutput::text(name));
        server.add_tool(spec, Arc::new(handler)).expect("register");
    }
    Harness::start_server(server)
}

#[test]
fn tools_are_listed_sorted_by_name() {
    let h = Harness::start();
    h.initialize("2025-11-25");
    let response = h.request(1, "tools/list", json!({}));
    let names = tool_names(result(&response));
    assert_eq!(
        names,
        ["add", "echo", "fail", "panics", "progress", "sleepy"]
    );
    assert!(
        result(&response).get("nextCursor").is_none(),
        "one page only: {response}"
    );
}

#[test]
fn the_order_is_stable_across_calls() {
    let h = five_tools(100);
    h.initialize("2025-11-25");
    let first = h.request(1, "tools/list", json!({}));
    let second = h.request(2, "tools/list", json!({}));
    assert_eq!(result(&first), result(&second));
    assert_eq!(
        tool_names(result(&first)),
        ["alpha", "bravo", "charlie", "delta", "echo"]
    );
}

#[test]
fn pagination_walks_every_tool_once_and_the_last_page_has_no_next_cursor() {
    let h = five_tools(2);
    h.initialize("2025-11-25");
    let mut names = Vec::new();
    let mut pages = Vec::new();
    let mut cursor: Option<Value> = None;
    for id in 1..=10 {
        let params = cursor
            .as_ref()
            .map_or_else(|| json!({}), |c| json!({"cursor": c}));
        let response = h.request(id, "tools/list", params);
        let page = result(&response).clone();
        pages.push(tool_names(&page).len());
        names.extend(tool_names(&page));
        match page.get("nextCursor") {
            Some(next) => {
                assert!(
                    next.is_string() && next != "",
                    "a cursor must be a non-empty string"
                );
                cursor = Some(next.clone());
            }
            None => break,
        }
    }
    assert_eq!(pages, [2, 2, 1]);
    assert_eq!(names, ["alpha", "bravo", "charlie", "delta", "echo"]);
}

#[test]
fn a_cursor_can_be_replayed() {
    let h = five_tools(2);
    h.initialize("2025-11-25");
    let first = h.request(1, "tools/list", json!({}));
    let cursor = result(&first)["nextCursor"].clone();
    let a = h.request(2, "tools/list", json!({"cursor": cursor}));
    let b = h.request(3, "tools/list", json!({"cursor": cursor}));
    assert_eq!(result(&a), result(&b));
    assert_eq!(tool_names(result(&a)), ["charlie", "delta"]);
}

#[test]
fn an_invalid_cursor_gets_invalid_params() {
    let h = five_tools(2);
    h.initialize("2025-11-25");
    for (id, cursor) in [
        (1, json!("garbage")),
        (2, json!("tools:999")),
        (3, json!("tools:-1")),
        (4, json!(2)),
        (5, json!({"page": 2})),
        (6, json!("")),
    ] {
        let response = h.request(id, "tools/list", json!({"cursor": cursor}));
        assert_error(&response, -32602, Some(&json!(id)));
    }
}

#[test]
fn a_null_cursor_means_the_first_page() {
    let h = five_tools(2);
    h.initialize("2025-11-25");
    let response = h.request(1, "tools/list", json!({"cursor": null}));
    assert_eq!(tool_names(result(&response)), ["alpha", "bravo"]);
}

#[test]
fn descriptors_always_have_name_description_and_an_object_input_schema() {
    for rev in HANDSHAKE_REVS {
        let h = Harness::start();
        h.initialize(rev);
        let response = h.request(1, "tools/list", json!({}));
        for t in result(&response)["tools"].as_array().expect("tools array") {
            assert!(t["name"].is_string(), "{rev}: {t}");
            assert!(t["description"].is_string(), "{rev}: {t}");
            assert_eq!(t["inputSchema"]["type"], "object", "{rev}: {t}");
        }
    }
}

#[test]
fn annotations_appear_only_from_2025_03_26() {
    for rev in HANDSHAKE_REVS {
        let h = Harness::start();
        h.initialize(rev);
        let response = h.request(1, "tools/list", json!({}));
        let add = tool(result(&response), "add");
        if rev >= "2025-03-26" {
            assert_eq!(add["annotations"]["readOnlyHint"], true, "{rev}: {add}");
            assert_eq!(add["annotations"]["idempotentHint"], true, "{rev}: {add}");
            assert!(
                add["annotations"].get("destructiveHint").is_none(),
                "unset hints stay out"
            );
        } else {
            assert!(add.get("annotations").is_none(), "{rev}: {add}");
        }
    }
}

#[test]
fn title_and_output_schema_appear_only_from_2025_06_18() {
    for rev in HANDSHAKE_REVS {
        let h = Harness::start();
        h.initialize(rev);
        let response = h.request(1, "tools/list", json!({}));
        let add = tool(result(&response), "add");
        let modern = rev >= "2025-06-18";
        assert_eq!(add.get("title").is_some(), modern, "{rev}: {add}");
        assert_eq!(add.get("outputSchema").is_some(), modern, "{rev}: {add}");
        if modern {
            assert_eq!(add["title"], "Adder");
            assert_eq!(
                add["outputSchema"]["properties"]["result"]["type"],
                "integer"
            );
        }
        let echo = tool(result(&response), "echo");
        assert!(
            echo.get("outputSchema").is_none(),
            "no output schema declared: {echo}"
        );
    }
}

#[test]
fn legacy_results_carry_no_stateless_fields() {
    let h = Harness::start();
    h.initialize("2025-11-25");
    let response = h.request(1, "tools/list", json!({}));
    let list = result(&response);
    for key in ["resultType", "ttlMs", "cacheScope", "_meta"] {
        assert!(
            list.get(key).is_none(),
            "{key} in a legacy tools/list: {list}"
        );
    }
}
