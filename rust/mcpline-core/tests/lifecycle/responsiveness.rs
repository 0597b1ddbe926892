//! The reader answers at once while a tool runs, and cancellation stops calls without a
//! response.

use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};
use std::time::{Duration, Instant};

use crate::support::{Harness, call_req, cancel, modern, ready, req, result, text_of};
use mcpline_core::{CallContext, FnTool, ToolOutput, ToolSpec};
use serde_json::{Value, json};

#[test]
fn ping_and_tools_list_are_answered_promptly_while_a_tool_runs() {
    let h = ready();
    h.send(&call_req("long", "sleepy", json!({"ms": 5000})));
    h.wait_for_event("sleepy:start:\"long\"");
    let started = Instant::now();
    h.send(&req(1, "ping", json!({})));
    let pong = h.recv();
    assert_eq!(pong["id"], 1);
    assert_eq!(*result(&pong), json!({}));
    h.send(&req(2, "tools/list", json!({})));
    let list = h.recv();
    assert_eq!(list["id"], 2);
    assert!(result(&list)["tools"].is_array());
    h.send(&req(3, "server/discover", modern(json!({}))));
    let discover = h.recv();
    assert_eq!(discover["id"], 3);
    // All answered while the tool was still running (and quickly, even on a loaded machine).
    assert!(
        !h.events().iter().any(|e| e.starts_with("sleepy:done")),
        "{:?}",
        h.events()
    );
    assert!(
        started.elapsed() < Duration::from_secs(3),
        "took {:?}",
        started.elapsed()
    );
    h.send(&cancel("long"));
    h.wait_for_event("sleepy:cancelled:\"long\"");
}

#[test]
fn a_cancelled_running_call_gets_no_response_and_the_tool_observes_it() {
    let h = ready();
    h.send(&call_req(1, "sleepy", json!({"ms": 3000})));
    h.wait_for_event("sleepy:start:1");
    h.send(&cancel(1));
    h.wait_for_event("sleepy:cancelled:1");
    // The tool has returned: a response would be written right now.
    h.expect_silence(Duration::from_millis(300));
    assert!(
        !h.events().contains(&"sleepy:done:1".to_string()),
        "{:?}",
        h.events()
    );
    assert_eq!(h.request(2, "ping", json!({}))["result"], json!({}));
}

#[test]
fn a_cancelled_queued_call_never_runs_and_gets_no_response() {
    let h = ready();
    h.send(&call_req(1, "sleepy", json!({"ms": 5000})));
    h.send(&call_req(2, "echo", json!({"text": "never"})));
    h.send(&call_req(3, "echo", json!({"text": "after"})));
    h.send(&cancel(2));
    // Once the ping is answered, the cancellation of the queued call has been handled.
    assert_eq!(h.request("sync", "ping", json!({}))["result"], json!({}));
    h.send(&cancel(1));
    let next = h.recv();
    assert_eq!(
        next["id"], 3,
        "only the call after the cancelled one is answered: {next}"
    );
    assert_eq!(text_of(result(&next)), "after");
    h.expect_silence(Duration::from_millis(100));
    assert!(
        !h.events().contains(&"echo:2".to_string()),
        "{:?}",
        h.events()
    );
}

#[test]
fn cancelling_an_unknown_or_finished_id_is_harmless() {
    let h = ready();
    let done = h.call(1, "echo", json!({"text": "done"}));
    assert_eq!(text_of(result(&done)), "done");
    h.send(&cancel(1));
    h.send(&cancel(999));
    h.send(&cancel("nobody"));
    h.expect_silence(Duration::from_millis(100));
    let next = h.call(2, "echo", json!({"text": "fine"}));
    assert_eq!(text_of(result(&next)), "fine");
}

#[test]
fn a_cancellation_with_the_id_in_another_json_type_does_not_cancel() {
    let h = ready();
    h.send(&call_req(1, "sleepy", json!({"ms": 150})));
    h.send(&cancel("1"));
    let done = h.recv();
    assert_eq!(done["id"], 1);
    assert_eq!(text_of(result(&done)), "slept 150 ms");
}

#[test]
fn a_cancelled_call_sends_no_progress_and_no_response_after_the_cancellation() {
    let h = ready();
    h.send(&json!({
        "jsonrpc": "2.0", "id": 1, "method": "tools/call",
        "params": {"name": "sleepy", "arguments": {"ms": 2000}, "_meta": {"progressToken": "p"}}
    }));
    let first = h.recv();
    assert_eq!(
        first["method"], "notifications/progress",
        "the call reports progress: {first}"
    );
    h.send(&cancel(1));
    // Once the ping is answered the reader has handled the cancellation; a notification already
    // on its way may still arrive within a few milliseconds, nothing after that.
    h.send(&req("sync", "ping", json!({})));
    let (before, _pong) = h.recv_until_response(&json!("sync"));
    std::thread::sleep(Duration::from_millis(30));
    let stragglers = h.collect_until_silence(Duration::from_millis(10));
    h.expect_silence(Duration::from_millis(300));
    for frame in before.iter().chain(&stragglers) {
        assert_eq!(
            frame["method"], "notifications/progress",
            "only progress before: {frame}"
        );
    }
    assert!(
        stragglers.len() <= 1,
        "progress went on after the cancellation: {stragglers:?}"
    );
    assert!(
        h.events().contains(&"sleepy:cancelled:1".to_string()),
        "{:?}",
        h.events()
    );
}

/// A modern client may reuse an id once its request is no longer outstanding; a cancelled
/// request is not. The reused id must get the new call's response, not the old one's.
#[test]
fn an_id_reused_after_its_running_call_was_cancelled_gets_the_new_calls_response() {
    let started = Arc::new(AtomicBool::new(false));
    let flag = Arc::clone(&started);
    let h = Harness::start_with(move |server| {
        // Like most real tools, this one takes a moment to wind down once cancelled.
        let spec = ToolSpec::new("winds_down", json!({"type": "object"}));
        let handler = FnTool(move |_args: Value, ctx: &CallContext| {
            flag.store(true, Ordering::SeqCst);
            while !ctx.is_cancelled() {
                std::thread::sleep(Duration::from_millis(5));
            }
            std::thread::sleep(Duration::from_millis(150));
            ToolOutput::text("output of the cancelled call")
        });
        server
            .add_tool(spec, Arc::new(handler))
            .expect("register winds_down");
    });
    h.send(&req(
        1,
        "tools/call",
        modern(json!({"name": "winds_down", "arguments": {}})),
    ));
    let deadline = Instant::now() + Duration::from_secs(5);
    while !started.load(Ordering::SeqCst) {
        assert!(Instant::now() < deadline, "winds_down never started");
        std::thread::sleep(Duration::from_millis(5));
    }
    h.send(&cancel(1));
    let echo = modern(json!({"name": "echo", "arguments": {"text": "second"}}));
    h.send(&req(1, "tools/call", echo));
    let frames = h.collect_until_silence(Duration::from_millis(500));
    assert_eq!(
        frames.len(),
        1,
        "exactly one response for the second request: {frames:?}"
    );
    assert_eq!(frames[0]["id"], 1);
    assert_eq!(
        text_of(result(&frames[0])),
        "second",
        "another call's output: {}",
        frames[0]
    );
}
