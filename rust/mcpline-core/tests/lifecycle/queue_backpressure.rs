//! The bounded call queue: a reader that outruns the tools stops reading when the queue is full
//! and reads again once the queue has drained to half its capacity (so it is woken once per
//! half a queue, not once per call). Nothing is lost or reordered on the way.

use std::time::Duration;

use crate::support::{Harness, call_req, req, result, text_of};
use mcpline_core::ServeEnd;
use serde_json::{Value, json};

fn answered_in_order_with_capacity(capacity: usize) {
    let mut h = Harness::start_with(|server| server.config_mut().queue_capacity = capacity);
    h.initialize("2025-11-25");
    for id in 1..=500 {
        h.send(&call_req(id, "add", json!({"a": id, "b": 1})));
    }
    h.close();
    for id in 1..=500 {
        let response = h.recv();
        assert_eq!(
            response["id"], id,
            "responses in order (capacity {capacity})"
        );
        assert_eq!(
            result(&response)["structuredContent"],
            json!({"result": id + 1})
        );
    }
    assert_eq!(h.wait_end(Duration::from_secs(10)), ServeEnd::EndOfInput);
}

#[test]
fn every_call_is_answered_in_order_through_a_queue_of_one() {
    answered_in_order_with_capacity(1);
}

#[test]
fn every_call_is_answered_in_order_through_a_queue_of_two() {
    answered_in_order_with_capacity(2);
}

#[test]
fn every_call_is_answered_in_order_through_a_queue_of_five() {
    answered_in_order_with_capacity(5);
}

#[test]
fn a_reader_held_back_by_a_full_queue_reads_again_at_half_capacity() {
    let h = Harness::start_with(|server| server.config_mut().queue_capacity = 4);
    h.initialize("2025-11-25");
    // Call 1 runs; calls 2-5 fill the queue; pushing call 6 holds the reader back, so the ping
    // behind it is read only once the queue is down to 2 (call 3 has started).
    h.send(&call_req(1, "sleepy", json!({"ms": 300})));
    h.wait_for_event("sleepy:start:1");
    for id in 2..=6 {
        h.send(&call_req(id, "sleepy", json!({"ms": 300})));
    }
    h.send(&req("p", "ping", json!({})));
    let order: Vec<Value> = (0..7).map(|_| h.recv()["id"].clone()).collect();
    assert_eq!(
        order,
        vec![
            json!(1),
            json!(2),
            json!("p"),
            json!(3),
            json!(4),
            json!(5),
            json!(6)
        ],
        "the ping is answered while call 3 runs, not earlier and not at the end"
    );
    let last = h.call(7, "echo", json!({"text": "still serving"}));
    assert_eq!(text_of(result(&last)), "still serving");
}
