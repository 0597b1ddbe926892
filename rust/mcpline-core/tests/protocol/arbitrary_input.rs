//! Property test over whole input streams through the real framing: valid requests of every
//! revision mixed with notifications, garbage, truncated JSON, invalid UTF-8, deep nesting,
//! huge numbers, wrong field types, duplicate keys, CRLF, blank lines, response-shaped frames,
//! batches and 2026-07-28 `_meta` variants, cut into arbitrary chunks.
//!
//! Whatever the stream, the server ends at end of input, every line it writes is one complete
//! JSON value, every request with a readable id is answered exactly once (at most once when it
//! was cancelled), and nothing is answered that was not asked. What the stream asks for is
//! read back from its bytes by [`crate::invariants`], the checker the fuzz target shares.

use std::time::Duration;

use proptest::prelude::*;
use serde_json::{Value, json};

use crate::invariants::{LINE_CAP, check_answers};
use crate::support::{Harness, MODERN_REV};

const REVISIONS: [&str; 6] = [
    "2024-11-05",
    "2025-03-26",
    "2025-06-18",
    "2025-11-25",
    "2026-07-28",
    "1999-01-01",
];

/// One line of the stream, before ids are given out.
#[derive(Debug, Clone)]
enum Piece {
    Initialize(usize),
    Initialized,
    Ping,
    ToolsList,
    CallAdd(i64, i64),
    CallEcho(String),
    CallFail,
    CallUnknown,
    CallBadArguments(i64),
    UnknownMethod,
    Stateless(usize, usize),
    Cancel,
    UnknownNotification,
    ResponseShaped,
    Garbage(Vec<u8>),
    Truncated(usize),
    InvalidUtf8,
    DeepNesting(usize),
    HugeNumber(bool),
    WrongTypes(usize),
    DuplicateKeys,
    Blank,
    Batch(Vec<u8>),
}

fn piece() -> impl Strategy<Value = Piece> {
    prop_oneof![
        3 => (0..REVISIONS.len()).prop_map(Piece::Initialize),
        1 => Just(Piece::Initialized),
        2 => Just(Piece::Ping),
        2 => Just(Piece::ToolsList),
        3 => (any::<i32>(), any::<i32>()).prop_map(|(a, b)| Piece::CallAdd(a.into(), b.into())),
        2 => "\\PC{0,16}".prop_map(Piece::CallEcho),
        1 => Just(Piece::CallFail),
        1 => Just(Piece::CallUnknown),
        1 => any::<i64>().prop_map(Piece::CallBadArguments),
        1 => Just(Piece::UnknownMethod),
        2 => (0..4_usize, 0..3_usize).prop_map(|(m, v)| Piece::Stateless(m, v)),
        1 => Just(Piece::Cancel),
        1 => Just(Piece::UnknownNotification),
        1 => Just(Piece::ResponseShaped),
        2 => prop::collection::vec(any::<u8>().prop_filter("no newline", |b| *b != b'\n'), 0..40)
            .prop_map(Piece::Garbage),
        2 => (1..60_usize).prop_map(Piece::Truncated),
        1 => Just(Piece::InvalidUtf8),
        1 => prop_oneof![Just(100_000_usize), 1..300_usize].prop_map(Piece::DeepNesting),
        1 => any::<bool>().prop_map(Piece::HugeNumber),
        2 => (0..6_usize).prop_map(Piece::WrongTypes),
        1 => Just(Piece::DuplicateKeys),
        1 => Just(Piece::Blank),
        1 => prop::collection::vec(0..4_u8, 0..4).prop_map(Piece::Batch),
    ]
}

/// Gives out fresh request ids and remembers the newest (what a `Cancel` piece cancels).
#[derive(Default)]
struct Ids {
    newest: u64,
}

impl Ids {
    fn fresh(&mut self) -> u64 {
        self.newest += 1;
        self.newest
    }
}

fn frame(id: u64, method: &str, params: &Value) -> String {
    json!({"jsonrpc": "2.0", "id": id, "method": method, "params": params}).to_string()
}

fn envelope(version: usize) -> Value {
    let version = [MODERN_REV, "2025-11-25", "3000-01-01"][version];
    json!({
        "io.modelcontextprotocol/protocolVersion": version,
        "io.modelcontextprotocol/clientCapabilities": {}
    })
}

/// The bytes of one piece (without its line end).
fn render(piece: &Piece, ids: &mut Ids) -> Vec<u8> {
    let text = match piece {
        Piece::Initialize(v) => {
            let params = json!({
                "protocolVersion": REVISIONS[*v],
                "capabilities": {},
                "clientInfo": {"name": "fuzz", "version": "0"}
            });
            frame(ids.fresh(), "initialize", &params)
        }
        Piece::Initialized => {
            json!({"jsonrpc": "2.0", "method": "notifications/initialized"}).to_string()
        }
        Piece::Ping => frame(ids.fresh(), "ping", &json!({})),
        Piece::ToolsList => frame(ids.fresh(), "tools/list", &json!({})),
        Piece::CallAdd(a, b) => frame(
            ids.fresh(),
            "tools/call",
            &json!({"name": "add", "arguments": {"a": a, "b": b}}),
        ),
        Piece::CallEcho(text) => frame(
            ids.fresh(),
            "tools/call",
            &json!({"name": "echo", "arguments": {"text": text}}),
        ),
        Piece::CallFail => frame(
            ids.fresh(),
            "tools/call",
            &json!({"name": "fail", "arguments": {}}),
        ),
        Piece::CallUnknown => frame(
            ids.fresh(),
            "tools/call",
            &json!({"name": "nope", "arguments": {}}),
        ),
        Piece::CallBadArguments(n) => frame(
            ids.fresh(),
            "tools/call",
            &json!({"name": "add", "arguments": {"a": n.to_string(), "c": [n]}}),
        ),
        Piece::UnknownMethod => frame(ids.fresh(), "no/such/method", &json!({})),
        Piece::Stateless(method, version) => {
            let method = ["tools/list", "server/discover", "tools/call", "ping"][*method];
            let mut params = json!({"_meta": envelope(*version)});
            if method == "tools/call" {
                params["name"] = json!("add");
                params["arguments"] = json!({"a": 1, "b": 2});
            }
            frame(ids.fresh(), method, &params)
        }
        Piece::Cancel => {
            // The newest request: a call still queued, or already answered (then a no-op).
            let params = json!({"requestId": ids.newest, "reason": "fuzz"});
            json!({"jsonrpc": "2.0", "method": "notifications/cancelled", "params": params})
                .to_string()
        }
        Piece::UnknownNotification => {
            json!({"jsonrpc": "2.0", "method": "notifications/whatever"}).to_string()
        }
        Piece::ResponseShaped => json!({"jsonrpc": "2.0", "id": 0, "result": {}}).to_string(),
        Piece::Garbage(bytes) => return bytes.clone(),
        Piece::Truncated(cut) => {
            let whole = frame(
                ids.fresh(),
                "tools/call",
                &json!({"name": "add", "arguments": {"a": 1, "b": 2}}),
            );
            return whole.as_bytes()[..(*cut).min(whole.len() - 1)].to_vec();
        }
        Piece::InvalidUtf8 => {
            let mut bytes = frame(
                ids.fresh(),
                "tools/call",
                &json!({"name": "echo", "arguments": {"text": "XX"}}),
            )
            .into_bytes();
            let at = bytes.iter().position(|b| *b == b'X').unwrap_or(0);
            bytes[at] = 0xff;
            bytes[at + 1] = 0xfe;
            return bytes;
        }
        Piece::DeepNesting(depth) => {
            let mut text = format!(
                "{{\"jsonrpc\":\"2.0\",\"id\":{},\"method\":\"ping\",\"params\":",
                ids.fresh()
            );
            text.push_str(&"[".repeat(*depth));
            text.push_str(&"]".repeat(*depth));
            text.push('}');
            text
        }
        Piece::HugeNumber(in_id) => {
            if *in_id {
                r#"{"jsonrpc":"2.0","id":1e999999,"method":"ping"}"#.to_owned()
            } else {
                let digits = "9".repeat(400);
                format!(
                    r#"{{"jsonrpc":"2.0","id":{},"method":"tools/call","params":{{"name":"add","arguments":{{"a":{digits},"b":1}}}}}}"#,
                    ids.fresh()
                )
            }
        }
        Piece::WrongTypes(which) => {
            let id = ids.fresh();
            match which {
                0 => json!({"jsonrpc": "2.0", "id": id, "method": 5}),
                1 => json!({"jsonrpc": "1.0", "id": id, "method": "ping"}),
                2 => json!({"jsonrpc": "2.0", "id": id, "method": "ping", "params": [1]}),
                3 => json!({"jsonrpc": "2.0", "id": {"n": id}, "method": "ping"}),
                4 => json!({"jsonrpc": "2.0", "id": id, "method": "tools/call", "params": {"name": 7}}),
                _ => json!({"jsonrpc": "2.0", "id": id, "method": "tools/call", "params": {"name": "add", "arguments": "a=1"}}),
            }
            .to_string()
        }
        Piece::DuplicateKeys => {
            let (first, second) = (ids.fresh(), ids.fresh());
            format!(r#"{{"jsonrpc":"2.0","id":{first},"id":{second},"method":"ping"}}"#)
        }
        Piece::Blank => String::new(),
        Piece::Batch(kinds) => {
            let items: Vec<Value> = kinds
                .iter()
                .map(|k| match k {
                    0 => json!({"jsonrpc": "2.0", "id": ids.fresh(), "method": "ping"}),
                    1 => json!({"jsonrpc": "2.0", "method": "notifications/whatever"}),
                    2 => json!({"jsonrpc": "2.0", "id": ids.fresh(), "method": "tools/call", "params": {"name": "add", "arguments": {"a": 1, "b": 1}}}),
                    _ => json!(42),
                })
                .collect();
            Value::Array(items).to_string()
        }
    };
    text.into_bytes()
}

fn run(pieces: &[Piece], crlf: &[bool], chunk: usize) {
    let mut ids = Ids::default();
    let mut stream = Vec::new();
    for (i, piece) in pieces.iter().enumerate() {
        stream.extend(render(piece, &mut ids));
        if crlf.get(i).copied().unwrap_or(false) {
            stream.push(b'\r');
        }
        stream.push(b'\n');
    }
    let mut h = Harness::start_stream(LINE_CAP);
    // Small chunks, but never more than a few thousand of them.
    for part in stream.chunks(chunk.max(stream.len() / 2000).max(1)) {
        h.send_bytes(part.to_vec());
    }
    h.close();
    h.wait_end(Duration::from_secs(30));
    let frames = h.collect_until_silence(Duration::from_millis(50));
    if let Err(violation) = check_answers(&stream, LINE_CAP, &frames) {
        panic!("{violation}; pieces: {pieces:?}");
    }
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 48, ..ProptestConfig::default() })]

    #[test]
    fn any_input_stream_is_answered_exactly_once_in_valid_json_lines(
        pieces in prop::collection::vec(piece(), 0..40),
        crlf in prop::collection::vec(any::<bool>(), 40),
        chunk in prop_oneof![Just(usize::MAX), 1..64_usize],
    ) {
        run(&pieces, &crlf, chunk);
    }
}
