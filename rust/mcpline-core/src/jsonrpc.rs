//! JSON-RPC 2.0 envelopes: ids, error codes and the frames the server writes.

use serde::Deserialize as _;
use serde_json::{Map, Value};

/// A JSON-RPC error code.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub struct ErrorCode(pub i64);

impl ErrorCode {
    /// The line is not JSON, not UTF-8, or not a request/notification/response.
    pub const PARSE_ERROR: Self = Self(-32700);
    /// The JSON is not a valid request object.
    pub const INVALID_REQUEST: Self = Self(-32600);
    /// No such method (or tool).
    pub const METHOD_NOT_FOUND: Self = Self(-32601);
    /// The params do not fit the method.
    pub const INVALID_PARAMS: Self = Self(-32602);
    /// The server failed unexpectedly.
    pub const INTERNAL_ERROR: Self = Self(-32603);
    /// Resource not found (MCP, up to 2025-11-25; 2026-07-28 uses `INVALID_PARAMS`).
    pub const RESOURCE_NOT_FOUND: Self = Self(-32002);
    /// MCP 2026-07-28: the requested protocol revision is not supported.
    pub const UNSUPPORTED_PROTOCOL_VERSION: Self = Self(-32022);
}

/// A request id that can be echoed (string or integer), kept with its JSON type.
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub enum RequestId {
    /// A string id.
    Str(String),
    /// An integer id (signed or unsigned 64-bit).
    Int(IntId),
}

/// An integer id: JSON integers up to 64 bits, either sign.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum IntId {
    /// Negative or small.
    Signed(i64),
    /// Above `i64::MAX`.
    Unsigned(u64),
}

/// What the `id` member of an inbound frame holds.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) enum IdField {
    /// No `id`, or `"id": null`: a notification.
    Absent,
    /// A usable id.
    Valid(RequestId),
    /// Something that is not a string or an integer (a float, a bool, an object...).
    Invalid,
}

impl IdField {
    /// Reads the `id` member of a frame object.
    #[must_use]
    pub(crate) fn of(frame: &Map<String, Value>) -> Self {
        Self::of_member(frame.get("id"))
    }

    /// Reads a frame's `id` member (`None`: the frame has none).
    #[must_use]
    pub(crate) fn of_member(id: Option<&Value>) -> Self {
        match id {
            None | Some(Value::Null) => Self::Absent,
            Some(v) => RequestId::from_value(v).map_or(Self::Invalid, Self::Valid),
        }
    }
}

/// The members of a frame object that say what it is.
///
/// [`Members::parse`] reads them straight from a line whose object has no other members, each
/// once (what clients send), without building the frame's map (hashing its keys was a tenth of
/// a quick call's work); [`Members::from_map`] takes them out of an object parsed whole (a batch
/// member, a frame with other members).
#[derive(Debug, Default, serde::Deserialize)]
#[serde(deny_unknown_fields)]
pub(crate) struct Members {
    #[serde(default, deserialize_with = "present")]
    pub(crate) jsonrpc: Option<Value>,
    #[serde(default, deserialize_with = "present")]
    pub(crate) id: Option<Value>,
    #[serde(default, deserialize_with = "present")]
    pub(crate) method: Option<Value>,
    #[serde(default, deserialize_with = "present")]
    pub(crate) params: Option<Value>,
    /// The frame has a `result` or an `error` member: a response.
    #[serde(skip)]
    pub(crate) response: bool,
}

impl Members {
    /// The members of `line` if it is one JSON object with no members but these, each at most
    /// once; `None` for anything else (read it as a [`Value`] then: it is the same frame).
    pub(crate) fn parse(line: &[u8]) -> Option<Self> {
        // serde would also read a struct from an array (a batch).
        if line.trim_ascii_start().first() != Some(&b'{') {
            return None;
        }
        serde_json::from_slice(line).ok()
    }

    /// The members of a parsed frame object.
    pub(crate) fn from_map(mut frame: Map<String, Value>) -> Self {
        Self {
            jsonrpc: frame.remove("jsonrpc"),
            id: frame.remove("id"),
            method: frame.remove("method"),
            params: frame.remove("params"),
            response: frame.contains_key("result") || frame.contains_key("error"),
        }
    }
}

/// A member that is there, `null` included (serde reads a `null` into an `Option` as `None`).
fn present<'de, D: serde::Deserializer<'de>>(member: D) -> Result<Option<Value>, D::Error> {
    Value::deserialize(member).map(Some)
}

impl RequestId {
    /// Reads an id value; `None` unless it is a string or an integer.
    #[must_use]
    pub fn from_value(value: &Value) -> Option<Self> {
        match value {
            Value::String(s) => Some(Self::Str(s.clone())),
            Value::Number(n) => {
                if let Some(i) = n.as_i64() {
                    Some(Self::Int(IntId::Signed(i)))
                } else {
                    n.as_u64().map(|u| Self::Int(IntId::Unsigned(u)))
                }
            }
            _ => None,
        }
    }

    /// The id as a JSON value, with its original type.
    #[must_use]
    pub fn to_value(&self) -> Value {
        match self {
            Self::Str(s) => Value::String(s.clone()),
            Self::Int(IntId::Signed(i)) => Value::from(*i),
            Self::Int(IntId::Unsigned(u)) => Value::from(*u),
        }
    }
}

impl std::fmt::Display for RequestId {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            Self::Str(s) => write!(f, "{s:?}"),
            Self::Int(IntId::Signed(i)) => write!(f, "{i}"),
            Self::Int(IntId::Unsigned(u)) => write!(f, "{u}"),
        }
    }
}

/// How a request is answered: a result, or a whole frame (an error).
#[derive(Debug, Clone)]
pub(crate) enum Answer {
    /// The `result` of a successful response; its envelope is written around it when it goes
    /// out alone, without building the envelope object (see [`encode_result`]).
    Result(Value),
    /// A whole response frame.
    Frame(Value),
}

impl Answer {
    /// The response frame for request `id`.
    pub(crate) fn into_frame(self, id: &RequestId) -> Value {
        match self {
            Self::Result(result) => result_frame(id, result),
            Self::Frame(frame) => frame,
        }
    }

    /// The response line for request `id` (no newline).
    pub(crate) fn encode(&self, id: &RequestId) -> Vec<u8> {
        match self {
            Self::Result(result) => encode_result(id, result),
            Self::Frame(frame) => encode(frame),
        }
    }
}

/// `encode(&result_frame(id, result))`, byte for byte, written straight from its parts.
fn encode_result(id: &RequestId, result: &Value) -> Vec<u8> {
    let mut out = Vec::with_capacity(128);
    out.extend_from_slice(br#"{"jsonrpc":"2.0","id":"#);
    // Writing into a Vec cannot fail.
    let _ = match id {
        RequestId::Str(s) => serde_json::to_writer(&mut out, s),
        RequestId::Int(IntId::Signed(i)) => serde_json::to_writer(&mut out, i),
        RequestId::Int(IntId::Unsigned(u)) => serde_json::to_writer(&mut out, u),
    };
    out.extend_from_slice(br#","result":"#);
    let _ = serde_json::to_writer(&mut out, result);
    out.push(b'}');
    out
}

/// A successful response frame.
#[must_use]
pub(crate) fn result_frame(id: &RequestId, result: Value) -> Value {
    object([
        ("jsonrpc", Value::from("2.0")),
        ("id", id.to_value()),
        ("result", result),
    ])
}

/// A JSON object from its members, moving the values in. (`json!` copies every interpolated
/// value through `to_value`: a whole tool result, or a large text, once more.)
pub(crate) fn object<const N: usize>(members: [(&str, Value); N]) -> Value {
    Value::Object(
        members
            .into_iter()
            .map(|(key, value)| (key.to_owned(), value))
            .collect(),
    )
}

/// An error response frame; `id` is omitted (never `null`) when it could not be read.
#[must_use]
pub(crate) fn error_frame(
    id: Option<&RequestId>,
    code: ErrorCode,
    message: &str,
    data: Option<Value>,
) -> Value {
    let mut error = Map::new();
    error.insert("code".into(), Value::from(code.0));
    error.insert("message".into(), Value::from(message));
    if let Some(data) = data {
        error.insert("data".into(), data);
    }
    let mut frame = Map::new();
    frame.insert("jsonrpc".into(), Value::from("2.0"));
    if let Some(id) = id {
        frame.insert("id".into(), id.to_value());
    }
    frame.insert("error".into(), Value::Object(error));
    Value::Object(frame)
}

/// A notification frame.
#[must_use]
pub(crate) fn notification_frame(method: &str, params: Value) -> Value {
    object([
        ("jsonrpc", Value::from("2.0")),
        ("method", Value::from(method)),
        ("params", params),
    ])
}

/// Serialises a frame compactly (no embedded newline is possible: JSON escapes them).
#[must_use]
pub(crate) fn encode(frame: &Value) -> Vec<u8> {
    let mut out = Vec::with_capacity(128);
    // Writing a Value into a Vec cannot fail.
    serde_json::to_writer(&mut out, frame).unwrap_or_default();
    out
}

/// Best-effort recovery of a top-level `"id"` from the head of a frame too long to parse.
///
/// Scans at nesting depth one for a key `"id"` followed by a string or integer; gives up on
/// anything unusual. Used so that an oversized request still gets an answer with its id.
#[must_use]
pub(crate) fn sniff_id(head: &[u8]) -> Option<RequestId> {
    let mut depth = 0usize;
    let mut i = 0;
    let n = head.len();
    let mut expect_key = false;
    while i < n {
        match head[i] {
            b'{' | b'[' => {
                depth += 1;
                expect_key = head[i] == b'{' && depth == 1;
                i += 1;
            }
            b'}' | b']' => {
                depth = depth.checked_sub(1)?;
                i += 1;
            }
            b',' => {
                expect_key = depth == 1;
                i += 1;
            }
            b'"' => {
                let end = string_end(head, i)?;
                let is_id_key = expect_key && depth == 1 && &head[i..=end] == b"\"id\"";
                i = end + 1;
                if expect_key && depth == 1 {
                    expect_key = false;
                    if is_id_key {
                        return read_id_value(head, i);
                    }
                }
            }
            _ => i += 1,
        }
    }
    None
}

fn string_end(buf: &[u8], start: usize) -> Option<usize> {
    let mut j = start + 1;
    while j < buf.len() {
        match buf[j] {
            b'\\' => j += 2,
            b'"' => return Some(j),
            _ => j += 1,
        }
    }
    None
}

fn read_id_value(buf: &[u8], mut i: usize) -> Option<RequestId> {
    while i < buf.len() && buf[i].is_ascii_whitespace() {
        i += 1;
    }
    if buf.get(i) != Some(&b':') {
        return None;
    }
    i += 1;
    while i < buf.len() && buf[i].is_ascii_whitespace() {
        i += 1;
    }
    let start = i;
    let end = if buf.get(i) == Some(&b'"') {
        string_end(buf, i)? + 1
    } else {
        let mut j = i;
        while j < buf.len() && (buf[j] == b'-' || buf[j].is_ascii_digit()) {
            j += 1;
        }
        // The number must be complete: followed by a delimiter inside the head.
        if !matches!(buf.get(j), Some(b',' | b'}' | b' ' | b'\t' | b'\r')) {
            return None;
        }
        j
    };
    let value: Value = serde_json::from_slice(&buf[start..end]).ok()?;
    RequestId::from_value(&value)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_frame_of_only_the_four_members_is_read_without_its_map() {
        let m = Members::parse(
            br#" {"jsonrpc":"2.0","id":7,"method":"tools/call","params":{"name":"add"}}"#,
        )
        .expect("the common frame");
        assert_eq!(m.jsonrpc, Some(Value::from("2.0")));
        assert_eq!(m.id, Some(Value::from(7)));
        assert_eq!(m.method, Some(Value::from("tools/call")));
        assert_eq!(m.params, Some(serde_json::json!({"name": "add"})));
        assert!(!m.response);
    }

    #[test]
    fn a_null_member_is_there_and_a_missing_one_is_not() {
        let m = Members::parse(br#"{"jsonrpc":"2.0","id":null,"method":null}"#).expect("parsed");
        assert_eq!(m.id, Some(Value::Null));
        assert_eq!(m.method, Some(Value::Null));
        assert_eq!(m.params, None);
        assert_eq!(IdField::of_member(m.id.as_ref()), IdField::Absent);
    }

    #[test]
    fn anything_but_an_object_of_the_four_members_each_once_is_read_whole_instead() {
        for line in [
            &br#"{"jsonrpc":"2.0","id":1,"result":{}}"#[..],
            br#"{"jsonrpc":"2.0","id":1,"id":2,"method":"ping"}"#,
            br#"[{"jsonrpc":"2.0","id":1,"method":"ping"}]"#,
            br#"["2.0",1,"ping",{}]"#,
            br#"{"jsonrpc":"2.0","id":1,"method":"ping"} x"#,
            br#"{"jsonrpc":"2.0","id":1,"method":"ping","response":true}"#,
        ] {
            assert!(
                Members::parse(line).is_none(),
                "{}",
                String::from_utf8_lossy(line)
            );
        }
        let mut map = Map::new();
        map.insert("result".into(), Value::Null);
        map.insert("id".into(), Value::from(1));
        let m = Members::from_map(map);
        assert!(m.response);
        assert_eq!(m.id, Some(Value::from(1)));
    }

    #[test]
    fn sniff_finds_top_level_id_only() {
        assert_eq!(
            sniff_id(br#"{"jsonrpc":"2.0","id":42,"method":"tools/call","params":{"#),
            Some(RequestId::Int(IntId::Signed(42)))
        );
        assert_eq!(
            sniff_id(br#"{"params":{"id":1},"id":"a\"b","#),
            Some(RequestId::Str("a\"b".into()))
        );
        assert_eq!(sniff_id(br#"{"params":{"id":1,"x":"#), None);
        assert_eq!(sniff_id(br#"{"id":12"#), None);
        assert_eq!(sniff_id(br#"{"id":1.5,"#), None);
    }

    #[test]
    fn a_result_written_from_its_parts_is_the_bytes_of_its_frame() {
        let result = serde_json::json!({
            "content": [{"type": "text", "text": "é \"quoted\" \n ✓ \u{1}"}],
            "structuredContent": {"z": 1, "a": [1.5, null, true], "m": {}},
        });
        let ids = [
            RequestId::Int(IntId::Signed(-7)),
            RequestId::Int(IntId::Signed(0)),
            RequestId::Int(IntId::Unsigned(u64::MAX)),
            RequestId::Str(String::new()),
            RequestId::Str("a\"b\\c\u{7f}é".into()),
        ];
        for id in &ids {
            let answer = Answer::Result(result.clone());
            assert_eq!(
                String::from_utf8(answer.encode(id)).unwrap(),
                String::from_utf8(encode(&result_frame(id, result.clone()))).unwrap(),
                "{id}"
            );
        }
    }
}

/// A request that is answered with a JSON-RPC error instead of a result.
#[derive(Debug, Clone, PartialEq)]
pub(crate) struct RequestError {
    pub(crate) code: ErrorCode,
    pub(crate) message: String,
    pub(crate) data: Option<Value>,
}

impl RequestError {
    pub(crate) fn new(code: ErrorCode, message: impl Into<String>) -> Self {
        Self {
            code,
            message: message.into(),
            data: None,
        }
    }

    /// `-32602`: the params do not fit the method.
    pub(crate) fn invalid_params(message: impl Into<String>) -> Self {
        Self::new(ErrorCode::INVALID_PARAMS, message)
    }

    /// `-32600`: the request is not acceptable as sent.
    pub(crate) fn invalid_request(message: impl Into<String>) -> Self {
        Self::new(ErrorCode::INVALID_REQUEST, message)
    }

    /// `-32601` for a method this server does not have.
    pub(crate) fn method_not_found(method: &str) -> Self {
        Self::new(
            ErrorCode::METHOD_NOT_FOUND,
            format!("Method not found: {method:?}"),
        )
    }

    /// Attaches the error's `data` member.
    pub(crate) fn with_data(mut self, data: Value) -> Self {
        self.data = Some(data);
        self
    }

    /// The error frame answering `id` (no `id` member when it could not be read).
    pub(crate) fn into_frame(self, id: Option<&RequestId>) -> Value {
        error_frame(id, self.code, &self.message, self.data)
    }
}
