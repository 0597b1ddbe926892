//! The HTTP headers a request carries, and the 2026-07-28 rule that the ones mirroring the
//! body (`MCP-Protocol-Version`, `Mcp-Method`, `Mcp-Name`, `Mcp-Param-*`) match it, or the
//! request is refused with `HeaderMismatch` (`-32020`).

use base64::Engine as _;
use serde_json::{Map, Value};

use crate::jsonrpc::{ErrorCode, RequestError};
use crate::protocol::META_PROTOCOL_VERSION;

/// `-32020`: the HTTP headers do not match the body, or a required one is missing.
pub(crate) const HEADER_MISMATCH: ErrorCode = ErrorCode(-32020);

/// A request's headers, names lower-cased (header names are case-insensitive, values not).
#[derive(Debug, Default, Clone)]
pub struct HttpHeaders {
    pairs: Vec<(String, String)>,
}

impl HttpHeaders {
    /// No headers.
    #[must_use]
    pub fn new() -> Self {
        Self::default()
    }

    /// Adds one header as it arrived (a value that is not UTF-8 is kept lossily; it then
    /// matches nothing).
    pub fn push(&mut self, name: &[u8], value: &[u8]) {
        let name = String::from_utf8_lossy(name).to_ascii_lowercase();
        let value = String::from_utf8_lossy(value).into_owned();
        self.pairs.push((name, value));
    }

    /// The first value of `name` (lower case).
    #[must_use]
    pub fn get(&self, name: &str) -> Option<&str> {
        self.pairs
            .iter()
            .find(|(n, _)| n == name)
            .map(|(_, v)| v.as_str())
    }

    /// Whether `Accept` lists `media` (or a wildcard that covers it); no `Accept` accepts all.
    #[must_use]
    pub fn accepts(&self, media: &str) -> bool {
        let Some(accept) = self.get("accept") else {
            return true;
        };
        let (kind, _) = media.split_once('/').unwrap_or((media, ""));
        accept.split(',').any(|item| {
            let range = item.split(';').next().unwrap_or("").trim();
            range.eq_ignore_ascii_case(media)
                || range == "*/*"
                || range
                    .strip_suffix("/*")
                    .is_some_and(|k| k.eq_ignore_ascii_case(kind))
        })
    }

    fn params(&self) -> impl Iterator<Item = (&str, &str)> {
        self.pairs
            .iter()
            .filter_map(|(n, v)| n.strip_prefix("mcp-param-").map(|name| (name, v.as_str())))
    }
}

/// A header value as sent: plain visible ASCII, or `=?base64?…?=` around the UTF-8 bytes.
fn decode(value: &str) -> Result<String, String> {
    if let Some(inner) = value
        .strip_prefix("=?base64?")
        .and_then(|v| v.strip_suffix("?="))
    {
        let bytes = base64::engine::general_purpose::STANDARD
            .decode(inner)
            .map_err(|e| format!("its Base64 value does not decode ({e})"))?;
        return String::from_utf8(bytes).map_err(|_| "its Base64 value is not UTF-8".to_owned());
    }
    if value
        .bytes()
        .all(|b| b == b'\t' || (0x20..0x7f).contains(&b))
    {
        Ok(value.trim_matches([' ', '\t']).to_owned())
    } else {
        Err("it holds characters a header value may not".to_owned())
    }
}

fn mismatch(message: String) -> RequestError {
    RequestError::new(HEADER_MISMATCH, format!("Header mismatch: {message}"))
}

/// Checks a 2026-07-28 request's mirrored headers against its body. `schema` is the called
/// tool's input schema (for its `x-mcp-header` parameters), when the request calls one.
pub(crate) fn check_mirrored(
    headers: &HttpHeaders,
    method: &str,
    params: &Map<String, Value>,
    schema: Option<&Value>,
) -> Result<(), RequestError> {
    let body_version = params
        .get("_meta")
        .and_then(|m| m.get(META_PROTOCOL_VERSION))
        .and_then(Value::as_str)
        .unwrap_or_default();
    same(
        headers,
        "mcp-protocol-version",
        "MCP-Protocol-Version",
        body_version,
        false,
    )?;
    same(headers, "mcp-method", "Mcp-Method", method, false)?;
    let name_field = match method {
        "tools/call" | "prompts/get" => Some("name"),
        "resources/read" => Some("uri"),
        _ => None,
    };
    if let Some(field) = name_field {
        let body = params
            .get(field)
            .and_then(Value::as_str)
            .unwrap_or_default();
        same(headers, "mcp-name", "Mcp-Name", body, true)?;
    }
    if let Some(schema) = schema {
        let arguments = params.get("arguments");
        let mut declared = Vec::new();
        mirrored_params(schema, &mut Vec::new(), &mut declared);
        for (name, path) in &declared {
            check_param(headers, name, path, arguments)?;
        }
    }
    Ok(())
}

fn same(
    headers: &HttpHeaders,
    key: &str,
    shown: &str,
    body: &str,
    encoded: bool,
) -> Result<(), RequestError> {
    let Some(raw) = headers.get(key) else {
        return Err(mismatch(format!("the {shown} header is required")));
    };
    let value = if encoded {
        decode(raw).map_err(|why| mismatch(format!("the {shown} header is malformed: {why}")))?
    } else {
        raw.trim().to_owned()
    };
    if value != body {
        return Err(mismatch(format!(
            "{shown} header value {value:?} does not match body value {body:?}"
        )));
    }
    Ok(())
}

/// The `x-mcp-header` names of `schema` with the `properties` path to each (only paths made
/// of `properties` keys count, as the specification says).
fn mirrored_params(schema: &Value, path: &mut Vec<String>, out: &mut Vec<(String, Vec<String>)>) {
    let Some(props) = schema.get("properties").and_then(Value::as_object) else {
        return;
    };
    for (key, sub) in props {
        path.push(key.clone());
        if let Some(name) = sub.get("x-mcp-header").and_then(Value::as_str) {
            out.push((name.to_ascii_lowercase(), path.clone()));
        }
        mirrored_params(sub, path, out);
        path.pop();
    }
}

fn check_param(
    headers: &HttpHeaders,
    name: &str,
    path: &[String],
    arguments: Option<&Value>,
) -> Result<(), RequestError> {
    let mut value = arguments;
    for key in path {
        value = value.and_then(|v| v.get(key));
    }
    let header = headers.params().find(|(n, _)| *n == name).map(|(_, v)| v);
    let shown = format!("Mcp-Param-{name}");
    match (value.filter(|v| !v.is_null()), header) {
        (None, None) => Ok(()),
        (None, Some(_)) => Err(mismatch(format!(
            "the {shown} header is set but the argument it mirrors is absent"
        ))),
        (Some(_), None) => Err(mismatch(format!(
            "the {shown} header is required (the tool mirrors that argument)"
        ))),
        (Some(body), Some(raw)) => {
            let sent = decode(raw)
                .map_err(|why| mismatch(format!("the {shown} header is malformed: {why}")))?;
            let matches = match body {
                Value::String(s) => *s == sent,
                Value::Bool(b) => sent == if *b { "true" } else { "false" },
                Value::Number(n) => match (n.as_f64(), sent.parse::<f64>()) {
                    (Some(a), Ok(b)) => a == b,
                    _ => false,
                },
                _ => false,
            };
            if matches {
                Ok(())
            } else {
                Err(mismatch(format!(
                    "{shown} header value {sent:?} does not match body value {body}"
                )))
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::*;

    fn headers(pairs: &[(&str, &str)]) -> HttpHeaders {
        let mut h = HttpHeaders::new();
        for (n, v) in pairs {
            h.push(n.as_bytes(), v.as_bytes());
        }
        h
    }

    fn params(v: Value) -> Map<String, Value> {
        v.as_object().cloned().unwrap()
    }

    const META: &str = "io.modelcontextprotocol/protocolVersion";

    #[test]
    fn matching_headers_pass_and_names_are_case_insensitive() {
        let h = headers(&[
            ("MCP-Protocol-Version", "2026-07-28"),
            ("Mcp-Method", "tools/call"),
            ("mcp-name", "add"),
        ]);
        let p = params(json!({"name": "add", "_meta": {META: "2026-07-28"}}));
        assert!(check_mirrored(&h, "tools/call", &p, None).is_ok());
    }

    #[test]
    fn a_missing_or_different_header_is_a_header_mismatch() {
        let p = params(json!({"name": "add", "_meta": {META: "2026-07-28"}}));
        let h = headers(&[
            ("mcp-protocol-version", "2026-07-28"),
            ("mcp-method", "tools/call"),
        ]);
        let err = check_mirrored(&h, "tools/call", &p, None).unwrap_err();
        assert_eq!(err.code, HEADER_MISMATCH);
        assert!(
            err.message.contains("Mcp-Name header is required"),
            "{}",
            err.message
        );
        let h = headers(&[
            ("mcp-protocol-version", "2025-11-25"),
            ("mcp-method", "tools/call"),
            ("mcp-name", "add"),
        ]);
        let err = check_mirrored(&h, "tools/call", &p, None).unwrap_err();
        assert!(
            err.message.contains("MCP-Protocol-Version"),
            "{}",
            err.message
        );
    }

    #[test]
    fn a_base64_name_is_decoded_before_it_is_compared() {
        let p = params(json!({"uri": "file:///世界", "_meta": {META: "2026-07-28"}}));
        let encoded = format!(
            "=?base64?{}?=",
            base64::engine::general_purpose::STANDARD.encode("file:///世界")
        );
        let h = headers(&[
            ("mcp-protocol-version", "2026-07-28"),
            ("mcp-method", "resources/read"),
            ("mcp-name", &encoded),
        ]);
        assert!(check_mirrored(&h, "resources/read", &p, None).is_ok());
    }

    #[test]
    fn mirrored_tool_parameters_must_match_their_arguments() {
        let schema = json!({"type": "object", "properties": {
            "region": {"type": "string", "x-mcp-header": "Region"},
            "opts": {"type": "object", "properties": {"n": {"type": "integer", "x-mcp-header": "N"}}},
        }});
        let base = [
            ("mcp-protocol-version", "2026-07-28"),
            ("mcp-method", "tools/call"),
            ("mcp-name", "q"),
        ];
        let p = params(
            json!({"name": "q", "arguments": {"region": "us", "opts": {"n": 42}},
                              "_meta": {META: "2026-07-28"}}),
        );
        let mut ok = base.to_vec();
        ok.extend([("Mcp-Param-Region", "us"), ("Mcp-Param-N", "42.0")]);
        assert!(check_mirrored(&headers(&ok), "tools/call", &p, Some(&schema)).is_ok());
        let mut missing = base.to_vec();
        missing.push(("Mcp-Param-Region", "us"));
        let err = check_mirrored(&headers(&missing), "tools/call", &p, Some(&schema)).unwrap_err();
        assert!(err.message.contains("Mcp-Param-n"), "{}", err.message);
        let mut wrong = base.to_vec();
        wrong.extend([("Mcp-Param-Region", "eu"), ("Mcp-Param-N", "42")]);
        assert!(check_mirrored(&headers(&wrong), "tools/call", &p, Some(&schema)).is_err());
        let absent = params(json!({"name": "q", "arguments": {}, "_meta": {META: "2026-07-28"}}));
        assert!(check_mirrored(&headers(&base), "tools/call", &absent, Some(&schema)).is_ok());
    }

    #[test]
    fn accept_lists_are_read_with_wildcards_and_parameters() {
        let h = headers(&[("accept", "application/json;q=0.9, text/event-stream")]);
        assert!(h.accepts("application/json") && h.accepts("text/event-stream"));
        let h = headers(&[("accept", "application/json")]);
        assert!(!h.accepts("text/event-stream"));
        let h = headers(&[("accept", "text/*")]);
        assert!(h.accepts("text/event-stream") && !h.accepts("application/json"));
        assert!(HttpHeaders::new().accepts("application/json"));
    }
}
