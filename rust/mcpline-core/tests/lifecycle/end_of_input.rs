//! How a serve ends: end of input (everything already read is answered; a tool still running
//! after the grace period is cancelled and the queue behind it is answered with errors), a dead
//! output channel, and the stop check.

use std::io;
use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};
use std::sync::mpsc::{self, Receiver};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use crate::support::{
    self, Events, Harness, assert_error, call_req, init_params, req, result, text_of,
};
use mcpline_core::{Inbound, ServeEnd, Transport, TransportError, lock};
use serde_json::{Value, json};

#[test]
fn all_queued_calls_are_answered_in_order_before_serve_returns() {
    let mut h = Harness::start();
    h.initialize("2025-11-25");
    for id in 1..=20 {
        h.send(&call_req(id, "add", json!({"a": id, "b": 1000})));
    }
    h.close();
    for id in 1..=20 {
        let response = h.recv();
        assert_eq!(response["id"], id, "responses in order");
        assert_eq!(
            result(&response)["structuredContent"],
            json!({"result": id + 1000})
        );
    }
    assert_eq!(h.wait_end(Duration::from_secs(5)), ServeEnd::EndOfInput);
    assert!(
        h.try_recv(Duration::from_millis(50)).is_none(),
        "nothing after the last response"
    );
}

#[test]
fn end_of_input_on_an_idle_server_returns_at_once() {
    let mut h = Harness::start();
    h.initialize("2025-11-25");
    let started = Instant::now();
    h.close();
    assert_eq!(h.wait_end(Duration::from_secs(4)), ServeEnd::EndOfInput);
    // Far less than the default 5 s grace period: there is nothing to wait for.
    assert!(
        started.elapsed() < Duration::from_secs(3),
        "took {:?}",
        started.elapsed()
    );
}

#[test]
fn end_of_input_right_away_returns_end_of_input() {
    let h = Harness::start();
    assert_eq!(h.finish(), ServeEnd::EndOfInput);
}

#[test]
fn a_slow_call_within_the_grace_period_still_completes() {
    let mut h =
        Harness::start_with(|server| server.config_mut().eof_grace = Duration::from_secs(5));
    h.initialize("2025-11-25");
    h.send(&call_req(1, "sleepy", json!({"ms": 300})));
    h.send(&call_req(2, "echo", json!({"text": "after"})));
    h.close();
    let first = h.recv();
    assert_eq!(first["id"], 1);
    assert_eq!(text_of(result(&first)), "slept 300 ms");
    let second = h.recv();
    assert_eq!(second["id"], 2);
    assert_eq!(text_of(result(&second)), "after");
    assert_eq!(h.wait_end(Duration::from_secs(5)), ServeEnd::EndOfInput);
}

#[test]
fn after_the_grace_period_the_running_call_is_cancelled_and_queued_calls_get_internal_error() {
    let mut h =
        Harness::start_with(|server| server.config_mut().eof_grace = Duration::from_millis(300));
    h.initialize("2025-11-25");
    h.send(&call_req(1, "sleepy", json!({"ms": 20_000})));
    h.send(&call_req(2, "echo", json!({"text": "queued"})));
    h.send(&call_req("three", "add", json!({"a": 1, "b": 2})));
    let started = Instant::now();
    h.close();
    assert_eq!(h.wait_end(Duration::from_secs(10)), ServeEnd::EndOfInput);
    assert!(
        started.elapsed() < Duration::from_secs(5),
        "took {:?}",
        started.elapsed()
    );
    let frames = h.collect_until_silence(Duration::from_millis(100));
    let by_id = |id: Value| -> Vec<&Value> { frames.iter().filter(|f| f["id"] == id).collect() };
    for id in [json!(2), json!("three")] {
        let answers = by_id(id.clone());
        assert_eq!(answers.len(), 1, "one answer for {id}: {frames:?}");
        assert_error(answers[0], -32603, Some(&id));
    }
    let sleepy = by_id(json!(1));
    assert_eq!(
        sleepy.len(),
        1,
        "the running call is answered exactly once: {frames:?}"
    );
    let events = h.events();
    assert!(
        events.contains(&"sleepy:cancelled:1".to_string()),
        "{events:?}"
    );
    assert!(
        !events.iter().any(|e| e == "echo:2" || e == "add:\"three\""),
        "{events:?}"
    );
}

#[test]
fn stream_twenty_calls_then_end_of_input_in_one_chunk_are_all_answered_in_order() {
    let mut h = Harness::start_stream(1 << 20);
    let mut bytes = format!("{}\n", req("init", "initialize", init_params("2025-06-18")));
    for id in 1..=20 {
        bytes.push_str(&call_req(id, "add", json!({"a": id, "b": 1})).to_string());
        bytes.push('\n');
    }
    h.send_bytes(bytes.into_bytes());
    h.close();
    assert_eq!(h.recv()["id"], "init");
    for id in 1..=20 {
        let response = h.recv();
        assert_eq!(response["id"], id);
        assert_eq!(result(&response)["structuredContent"]["result"], id + 1);
    }
    assert_eq!(h.wait_end(Duration::from_secs(5)), ServeEnd::EndOfInput);
}

/// A transport whose output dies after `ok_writes` successful writes.
struct DyingOutput {
    lines: Mutex<Receiver<Vec<u8>>>,
    ok_writes: AtomicUsize,
}

impl Transport for DyingOutput {
    fn read_line(&self) -> Result<Option<Inbound>, TransportError> {
        let rx = lock(&self.lines);
        Ok(rx.recv().ok().map(Inbound::Line))
    }

    fn write_line(&self, _line: &[u8]) -> Result<(), TransportError> {
        let left = self.ok_writes.load(Ordering::SeqCst);
        if left == 0 {
            return Err(TransportError::OutputClosed(io::Error::from(
                io::ErrorKind::BrokenPipe,
            )));
        }
        self.ok_writes.store(left - 1, Ordering::SeqCst);
        Ok(())
    }
}

#[test]
fn a_dead_output_ends_serve_with_output_closed_and_cancels_the_running_call() {
    let events = Events::default();
    let server = support::test_server(&events);
    let (input, lines) = mpsc::channel::<Vec<u8>>();
    let transport = Arc::new(DyingOutput {
        lines: Mutex::new(lines),
        ok_writes: 1.into(),
    });
    let (done_tx, done) = mpsc::channel();
    std::thread::spawn(move || {
        let _ = done_tx.send(server.serve(transport));
    });
    let send = |frame: Value| {
        input
            .send(frame.to_string().into_bytes())
            .expect("server reading")
    };
    let seen = |event: &str| events.lock().expect("events").iter().any(|e| e == event);
    send(req("init", "initialize", init_params("2025-11-25")));
    send(call_req(1, "sleepy", json!({"ms": 20_000})));
    let deadline = Instant::now() + Duration::from_secs(10);
    while !seen("sleepy:start:1") {
        assert!(Instant::now() < deadline, "sleepy never started");
        std::thread::sleep(Duration::from_millis(5));
    }
    let started = Instant::now();
    // Its response cannot be written: the output is dead now.
    send(req(2, "ping", json!({})));
    let end = done
        .recv_timeout(Duration::from_secs(10))
        .expect("serve() returned");
    assert_eq!(end, ServeEnd::OutputClosed);
    assert!(
        started.elapsed() < Duration::from_secs(5),
        "took {:?}",
        started.elapsed()
    );
    assert!(
        seen("sleepy:cancelled:1"),
        "{:?}",
        events.lock().expect("events")
    );
    // The input is still open: only the dead output ended the serve.
    drop(input);
}

fn stop_flag_server() -> (Harness, Arc<AtomicBool>) {
    let stop = Arc::new(AtomicBool::new(false));
    let flag = Arc::clone(&stop);
    let h = Harness::start_with(move |server| {
        server.set_stop_check(Arc::new(move || flag.load(Ordering::SeqCst)));
    });
    (h, stop)
}

#[test]
fn a_stop_check_firing_while_idle_ends_serve_with_interrupted() {
    let (mut h, stop) = stop_flag_server();
    h.initialize("2025-11-25");
    let call = h.call(1, "echo", json!({"text": "before"}));
    assert_eq!(text_of(result(&call)), "before");
    stop.store(true, Ordering::SeqCst);
    assert_eq!(h.wait_end(Duration::from_secs(5)), ServeEnd::Interrupted);
}

#[test]
fn a_stop_check_firing_during_a_call_answers_the_queued_calls_with_internal_error() {
    let (mut h, stop) = stop_flag_server();
    h.initialize("2025-11-25");
    h.send(&call_req(1, "sleepy", json!({"ms": 1000})));
    h.send(&call_req(2, "echo", json!({"text": "queued"})));
    h.send(&call_req(3, "echo", json!({"text": "queued too"})));
    // Make sure all three are read before the stop check fires.
    h.send(&req("sync", "ping", json!({})));
    let (mut frames, _pong) = h.recv_until_response(&json!("sync"));
    stop.store(true, Ordering::SeqCst);
    assert_eq!(h.wait_end(Duration::from_secs(10)), ServeEnd::Interrupted);
    frames.extend(h.collect_until_silence(Duration::from_millis(100)));
    assert_eq!(frames.len(), 3, "one answer per call: {frames:?}");
    for id in [2, 3] {
        let answer = frames.iter().find(|f| f["id"] == id).expect("an answer");
        assert_error(answer, -32603, Some(&json!(id)));
    }
    assert!(
        !h.events().iter().any(|e| e.starts_with("echo")),
        "{:?}",
        h.events()
    );
}

/// The stop check runs while the worker is idle and after each call, never inside one: a call
/// in progress finishes and is answered, then the server stops at once.
#[test]
fn a_stop_check_firing_during_a_call_lets_it_finish_then_stops_at_once() {
    let (mut h, stop) = stop_flag_server();
    h.initialize("2025-11-25");
    h.send(&call_req(1, "sleepy", json!({"ms": 300})));
    h.wait_for_event("sleepy:start:1");
    stop.store(true, Ordering::SeqCst);
    let answer = h.recv_within(Duration::from_secs(5));
    assert_eq!(answer["id"], json!(1), "{answer}");
    assert!(
        answer.get("result").is_some(),
        "the running call is answered: {answer}"
    );
    let finished = Instant::now();
    assert_eq!(h.wait_end(Duration::from_secs(5)), ServeEnd::Interrupted);
    assert!(
        finished.elapsed() < Duration::from_secs(2),
        "stopped {:?} after",
        finished.elapsed()
    );
}
