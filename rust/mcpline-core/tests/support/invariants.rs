//! What must hold for any byte stream a client sends, whatever its bytes: checked from the
//! input alone and the lines the server wrote, with no knowledge of how the input was made.
//! The property test over generated streams, the fuzz target (`fuzz/fuzz_targets/stdio.rs`,
//! which includes this file by path) and the replay of the fuzz corpus share it.
//!
//! - Every line written is one complete JSON value: one write, ending in its only newline.
//! - Every response is a JSON-RPC 2.0 response (an object, or a non-empty batch array of them),
//!   and the server sends no request or notification of its own.
//! - A request with a readable id (a string or an integer) is answered exactly once under that
//!   id; at most once when it was cancelled, when it came in a batch (a session that does not
//!   batch refuses the batch as a whole), or when its line is ambiguous (duplicate keys).
//! - No id is answered that was not asked, and no notification or client response is answered:
//!   a response without an id is allowed only for a line or batch member that is not valid
//!   JSON-RPC (each such one allows one).
//!
//! JSON is read here by a scanner of its own, iterative so that nesting of any depth is
//! readable: well-formed JSON that `serde_json` cannot hold (deeper than its recursion limit, a
//! number beyond a float, a lone surrogate escape) still holds a readable id.

use std::collections::HashMap;

use serde_json::Value;

/// The inbound line cap the fuzz target and the stream tests serve with.
pub(crate) const LINE_CAP: usize = 1 << 20;

/// Nesting up to this depth is what any JSON parser holds; deeper lines are "unusual" and may
/// also get one id-less parse error.
const USUAL_DEPTH: usize = 100;

/// A request id as the server must echo it (the JSON type is part of it: `1` is not `"1"`).
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub(crate) enum Id {
    Int(i128),
    Str(String),
}

fn id_of(value: &Value) -> Option<Id> {
    match value {
        Value::String(s) => Some(Id::Str(s.clone())),
        Value::Number(n) => n
            .as_i64()
            .map(i128::from)
            .or_else(|| n.as_u64().map(i128::from))
            .map(Id::Int),
        _ => None,
    }
}

/// How many answers an id may get: at least `must`, at most `must + may`.
#[derive(Debug, Default, Clone, Copy)]
struct Slots {
    must: usize,
    may: usize,
}

/// What the input asks for.
#[derive(Debug, Default)]
pub(crate) struct Expected {
    slots: HashMap<Id, Slots>,
    /// Responses without an id the input allows.
    anonymous: usize,
    /// Lines over the cap: each may be answered once, with whatever id its head shows.
    oversized: usize,
}

impl Expected {
    fn must(&mut self, id: Id) {
        self.slots.entry(id).or_default().must += 1;
    }

    fn may(&mut self, id: Id) {
        self.slots.entry(id).or_default().may += 1;
    }

    /// `notifications/cancelled`: what was asked under `id` so far may go unanswered.
    fn cancel(&mut self, id: Id) {
        if let Some(slots) = self.slots.get_mut(&id) {
            slots.may += slots.must;
            slots.must = 0;
        }
    }
}

/// Checks a whole exchange: `writes` are the server's write calls, in order.
pub(crate) fn check_stream(
    input: &[u8],
    max_line: usize,
    writes: &[Vec<u8>],
) -> Result<(), String> {
    let frames = output_frames(writes)?;
    check_answers(input, max_line, &frames)
}

/// Parses the server's write calls, each of which must be one whole JSON line.
pub(crate) fn output_frames(writes: &[Vec<u8>]) -> Result<Vec<Value>, String> {
    writes
        .iter()
        .map(|write| {
            let shown = || String::from_utf8_lossy(write).into_owned();
            let Some(line) = write.strip_suffix(b"\n") else {
                return Err(format!("a write that is not a whole line: {:?}", shown()));
            };
            if line.contains(&b'\n') || line.contains(&b'\r') {
                return Err(format!("a write with a line break inside: {:?}", shown()));
            }
            serde_json::from_slice(line)
                .map_err(|e| format!("a line that is not JSON ({e}): {:?}", shown()))
        })
        .collect()
}

/// Checks the responses (`frames`, parsed) against what `input` asks for.
pub(crate) fn check_answers(input: &[u8], max_line: usize, frames: &[Value]) -> Result<(), String> {
    let expected = expected(input, max_line);
    let mut answered: HashMap<Id, usize> = HashMap::new();
    let mut anonymous = 0;
    for frame in frames {
        let responses = match frame {
            Value::Array(items) if items.is_empty() => {
                return Err("an empty batch response".to_owned());
            }
            Value::Array(items) => items.iter().collect(),
            other => vec![other],
        };
        for response in responses {
            match response_id(response)? {
                Some(id) => *answered.entry(id).or_default() += 1,
                None => anonymous += 1,
            }
        }
    }
    let mut oversized = expected.oversized;
    for (id, slots) in &expected.slots {
        let n = answered.get(id).copied().unwrap_or(0);
        if n < slots.must {
            return Err(format!(
                "request {id:?} was asked {} time(s) but answered {n} time(s)",
                slots.must
            ));
        }
    }
    for (id, n) in &answered {
        let slots = expected.slots.get(id).copied().unwrap_or_default();
        let extra = n.saturating_sub(slots.must + slots.may);
        if extra > oversized {
            return Err(if slots.must + slots.may == 0 {
                format!("id {id:?} was answered {n} time(s) but never asked")
            } else {
                format!("id {id:?} was answered {n} time(s), more than it was asked")
            });
        }
        oversized -= extra;
    }
    if anonymous > expected.anonymous + oversized {
        return Err(format!(
            "{anonymous} response(s) without an id, but only {} line(s) or batch member(s) \
             were not valid JSON-RPC (a notification or a client's response was answered)",
            expected.anonymous + oversized
        ));
    }
    Ok(())
}

/// The id of one response, after checking its shape.
fn response_id(response: &Value) -> Result<Option<Id>, String> {
    let Some(object) = response.as_object() else {
        return Err(format!("a response that is not an object: {response}"));
    };
    if object.contains_key("method") {
        return Err(format!(
            "a request or notification nobody asked for: {response}"
        ));
    }
    if object.get("jsonrpc").and_then(Value::as_str) != Some("2.0") {
        return Err(format!(
            "a response without \"jsonrpc\": \"2.0\": {response}"
        ));
    }
    match (object.get("result"), object.get("error")) {
        (Some(_), None) => {}
        (None, Some(error)) => {
            if !error["code"].is_i64() || !error["message"].is_string() {
                return Err(format!(
                    "an error without an integer code and a message: {response}"
                ));
            }
        }
        _ => {
            return Err(format!(
                "a response needs one of result and error: {response}"
            ));
        }
    }
    match object.get("id") {
        None | Some(Value::Null) => Ok(None),
        Some(id) => id_of(id).map(Some).ok_or_else(|| {
            format!("a response whose id is not a string or an integer: {response}")
        }),
    }
}

/// What `input` asks for, line by line (the framing of `LineReader`: split at `\n`, a leading
/// byte-order mark and surrounding ASCII blanks stripped, blank lines skipped).
pub(crate) fn expected(input: &[u8], max_line: usize) -> Expected {
    let mut expected = Expected::default();
    for raw in input.split(|b| *b == b'\n') {
        if raw.len() > max_line {
            expected.oversized += 1;
            continue;
        }
        let line = raw
            .strip_prefix(b"\xEF\xBB\xBF")
            .unwrap_or(raw)
            .trim_ascii();
        if line.is_empty() {
            continue;
        }
        let Some(scanned) = std::str::from_utf8(line).ok().and_then(|_| scan(line)) else {
            // Not JSON: one parse error, without an id.
            expected.anonymous += 1;
            continue;
        };
        if !scanned.usual {
            // The server's parser may refuse it as a whole, with one id-less parse error.
            expected.anonymous += 1;
        }
        match scanned.top {
            Top::Object(members) => message(&members, false, scanned.usual, &mut expected),
            Top::Array(items) => {
                // Refused as a whole (no batching in this session, or empty), or answered
                // member by member: one id-less error at most, or one per odd member.
                expected.anonymous += 1;
                for item in items {
                    match scan(item).map(|s| s.top) {
                        Some(Top::Object(members)) => {
                            message(&members, true, scanned.usual, &mut expected);
                        }
                        _ => expected.anonymous += 1,
                    }
                }
            }
            Top::Scalar => expected.anonymous += 1,
        }
    }
    expected
}

/// Keys whose repetition makes a message ambiguous.
const ENVELOPE: [&str; 6] = ["jsonrpc", "id", "method", "params", "result", "error"];

/// One message (a line, or a batch member).
fn message(members: &[(String, &[u8])], in_batch: bool, usual: bool, expected: &mut Expected) {
    let all = |key: &str| -> Vec<Option<Value>> {
        members
            .iter()
            .filter(|(k, _)| k == key)
            .map(|(_, v)| serde_json::from_slice(v).ok())
            .collect()
    };
    let ids = all("id");
    let readable: Vec<Id> = ids.iter().flatten().filter_map(id_of).collect();
    let method = all("method");
    let cancels = method
        .iter()
        .flatten()
        .any(|m| m == "notifications/cancelled");
    if cancels {
        // Cancelled ids, however the params are spelled (every `requestId` counts).
        for params in members.iter().filter(|(k, _)| k == "params") {
            if let Some(Top::Object(inner)) = scan(params.1).map(|s| s.top) {
                for (_, value) in inner.iter().filter(|(k, _)| k == "requestId") {
                    if let Some(id) = serde_json::from_slice(value).ok().as_ref().and_then(id_of) {
                        expected.cancel(id);
                    }
                }
            }
        }
    }
    let ambiguous = ENVELOPE
        .iter()
        .any(|key| members.iter().filter(|(k, _)| k == key).count() > 1);
    if ambiguous {
        readable.into_iter().for_each(|id| expected.may(id));
        expected.anonymous += 1;
        return;
    }
    let is_request = matches!(method.first(), Some(Some(Value::String(_))))
        && matches!(all("jsonrpc").first(), Some(Some(v)) if v == "2.0");
    let id_absent = matches!(ids.first(), None | Some(Some(Value::Null)));
    let is_response = method.is_empty() && (!all("result").is_empty() || !all("error").is_empty());
    match readable.into_iter().next() {
        Some(id) if is_request && !in_batch => expected.must(id),
        // A client's response is never answered, unless its line is unusual: then the server
        // may not have parsed it, and answers the id it found with a parse error.
        Some(id) if is_response => {
            if !usual {
                expected.may(id);
            }
        }
        Some(id) => {
            expected.may(id);
            if !is_request {
                expected.anonymous += 1;
            }
        }
        // A notification, or a client's response: nothing is sent back.
        None if id_absent && (is_request || is_response) => {}
        None => expected.anonymous += 1,
    }
}

/// The outermost value of a well-formed JSON text.
enum Top<'a> {
    Object(Vec<(String, &'a [u8])>),
    Array(Vec<&'a [u8]>),
    Scalar,
}

struct Scanned<'a> {
    top: Top<'a>,
    /// No nesting deeper than [`USUAL_DEPTH`], no number beyond a float, no lone surrogate.
    usual: bool,
}

/// Scans one JSON text (RFC 8259; `text` is valid UTF-8) without recursion; `None` unless it
/// is well-formed. Keeps the members of the outermost value as raw slices.
fn scan(text: &[u8]) -> Option<Scanned<'_>> {
    enum State {
        Value,
        Key,
        After,
    }
    let mut s = Scanner {
        text,
        at: 0,
        usual: true,
    };
    let mut stack: Vec<u8> = Vec::new();
    let mut top = Top::Scalar;
    let mut key = String::new();
    let mut member_start = 0;
    let mut state = State::Value;
    loop {
        s.blank();
        state = match state {
            State::Value => {
                if stack.len() == 1 {
                    member_start = s.at;
                }
                match *text.get(s.at)? {
                    open @ (b'{' | b'[') => {
                        s.at += 1;
                        if stack.is_empty() {
                            top = if open == b'{' {
                                Top::Object(Vec::new())
                            } else {
                                Top::Array(Vec::new())
                            };
                        }
                        stack.push(open);
                        s.usual &= stack.len() <= USUAL_DEPTH;
                        s.blank();
                        let close = if open == b'{' { b'}' } else { b']' };
                        if text.get(s.at) == Some(&close) {
                            s.at += 1;
                            stack.pop();
                            State::After
                        } else if open == b'{' {
                            State::Key
                        } else {
                            State::Value
                        }
                    }
                    b'"' => {
                        s.string()?;
                        State::After
                    }
                    b'-' | b'0'..=b'9' => {
                        s.number()?;
                        State::After
                    }
                    _ => {
                        let rest = &text[s.at..];
                        let word = [&b"true"[..], b"false", b"null"]
                            .into_iter()
                            .find(|w| rest.starts_with(w))?;
                        s.at += word.len();
                        State::After
                    }
                }
            }
            State::Key => {
                let start = s.at;
                s.string()?;
                if stack.len() == 1 {
                    key = serde_json::from_slice(&text[start..s.at]).unwrap_or_else(|_| {
                        String::from_utf8_lossy(&text[start + 1..s.at - 1]).into_owned()
                    });
                }
                s.blank();
                (text.get(s.at) == Some(&b':')).then_some(())?;
                s.at += 1;
                State::Value
            }
            State::After => {
                // A value just ended; at depth one it is a member of the outermost value.
                if stack.len() == 1 {
                    let member = &text[member_start..s.at];
                    match &mut top {
                        Top::Object(members) => members.push((std::mem::take(&mut key), member)),
                        Top::Array(items) => items.push(member),
                        Top::Scalar => {}
                    }
                }
                let Some(&open) = stack.last() else {
                    return (s.at == text.len()).then_some(Scanned {
                        top,
                        usual: s.usual,
                    });
                };
                match (open, *text.get(s.at)?) {
                    (b'{', b',') => {
                        s.at += 1;
                        State::Key
                    }
                    (b'[', b',') => {
                        s.at += 1;
                        State::Value
                    }
                    (b'{', b'}') | (b'[', b']') => {
                        s.at += 1;
                        stack.pop();
                        State::After
                    }
                    _ => return None,
                }
            }
        };
    }
}

struct Scanner<'a> {
    text: &'a [u8],
    at: usize,
    usual: bool,
}

impl Scanner<'_> {
    fn blank(&mut self) {
        while matches!(self.text.get(self.at), Some(b' ' | b'\t' | b'\n' | b'\r')) {
            self.at += 1;
        }
    }

    fn digits(&mut self) -> usize {
        let start = self.at;
        while self.text.get(self.at).is_some_and(u8::is_ascii_digit) {
            self.at += 1;
        }
        self.at - start
    }

    fn number(&mut self) -> Option<()> {
        let start = self.at;
        if self.text.get(self.at) == Some(&b'-') {
            self.at += 1;
        }
        match self.text.get(self.at) {
            Some(b'0') => self.at += 1,
            Some(b'1'..=b'9') => {
                self.digits();
            }
            _ => return None,
        }
        if self.text.get(self.at) == Some(&b'.') {
            self.at += 1;
            (self.digits() > 0).then_some(())?;
        }
        if matches!(self.text.get(self.at), Some(b'e' | b'E')) {
            self.at += 1;
            if matches!(self.text.get(self.at), Some(b'+' | b'-')) {
                self.at += 1;
            }
            (self.digits() > 0).then_some(())?;
        }
        let literal = std::str::from_utf8(&self.text[start..self.at]).ok()?;
        self.usual &= literal.parse::<f64>().is_ok_and(f64::is_finite);
        Some(())
    }

    /// A string from its opening quote; notes lone surrogate escapes.
    fn string(&mut self) -> Option<()> {
        (self.text.get(self.at) == Some(&b'"')).then_some(())?;
        self.at += 1;
        let mut high_surrogate = false;
        loop {
            let byte = *self.text.get(self.at)?;
            self.at += 1;
            let unit = match byte {
                b'"' => {
                    self.usual &= !high_surrogate;
                    return Some(());
                }
                0..=0x1f => return None,
                b'\\' => match *self.text.get(self.at)? {
                    b'"' | b'\\' | b'/' | b'b' | b'f' | b'n' | b'r' | b't' => {
                        self.at += 1;
                        None
                    }
                    b'u' => {
                        let hex = self.text.get(self.at + 1..self.at + 5)?;
                        let hex = std::str::from_utf8(hex).ok()?;
                        (hex.bytes().all(|b| b.is_ascii_hexdigit())).then_some(())?;
                        self.at += 5;
                        u16::from_str_radix(hex, 16).ok()
                    }
                    _ => return None,
                },
                _ => None,
            };
            match unit {
                Some(0xD800..=0xDBFF) => {
                    self.usual &= !high_surrogate;
                    high_surrogate = true;
                }
                Some(0xDC00..=0xDFFF) if high_surrogate => high_surrogate = false,
                Some(0xDC00..=0xDFFF) => self.usual = false,
                _ => {
                    self.usual &= !high_surrogate;
                    high_surrogate = false;
                }
            }
        }
    }
}
