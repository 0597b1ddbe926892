//! `tools/call`: dispatch errors are JSON-RPC errors, everything that goes wrong inside a tool is
//! an `isError` result, results are shaped per revision, and calls run in arrival order.

use std::sync::Arc;
use std::time::Duration;

use crate::support::{
    self, HANDSHAKE_REVS, Harness, assert_error, call_req, ready, req, result, text_of,
};
use mcpline_core::{CallContext, FnTool, ToolOutput, ToolSpec};
use serde_json::{Value, json};

#[test]
fn a_call_without_name_gets_invalid_params() {
    let h = ready();
    let response = h.request(1, "tools/call", json!({"arguments": {}}));
    assert_error(&response, -32602, Some(&json!(1)));
    let response = h.request(2, "tools/call", json!({"name": 5}));
    assert_error(&response, -32602, Some(&json!(2)));
    let response = h.request(3, "tools/call", json!({}));
    assert_error(&response, -32602, Some(&json!(3)));
}

#[test]
fn an_unknown_tool_gets_method_not_found_naming_it() {
    let h = ready();
    let response = h.call(1, "no_such_tool", json!({}));
    assert_error(&response, -32601, Some(&json!(1)));
    let message = response["error"]["message"].as_str().unwrap_or_default();
    assert!(message.contains("no_such_tool"), "{response}");
}

#[test]
fn arguments_that_are_not_an_object_get_invalid_params() {
    let h = ready();
    for (id, arguments) in [
        (1, json!([1, 2])),
        (2, json!("a=1")),
        (3, json!(7)),
        (4, json!(true)),
    ] {
        let response = h.request(
            id,
            "tools/call",
            json!({"name": "add", "arguments": arguments}),
        );
        assert_error(&response, -32602, Some(&json!(id)));
    }
    assert!(h.events().is_empty(), "{:?}", h.events());
}

#[test]
fn a_wrong_argument_type_is_an_error_result_naming_the_problem() {
    let h = ready();
    let response = h.call(1, "add", json!({"a": "5", "b": 2}));
    let call = result(&response);
    assert_eq!(call["isError"], true, "{call}");
    assert!(
        text_of(call).contains("integer"),
        "the text should name the expected type: {call}"
    );
    assert!(
        h.events().is_empty(),
        "the tool must not run: {:?}",
        h.events()
    );
}

#[test]
fn an_unknown_argument_is_an_error_result_naming_the_key() {
    let h = ready();
    let response = h.call(1, "add", json!({"a": 1, "b": 2, "cee": 3}));
    let call = result(&response);
    assert_eq!(call["isError"], true, "{call}");
    assert!(
        text_of(call).contains("cee"),
        "the text should name the unknown key: {call}"
    );
    assert!(
        h.events().is_empty(),
        "the tool must not run: {:?}",
        h.events()
    );
}

#[test]
fn a_missing_required_argument_is_an_error_result() {
    let h = ready();
    let response = h.call(1, "add", json!({"a": 1}));
    let call = result(&response);
    assert_eq!(call["isError"], true, "{call}");
    assert!(text_of(call).contains('b'), "{call}");
    let response = h.request(2, "tools/call", json!({"name": "add"}));
    assert_eq!(
        result(&response)["isError"],
        true,
        "absent arguments are validated too"
    );
}

#[test]
fn a_tool_error_is_an_error_result_with_its_text() {
    let h = ready();
    let response = h.call(1, "fail", json!({}));
    let call = result(&response);
    assert_eq!(call["isError"], true);
    assert_eq!(text_of(call), "fail: it failed on purpose");
}

#[test]
fn a_panicking_tool_is_an_error_result_and_the_server_keeps_serving() {
    let h = ready();
    let response = h.call(1, "panics", json!({}));
    let call = result(&response);
    assert_eq!(call["isError"], true);
    let text = text_of(call);
    assert!(text.contains("panic"), "{call}");
    assert!(
        text.contains("kaboom"),
        "the panic message should be included: {call}"
    );
    let response = h.call(2, "echo", json!({"text": "still here"}));
    assert_eq!(text_of(result(&response)), "still here");
    assert_eq!(h.request(3, "ping", json!({}))["result"], json!({}));
}

#[test]
fn successful_results_have_content_and_no_is_error_flag() {
    let h = ready();
    let response = h.call(1, "echo", json!({"text": "hello"}));
    let call = result(&response);
    assert_eq!(call["content"], json!([{"type": "text", "text": "hello"}]));
    assert!(
        call.get("isError").is_none() || call["isError"] == false,
        "{call}"
    );
}

#[test]
fn structured_content_appears_only_from_2025_06_18_and_the_text_mirror_always() {
    for rev in HANDSHAKE_REVS {
        let h = Harness::start();
        h.initialize(rev);
        let response = h.call(1, "add", json!({"a": 40, "b": 2}));
        let call = result(&response);
        let mirror: Value = serde_json::from_str(&text_of(call)).expect("a JSON text mirror");
        assert_eq!(mirror, json!({"result": 42}), "{rev}: {call}");
        if rev >= "2025-06-18" {
            assert_eq!(
                call["structuredContent"],
                json!({"result": 42}),
                "{rev}: {call}"
            );
        } else {
            assert!(call.get("structuredContent").is_none(), "{rev}: {call}");
        }
    }
}

#[test]
fn queued_calls_run_and_answer_in_arrival_order() {
    let h = ready();
    h.send(&call_req(1, "sleepy", json!({"ms": 100})));
    for id in 2..=6 {
        h.send(&call_req(id, "echo", json!({"text": format!("n{id}")})));
    }
    let ids: Vec<i64> = (1..=6)
        .map(|_| h.recv()["id"].as_i64().expect("int id"))
        .collect();
    assert_eq!(ids, [1, 2, 3, 4, 5, 6]);
    assert_eq!(
        h.events(),
        [
            "sleepy:start:1",
            "sleepy:done:1",
            "echo:2",
            "echo:3",
            "echo:4",
            "echo:5",
            "echo:6"
        ]
    );
}

#[test]
fn a_duplicate_in_flight_id_is_refused_while_the_first_call_completes() {
    let h = ready();
    h.send(&call_req(7, "sleepy", json!({"ms": 1000})));
    h.send(&call_req(7, "echo", json!({"text": "dup"})));
    // The refusal comes at once, before the first call's result.
    let refused = h.recv();
    assert_error(&refused, -32600, Some(&json!(7)));
    let done = h.recv();
    assert_eq!(done["id"], 7);
    assert_eq!(text_of(result(&done)), "slept 1000 ms");
    h.expect_silence(Duration::from_millis(100));
    assert!(
        !h.events().iter().any(|e| e.starts_with("echo")),
        "{:?}",
        h.events()
    );
}

#[test]
fn the_same_id_with_another_json_type_is_not_a_duplicate() {
    let h = ready();
    h.send(&call_req(7, "sleepy", json!({"ms": 100})));
    h.send(&call_req("7", "echo", json!({"text": "string id"})));
    let first = h.recv();
    let second = h.recv();
    assert_eq!(first["id"], json!(7));
    assert_eq!(second["id"], json!("7"));
    assert_eq!(text_of(result(&second)), "string id");
}

#[test]
fn an_id_can_be_used_again_once_its_call_is_answered() {
    let h = ready();
    let first = h.call(3, "echo", json!({"text": "one"}));
    assert_eq!(text_of(result(&first)), "one");
    let second = h.call(3, "echo", json!({"text": "two"}));
    assert_eq!(text_of(result(&second)), "two");
}

#[test]
fn a_tool_timeout_is_an_error_result() {
    let h = Harness::start_with(|server| {
        let mut spec = ToolSpec::new("slow", json!({"type": "object"}));
        spec.timeout = Some(Duration::from_millis(100));
        let handler = FnTool(|_args: Value, ctx: &CallContext| {
            for _ in 0..500 {
                if ctx.is_cancelled() {
                    return ToolOutput::text("stopped early");
                }
                std::thread::sleep(Duration::from_millis(10));
            }
            ToolOutput::text("finished")
        });
        server
            .add_tool(spec, Arc::new(handler))
            .expect("register slow");
    });
    h.initialize("2025-11-25");
    h.send(&call_req(1, "slow", json!({})));
    // Without the timeout the tool would run 5 s and succeed.
    let response = h.recv();
    let call = result(&response);
    assert_eq!(call["isError"], true, "{call}");
    assert!(text_of(call).contains("timed out"), "{call}");
}

#[test]
fn a_ping_with_the_id_of_a_running_call_is_answered_and_the_call_still_completes() {
    let h = ready();
    h.send(&call_req(5, "sleepy", json!({"ms": 1000})));
    h.send(&req(5, "ping", json!({})));
    let pong = h.recv();
    assert_eq!(pong["id"], 5);
    assert_eq!(
        *result(&pong),
        json!({}),
        "the ping is answered first: {pong}"
    );
    let done = h.recv();
    assert_eq!(done["id"], 5);
    assert_eq!(text_of(result(&done)), "slept 1000 ms");
}

#[test]
fn a_task_parameter_is_ignored_on_2025_11_25() {
    let h = ready();
    let params = json!({"name": "echo", "arguments": {"text": "t"}, "task": {"ttl": 1000}});
    let response = h.request(1, "tools/call", params);
    assert_eq!(text_of(result(&response)), "t");
}

#[test]
fn multi_round_trip_fields_are_ignored_in_2026_07_28() {
    let h = Harness::start();
    let params = support::modern(json!({
        "name": "echo", "arguments": {"text": "m"},
        "inputResponses": {}, "requestState": "opaque"
    }));
    let response = h.request(1, "tools/call", params);
    assert_eq!(text_of(result(&response)), "m");
    assert_eq!(result(&response)["resultType"], "complete");
}

#[test]
fn a_timed_out_tool_that_does_not_stop_is_answered_without_waiting_for_it() {
    let h = Harness::start_with(|server| {
        let mut spec = ToolSpec::new("deaf", json!({"type": "object"}));
        spec.timeout = Some(Duration::from_millis(100));
        let handler = FnTool(|_args: Value, _ctx: &CallContext| {
            std::thread::sleep(Duration::from_millis(1500)); // ignores its cancellation
            ToolOutput::text("finished")
        });
        server
            .add_tool(spec, Arc::new(handler))
            .expect("register deaf");
    });
    h.initialize("2025-11-25");
    h.send(&call_req(1, "deaf", json!({})));
    let response = h.recv_within(Duration::from_millis(1000));
    assert_eq!(response["id"], 1);
    let call = result(&response);
    assert_eq!(call["isError"], true, "{call}");
    assert!(text_of(call).contains("cannot be interrupted"), "{call}");
    // The late result is dropped: the next frame is the ping's answer.
    std::thread::sleep(Duration::from_millis(1600));
    let pong = h.request(2, "ping", json!({}));
    assert_eq!(pong["id"], 2, "{pong}");
}

#[test]
fn a_result_that_breaks_the_output_schema_is_an_error_naming_the_declared_type() {
    let h = Harness::start_with(|server| {
        let mut spec = ToolSpec::new("liar", json!({"type": "object"}));
        spec.output_schema = Some(json!({
            "type": "object",
            "properties": {"result": {"type": "integer"}},
            "required": ["result"]
        }));
        spec.output_type = Some("int".into());
        let handler = FnTool(|_args: Value, _ctx: &CallContext| {
            ToolOutput::structured(json!({"result": "three"}))
        });
        server
            .add_tool(spec, Arc::new(handler))
            .expect("register liar");
    });
    h.initialize("2025-11-25");
    let response = h.call(1, "liar", json!({}));
    let call = result(&response);
    assert_eq!(call["isError"], true, "{call}");
    assert!(call.get("structuredContent").is_none(), "{call}");
    assert_eq!(
        text_of(call),
        "Tool \"liar\" returned a result that does not match its declared return type int:\n\
         result: \"three\" is not of type \"integer\""
    );
}

#[test]
fn a_tool_that_is_not_strict_sends_its_result_unchecked() {
    let h = Harness::start_with(|server| {
        let mut spec = ToolSpec::new("loose", json!({"type": "object"}));
        spec.strict = false;
        spec.output_schema = Some(json!({
            "type": "object",
            "properties": {"result": {"type": "integer"}},
            "required": ["result"]
        }));
        let handler = FnTool(|_args: Value, _ctx: &CallContext| {
            ToolOutput::structured(json!({"result": "three"}))
        });
        server
            .add_tool(spec, Arc::new(handler))
            .expect("register loose");
    });
    h.initialize("2025-11-25");
    let response = h.call(1, "loose", json!({}));
    assert_eq!(
        result(&response)["structuredContent"],
        json!({"result": "three"})
    );
}
