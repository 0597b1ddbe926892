//! Progress notifications: only with a token, the token echoed with its JSON type, strictly
//! increasing, all before the response, `message` only from 2025-03-26.

use std::time::Duration;

use crate::support::{self, HANDSHAKE_REVS, Harness, modern, result, text_of};
use serde_json::{Value, json};

fn call_with_token(h: &Harness, id: i64, token: Option<Value>) -> (Vec<Value>, Value) {
    let mut params = json!({"name": "progress", "arguments": {}});
    if let Some(token) = token {
        params["_meta"] = json!({"progressToken": token});
    }
    h.send(&support::req(id, "tools/call", params));
    let (before, response) = h.recv_until_response(&json!(id));
    h.expect_silence(Duration::from_millis(50));
    (before, response)
}

#[track_caller]
fn assert_progress_stream(notes: &[Value], token: &Value) {
    assert_eq!(notes.len(), 3, "three notifications: {notes:?}");
    let mut last = f64::NEG_INFINITY;
    for note in notes {
        assert_eq!(note["method"], "notifications/progress", "{note}");
        assert!(note.get("id").is_none(), "a notification has no id: {note}");
        let params = &note["params"];
        assert_eq!(
            &params["progressToken"], token,
            "the token keeps its JSON type: {note}"
        );
        let progress = params["progress"].as_f64().expect("numeric progress");
        assert!(
            progress > last,
            "progress must increase strictly: {notes:?}"
        );
        last = progress;
        assert_eq!(params["total"], 3, "{note}");
    }
}

#[test]
fn no_progress_is_sent_without_a_token() {
    let h = Harness::start();
    h.initialize("2025-11-25");
    let (before, response) = call_with_token(&h, 1, None);
    assert!(before.is_empty(), "progress without a token: {before:?}");
    assert_eq!(text_of(result(&response)), "sent 0 progress notifications");
}

#[test]
fn a_string_token_is_echoed_as_a_string_and_all_progress_precedes_the_response() {
    let h = Harness::start();
    h.initialize("2025-11-25");
    let token = json!("tok-1");
    let (before, response) = call_with_token(&h, 1, Some(token.clone()));
    assert_progress_stream(&before, &token);
    assert_eq!(text_of(result(&response)), "sent 3 progress notifications");
}

#[test]
fn an_integer_token_is_echoed_as_an_integer() {
    let h = Harness::start();
    h.initialize("2025-11-25");
    let token = json!(77);
    let (before, _response) = call_with_token(&h, 1, Some(token.clone()));
    assert_progress_stream(&before, &token);
    let (before, _response) = call_with_token(&h, 2, Some(json!(0)));
    assert_progress_stream(&before, &json!(0));
}

#[test]
fn a_token_of_another_type_gets_no_progress() {
    let h = Harness::start();
    h.initialize("2025-11-25");
    for (id, token) in [(1, json!(1.5)), (2, json!({"t": 1})), (3, json!(true))] {
        let (before, response) = call_with_token(&h, id, Some(token));
        assert!(before.is_empty(), "{before:?}");
        assert!(
            response.get("result").is_some(),
            "the call itself still runs: {response}"
        );
    }
}

#[test]
fn message_is_absent_for_2024_11_05_and_present_from_2025_03_26() {
    for rev in HANDSHAKE_REVS {
        let h = Harness::start();
        h.initialize(rev);
        let token = json!("m");
        let (before, _response) = call_with_token(&h, 1, Some(token.clone()));
        assert_progress_stream(&before, &token);
        for (n, note) in before.iter().enumerate() {
            let message = note["params"].get("message");
            if rev == "2024-11-05" {
                assert!(message.is_none(), "{rev}: {note}");
            } else {
                assert_eq!(
                    message,
                    Some(&json!(format!("step {} of 3", n + 1))),
                    "{rev}: {note}"
                );
            }
        }
    }
}

#[test]
fn progress_works_for_stateless_requests_too() {
    let h = Harness::start();
    let mut params = modern(json!({"name": "progress", "arguments": {}}));
    params["_meta"]["progressToken"] = json!("modern");
    h.send(&support::req(1, "tools/call", params));
    let (before, response) = h.recv_until_response(&json!(1));
    assert_progress_stream(&before, &json!("modern"));
    assert!(before.iter().all(|n| n["params"]["message"].is_string()));
    assert_eq!(result(&response)["resultType"], "complete");
}
