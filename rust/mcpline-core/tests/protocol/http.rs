//! Streamable HTTP, as the endpoint decides it: statuses, session ids, header checks and the
//! frames each request's exchange yields. (The ASGI side that moves the bytes is tested from
//! Python with real clients.)

use std::sync::Arc;
use std::thread;
use std::time::Duration;

use mcpline_core::{Exchange, HttpConfig, HttpEndpoint, HttpHeaders, HttpReply, Next};
use serde_json::{Value, json};

use crate::support::{Events, MODERN_REV, test_server};

const PV: &str = "io.modelcontextprotocol/protocolVersion";
const CAPS: &str = "io.modelcontextprotocol/clientCapabilities";

fn endpoint() -> (HttpEndpoint, Events) {
    let events = Events::default();
    let server = test_server(&events);
    (HttpEndpoint::new(server, HttpConfig::default()), events)
}

fn headers(pairs: &[(&str, &str)]) -> HttpHeaders {
    let mut h = HttpHeaders::new();
    for (name, value) in [
        ("content-type", "application/json"),
        ("accept", "application/json, text/event-stream"),
        ("host", "127.0.0.1:8000"),
    ]
    .iter()
    .chain(pairs)
    {
        h.push(name.as_bytes(), value.as_bytes());
    }
    h
}

/// A 2026-07-28 request with its envelope and the headers that mirror it.
fn modern(endpoint: &HttpEndpoint, id: i64, method: &str, mut params: Value) -> HttpReply {
    params["_meta"] = json!({PV: MODERN_REV, CAPS: {}});
    let name = params
        .get("name")
        .or_else(|| params.get("uri"))
        .and_then(Value::as_str)
        .map(str::to_owned);
    let mut pairs = vec![("mcp-protocol-version", MODERN_REV), ("mcp-method", method)];
    if let Some(name) = &name {
        pairs.push(("mcp-name", name));
    }
    let body = json!({"jsonrpc": "2.0", "id": id, "method": method, "params": params});
    endpoint.post(&headers(&pairs), body.to_string().as_bytes())
}

fn body(reply: &HttpReply) -> Value {
    serde_json::from_slice(&reply.body).expect("a JSON body")
}

/// Runs the exchange's calls and collects its frames until it is done.
fn drain(exchange: &Exchange) -> Vec<Value> {
    exchange.run();
    let mut frames = Vec::new();
    loop {
        match exchange.wait(Duration::from_secs(10)) {
            Next::Frame(bytes) => frames.push(serde_json::from_slice(&bytes).unwrap()),
            Next::Last(bytes) => {
                frames.push(serde_json::from_slice(&bytes).unwrap());
                assert_eq!(
                    exchange.next(),
                    Next::Done,
                    "nothing follows the last frame"
                );
                return frames;
            }
            Next::Done => return frames,
            Next::Pending => panic!("the exchange did not end within 10 s"),
        }
    }
}

#[test]
fn a_stateless_list_is_answered_at_once_as_json() {
    let (endpoint, _) = endpoint();
    let reply = modern(&endpoint, 1, "tools/list", json!({}));
    assert_eq!(reply.status, 200);
    assert!(reply.exchange.is_none());
    assert!(
        reply.headers.is_empty(),
        "no session id is minted for 2026-07-28"
    );
    assert_eq!(body(&reply)["id"], 1);
    assert!(body(&reply)["result"]["tools"].as_array().unwrap().len() >= 5);
}

#[test]
fn a_stateless_call_streams_from_its_exchange() {
    let (endpoint, _) = endpoint();
    let reply = modern(
        &endpoint,
        7,
        "tools/call",
        json!({"name": "add", "arguments": {"a": 2, "b": 3}}),
    );
    assert_eq!(reply.status, 200);
    let exchange = reply.exchange.expect("a queued call");
    assert!(exchange.has_work());
    let frames = drain(&exchange);
    assert_eq!(frames.len(), 1);
    assert_eq!(frames[0]["id"], 7);
    assert_eq!(frames[0]["result"]["structuredContent"]["result"], 5);
}

#[test]
fn progress_comes_before_the_response_on_the_same_exchange() {
    let (endpoint, _) = endpoint();
    // The progress token rides in the envelope's _meta.
    let mut h = vec![
        ("mcp-protocol-version", MODERN_REV),
        ("mcp-method", "tools/call"),
    ];
    h.push(("mcp-name", "progress"));
    let body = json!({"jsonrpc": "2.0", "id": 3, "method": "tools/call", "params": {
        "name": "progress", "arguments": {},
        "_meta": {PV: MODERN_REV, CAPS: {}, "progressToken": "t"}}});
    let reply = endpoint.post(&headers(&h), body.to_string().as_bytes());
    let frames = drain(&reply.exchange.expect("a queued call"));
    let methods: Vec<&str> = frames
        .iter()
        .map(|f| f["method"].as_str().unwrap_or("response"))
        .collect();
    assert_eq!(
        methods,
        [
            "notifications/progress",
            "notifications/progress",
            "notifications/progress",
            "response"
        ]
    );
}

#[test]
fn two_clients_may_use_the_same_request_id_at_once() {
    let (endpoint, _) = endpoint();
    let endpoint = Arc::new(endpoint);
    let handles: Vec<_> = (0..2)
        .map(|n| {
            let endpoint = Arc::clone(&endpoint);
            thread::spawn(move || {
                let reply = modern(
                    &endpoint,
                    1,
                    "tools/call",
                    json!({"name": "echo", "arguments": {"text": format!("client {n}")}}),
                );
                drain(&reply.exchange.unwrap())
            })
        })
        .collect();
    let mut texts: Vec<String> = handles
        .into_iter()
        .map(|h| {
            h.join().unwrap()[0]["result"]["content"][0]["text"]
                .as_str()
                .unwrap()
                .to_owned()
        })
        .collect();
    texts.sort();
    assert_eq!(texts, ["client 0", "client 1"]);
}

#[test]
fn stateless_refusals_carry_the_request_id_and_their_statuses() {
    let (endpoint, _) = endpoint();
    // Mirrored headers that disagree with the body: -32020, 400.
    let body = json!({"jsonrpc": "2.0", "id": 9, "method": "tools/list",
                      "params": {"_meta": {PV: MODERN_REV, CAPS: {}}}});
    let reply = endpoint.post(
        &headers(&[
            ("mcp-protocol-version", MODERN_REV),
            ("mcp-method", "prompts/list"),
        ]),
        body.to_string().as_bytes(),
    );
    assert_eq!(
        (reply.status, body_of(&reply)["error"]["code"].clone()),
        (400, json!(-32020))
    );
    assert_eq!(body_of(&reply)["id"], 9);
    // An unknown method: -32601, 404 (an unknown tool is not an unknown method).
    let reply = modern(&endpoint, 10, "ping", json!({}));
    assert_eq!(
        (reply.status, body_of(&reply)["error"]["code"].clone()),
        (404, json!(-32601))
    );
    // A version the server does not speak, mirrored faithfully: -32022, 400.
    let body = json!({"jsonrpc": "2.0", "id": 11, "method": "server/discover",
                      "params": {"_meta": {PV: "v999.0.0", CAPS: {}}}});
    let reply = endpoint.post(
        &headers(&[
            ("mcp-protocol-version", "v999.0.0"),
            ("mcp-method", "server/discover"),
        ]),
        body.to_string().as_bytes(),
    );
    assert_eq!(reply.status, 400);
    assert_eq!(body_of(&reply)["error"]["code"], -32022);
    assert_eq!(body_of(&reply)["error"]["data"]["requested"], "v999.0.0");
    // No envelope and no session: -32602, 400.
    let body = json!({"jsonrpc": "2.0", "id": 12, "method": "server/discover", "params": {}});
    let reply = endpoint.post(
        &headers(&[
            ("mcp-protocol-version", MODERN_REV),
            ("mcp-method", "server/discover"),
        ]),
        body.to_string().as_bytes(),
    );
    assert_eq!(
        (reply.status, body_of(&reply)["error"]["code"].clone()),
        (400, json!(-32602))
    );
    assert_eq!(body_of(&reply)["id"], 12);
}

fn body_of(reply: &HttpReply) -> Value {
    body(reply)
}

#[test]
fn foreign_hosts_and_origins_are_forbidden() {
    let (endpoint, _) = endpoint();
    let body = br#"{"jsonrpc":"2.0","id":1,"method":"initialize","params":{}}"#;
    let mut h = HttpHeaders::new();
    h.push(b"content-type", b"application/json");
    h.push(b"host", b"evil.example.com");
    assert_eq!(endpoint.post(&h, body).status, 403);
    let reply = endpoint.post(&headers(&[("origin", "http://evil.example.com")]), body);
    assert_eq!(reply.status, 403);
    let reply = endpoint.post(&headers(&[("origin", "http://localhost:6274")]), body);
    assert_eq!(reply.status, 200);
}

fn initialize(endpoint: &HttpEndpoint, rev: &str) -> String {
    let body = json!({"jsonrpc": "2.0", "id": 0, "method": "initialize", "params": {
        "protocolVersion": rev, "capabilities": {}, "clientInfo": {"name": "t", "version": "1"}}});
    let reply = endpoint.post(&headers(&[]), body.to_string().as_bytes());
    assert_eq!(reply.status, 200);
    assert_eq!(body_of(&reply)["result"]["protocolVersion"], rev);
    let (_, id) = reply
        .headers
        .iter()
        .find(|(n, _)| *n == "Mcp-Session-Id")
        .expect("a session id");
    assert!(id.bytes().all(|b| (0x21..=0x7e).contains(&b)));
    id.clone()
}

#[test]
fn initialize_opens_a_session_that_later_requests_name() {
    let (endpoint, _) = endpoint();
    let sid = initialize(&endpoint, "2025-11-25");
    let with = |extra: &[(&str, &str)]| {
        let mut pairs = vec![("mcp-session-id", sid.as_str())];
        pairs.extend_from_slice(extra);
        headers(&pairs)
    };
    let note = br#"{"jsonrpc":"2.0","method":"notifications/initialized"}"#;
    assert_eq!(endpoint.post(&with(&[]), note).status, 202);
    let list = br#"{"jsonrpc":"2.0","id":1,"method":"tools/list"}"#;
    let reply = endpoint.post(&with(&[("mcp-protocol-version", "2025-11-25")]), list);
    assert_eq!(reply.status, 200);
    assert!(body_of(&reply)["result"]["tools"].is_array());
    // A version header that is not the session's: 400.
    let reply = endpoint.post(&with(&[("mcp-protocol-version", "2025-06-18")]), list);
    assert_eq!(reply.status, 400);
    // Without the session: 400 asks for it.
    assert_eq!(endpoint.post(&headers(&[]), list).status, 400);
    assert_eq!(endpoint.session_count(), 1);
    assert_eq!(endpoint.delete(&with(&[])).status, 200);
    assert_eq!(endpoint.post(&with(&[]), list).status, 404);
    assert_eq!(endpoint.delete(&with(&[])).status, 404);
    assert_eq!(endpoint.session_count(), 0);
}

#[test]
fn a_cancel_posted_in_the_session_stops_a_call_in_another_request() {
    let (endpoint, events) = endpoint();
    let sid = initialize(&endpoint, "2025-06-18");
    let h = headers(&[("mcp-session-id", sid.as_str())]);
    let call = br#"{"jsonrpc":"2.0","id":"slow","method":"tools/call","params":{"name":"sleepy","arguments":{"ms":5000}}}"#;
    let exchange = Arc::new(endpoint.post(&h, call).exchange.expect("queued"));
    let runner = {
        let exchange = Arc::clone(&exchange);
        thread::spawn(move || drain(&exchange))
    };
    while !events
        .lock()
        .unwrap()
        .iter()
        .any(|e| e == "sleepy:start:\"slow\"")
    {
        thread::sleep(Duration::from_millis(5));
    }
    let cancel =
        br#"{"jsonrpc":"2.0","method":"notifications/cancelled","params":{"requestId":"slow"}}"#;
    assert_eq!(endpoint.post(&h, cancel).status, 202);
    let frames = runner.join().unwrap();
    assert!(
        frames.is_empty(),
        "a cancelled call is not answered: {frames:?}"
    );
    assert!(
        events
            .lock()
            .unwrap()
            .iter()
            .any(|e| e == "sleepy:cancelled:\"slow\"")
    );
}

#[test]
fn a_client_that_goes_away_cancels_its_call() {
    let (endpoint, events) = endpoint();
    let reply = modern(
        &endpoint,
        5,
        "tools/call",
        json!({"name": "sleepy", "arguments": {"ms": 5000}}),
    );
    let exchange = Arc::new(reply.exchange.expect("queued"));
    let runner = {
        let exchange = Arc::clone(&exchange);
        thread::spawn(move || exchange.run())
    };
    while !events.lock().unwrap().iter().any(|e| e == "sleepy:start:5") {
        thread::sleep(Duration::from_millis(5));
    }
    exchange.abandon();
    runner.join().unwrap();
    assert!(
        events
            .lock()
            .unwrap()
            .iter()
            .any(|e| e == "sleepy:cancelled:5")
    );
    assert_eq!(exchange.next(), Next::Done);
}

#[test]
fn batches_are_a_2025_03_26_session_feature() {
    let (endpoint, _) = endpoint();
    let batch = br#"[{"jsonrpc":"2.0","id":1,"method":"ping"},{"jsonrpc":"2.0","id":2,"method":"tools/list"}]"#;
    assert_eq!(endpoint.post(&headers(&[]), batch).status, 400);
    let sid = initialize(&endpoint, "2025-03-26");
    let reply = endpoint.post(&headers(&[("mcp-session-id", sid.as_str())]), batch);
    assert_eq!(reply.status, 200);
    assert_eq!(body_of(&reply).as_array().map(Vec::len), Some(2));
}

#[test]
fn get_is_not_allowed_and_bad_bodies_are_refused() {
    let (endpoint, _) = endpoint();
    let reply = endpoint.not_allowed();
    assert_eq!(reply.status, 405);
    assert!(
        reply
            .headers
            .iter()
            .any(|(n, v)| *n == "Allow" && v.contains("POST"))
    );
    assert_eq!(endpoint.post(&headers(&[]), b"{not json").status, 400);
    let mut text = HttpHeaders::new();
    text.push(b"content-type", b"text/plain");
    assert_eq!(endpoint.post(&text, b"{}").status, 415);
}

/// A concurrent tool that sleeps 100 ms on a thread of its own and records how many of its
/// calls ran at once.
struct Overlapping {
    running: Arc<std::sync::atomic::AtomicUsize>,
    peak: Arc<std::sync::atomic::AtomicUsize>,
}

impl mcpline_core::ToolHandler for Overlapping {
    fn call(&self, _: Value, _: &mcpline_core::CallContext) -> mcpline_core::ToolOutput {
        unreachable!("a concurrent tool is started, not called")
    }

    fn concurrent(&self) -> bool {
        true
    }

    fn start(&self, _: Value, _: &mcpline_core::CallContext, done: mcpline_core::Done) {
        use std::sync::atomic::Ordering::SeqCst;
        let (running, peak) = (Arc::clone(&self.running), Arc::clone(&self.peak));
        let now = running.fetch_add(1, SeqCst) + 1;
        peak.fetch_max(now, SeqCst);
        thread::spawn(move || {
            thread::sleep(Duration::from_millis(100));
            running.fetch_sub(1, SeqCst);
            done.finish(mcpline_core::ToolOutput::text("overlapped"));
        });
    }
}

#[test]
fn max_concurrency_holds_across_every_request_of_the_endpoint() {
    let events = Events::default();
    let mut server = test_server(&events);
    server.config_mut().max_concurrency = 2;
    let peak = Arc::new(std::sync::atomic::AtomicUsize::new(0));
    let handler = Overlapping {
        running: Arc::default(),
        peak: Arc::clone(&peak),
    };
    let spec = mcpline_core::ToolSpec::new("overlap", json!({"type": "object"}));
    server.add_tool(spec, Arc::new(handler)).unwrap();
    let endpoint = Arc::new(HttpEndpoint::new(server, HttpConfig::default()));
    let clients: Vec<_> = (0..6)
        .map(|n| {
            let endpoint = Arc::clone(&endpoint);
            thread::spawn(move || {
                let reply = modern(&endpoint, n, "tools/call", json!({"name": "overlap"}));
                drain(&reply.exchange.expect("queued"))
            })
        })
        .collect();
    for client in clients {
        let frames = client.join().unwrap();
        assert_eq!(frames[0]["result"]["content"][0]["text"], "overlapped");
    }
    assert_eq!(peak.load(std::sync::atomic::Ordering::SeqCst), 2);
}
