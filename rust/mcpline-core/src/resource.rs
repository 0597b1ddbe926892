//! Resources: fixed ones by URI and templates (RFC 6570 level 1, `logs://{day}/{name}`), their
//! descriptors per protocol revision, and how what a read's handler made becomes a
//! `ReadResourceResult`.
//!
//! A read runs like a tool call (queued, on the worker, under the capture cell): its handler is a
//! [`crate::ToolHandler`] whose output carries `{"contents": [...]}` as structured data, each item
//! `{"text": ...}` or `{"blob": ...}` with an optional `mimeType` (the URI read is filled in).

use serde_json::{Map, Value};

use crate::jsonrpc::{ErrorCode, RequestError};
use crate::prompt;
use crate::protocol::{Feature, Revision};
use crate::tool::ToolOutput;

/// A resource's or a template's declaration, as its MCP descriptor: `uri` (or `uriTemplate`),
/// `name`, and optionally `title`, `description`, `mimeType`, `size` (resources only) and
/// `annotations`. Fields a revision does not define are left out for it.
#[derive(Debug, Clone)]
pub struct ResourceSpec {
    descriptor: Map<String, Value>,
    template: Option<UriTemplate>,
}

impl ResourceSpec {
    /// A fixed resource from its descriptor (`uri` and `name` strings are required).
    ///
    /// # Errors
    /// A descriptor without them, in words.
    pub fn fixed(descriptor: Map<String, Value>) -> Result<Self, String> {
        required_string(&descriptor, "uri")?;
        required_string(&descriptor, "name")?;
        Ok(Self {
            descriptor,
            template: None,
        })
    }

    /// A resource template from its descriptor (`uriTemplate` and `name`); the template's
    /// variables are in [`ResourceSpec::variables`].
    ///
    /// # Errors
    /// A descriptor without them, or a template that is not RFC 6570 level 1.
    pub fn template(descriptor: Map<String, Value>) -> Result<Self, String> {
        let template = UriTemplate::parse(required_string(&descriptor, "uriTemplate")?)?;
        required_string(&descriptor, "name")?;
        Ok(Self {
            descriptor,
            template: Some(template),
        })
    }

    /// The URI (or the URI template).
    #[must_use]
    pub fn uri(&self) -> &str {
        let key = if self.template.is_some() {
            "uriTemplate"
        } else {
            "uri"
        };
        self.descriptor
            .get(key)
            .and_then(Value::as_str)
            .unwrap_or_default()
    }

    /// The name.
    #[must_use]
    pub fn name(&self) -> &str {
        self.descriptor
            .get("name")
            .and_then(Value::as_str)
            .unwrap_or_default()
    }

    /// The template's variables in order (none for a fixed resource).
    #[must_use]
    pub fn variables(&self) -> Vec<&str> {
        self.template
            .as_ref()
            .map_or_else(Vec::new, UriTemplate::variables)
    }

    /// The descriptor for `rev` (`title` from 2025-06-18, `icons` from 2025-11-25,
    /// `annotations.lastModified` from 2025-06-18).
    #[must_use]
    pub fn descriptor(&self, rev: Revision) -> Value {
        let mut out = self.descriptor.clone();
        if !rev.supports(Feature::Titles) {
            out.shift_remove("title");
        }
        if !rev.supports(Feature::ContentMeta) {
            out.shift_remove("_meta");
            if let Some(Value::Object(annotations)) = out.get_mut("annotations") {
                annotations.shift_remove("lastModified");
            }
        }
        if !rev.supports(Feature::Icons) {
            out.shift_remove("icons");
        }
        Value::Object(out)
    }

    /// The template's variables read from `uri`, or `None` when it does not match.
    pub(crate) fn matches(&self, uri: &str) -> Option<Map<String, Value>> {
        self.template.as_ref()?.matches(uri)
    }

    /// Whether this is a template.
    pub(crate) fn is_template(&self) -> bool {
        self.template.is_some()
    }

    /// The handler's arguments for reading `uri`: the template's variables, each read as the
    /// type `input_schema` declares (`"42"` for an integer is 42); `-32602` when one cannot be.
    pub(crate) fn arguments(&self, uri: &str, input_schema: &Value) -> Result<Value, RequestError> {
        let mut arguments = Map::new();
        for (name, text) in self.matches(uri).unwrap_or_default() {
            let text = text.as_str().unwrap_or_default();
            let declared = prompt::declared_type(input_schema, &name);
            let value = prompt::read_string_as(text, declared).ok_or_else(|| {
                RequestError::invalid_params(format!(
                    "Invalid params: {name:?} in {uri} must be {} (got {text:?})",
                    declared.map_or("a string", prompt::article)
                ))
                .with_data(serde_json::json!({"uri": uri}))
            })?;
            arguments.insert(name, value);
        }
        Ok(Value::Object(arguments))
    }

    /// The `ReadResourceResult` for what the handler made reading `uri`: each content item gets
    /// the URI when it has none; an error output is a JSON-RPC error (`-32603`) with its text.
    pub(crate) fn result(&self, uri: &str, output: ToolOutput) -> Result<Value, RequestError> {
        let failure = |why: String| {
            RequestError::new(ErrorCode::INTERNAL_ERROR, why)
                .with_data(serde_json::json!({"uri": uri}))
        };
        if output.is_error {
            return Err(failure(format!(
                "reading {uri} failed: {}",
                prompt::error_text(output)
            )));
        }
        let Some(Value::Object(mut made)) = output.structured else {
            return Err(failure(format!("reading {uri} gave no contents")));
        };
        let Some(Value::Array(contents)) = made.remove("contents") else {
            return Err(failure(format!("reading {uri} gave no contents")));
        };
        if contents.is_empty() {
            // An empty list would read as "no such resource" to a 2026-07-28 client.
            return Err(failure(format!("reading {uri} gave no contents")));
        }
        let mut shaped = Vec::with_capacity(contents.len());
        for item in contents {
            let Value::Object(mut item) = item else {
                return Err(failure(format!(
                    "reading {uri} gave contents that are not objects"
                )));
            };
            if !(item.get("text").is_some_and(Value::is_string)
                ^ item.get("blob").is_some_and(Value::is_string))
            {
                return Err(failure(format!(
                    "reading {uri} gave contents with neither or both of \"text\" and \"blob\""
                )));
            }
            item.entry("uri").or_insert_with(|| Value::from(uri));
            shaped.push(Value::Object(item));
        }
        let mut result = Map::new();
        result.insert("contents".into(), Value::Array(shaped));
        Ok(Value::Object(result))
    }
}

fn required_string<'a>(descriptor: &'a Map<String, Value>, key: &str) -> Result<&'a str, String> {
    match descriptor.get(key).and_then(Value::as_str) {
        Some(s) if !s.is_empty() => Ok(s),
        _ => Err(format!("a resource needs {key:?} (a non-empty string)")),
    }
}

/// The error for a URI no resource or template serves: `-32002` up to 2025-11-25, `-32602`
/// from 2026-07-28 (which forbids `-32002`), with the URI in `data`.
pub(crate) fn not_found(uri: &str, rev: Revision) -> RequestError {
    let code = if rev.is_stateless() {
        ErrorCode::INVALID_PARAMS
    } else {
        ErrorCode::RESOURCE_NOT_FOUND
    };
    RequestError::new(code, format!("Resource not found: {uri}"))
        .with_data(serde_json::json!({"uri": uri}))
}

/// One piece of an RFC 6570 level-1 template.
#[derive(Debug, Clone, PartialEq, Eq)]
enum Piece {
    Literal(String),
    Variable(String),
}

/// A URI template of literals and `{name}` variables.
#[derive(Debug, Clone, PartialEq, Eq)]
struct UriTemplate {
    pieces: Vec<Piece>,
}

impl UriTemplate {
    fn parse(text: &str) -> Result<Self, String> {
        let mut pieces = Vec::new();
        let mut rest = text;
        while let Some(open) = rest.find('{') {
            if open > 0 {
                pieces.push(Piece::Literal(rest[..open].to_owned()));
            }
            let Some(close) = rest[open..].find('}') else {
                return Err(format!(
                    "URI template {text:?} has a \"{{\" without its \"}}\""
                ));
            };
            let name = &rest[open + 1..open + close];
            let valid =
                !name.is_empty() && name.bytes().all(|b| b.is_ascii_alphanumeric() || b == b'_');
            if !valid {
                return Err(format!(
                    "URI template {text:?}: {{{name}}} is not a simple variable (use {{name}} with \
                     letters, digits and _)"
                ));
            }
            if matches!(pieces.last(), Some(Piece::Variable(_))) {
                return Err(format!(
                    "URI template {text:?}: two variables must be separated by a literal"
                ));
            }
            pieces.push(Piece::Variable(name.to_owned()));
            rest = &rest[open + close + 1..];
        }
        if rest.contains('}') {
            return Err(format!(
                "URI template {text:?} has a \"}}\" without its \"{{\""
            ));
        }
        if !rest.is_empty() {
            pieces.push(Piece::Literal(rest.to_owned()));
        }
        let template = Self { pieces };
        let names = template.variables();
        if names.is_empty() {
            return Err(format!("URI template {text:?} has no {{variable}}"));
        }
        if (1..names.len()).any(|i| names[..i].contains(&names[i])) {
            return Err(format!("URI template {text:?} repeats a variable"));
        }
        Ok(template)
    }

    fn variables(&self) -> Vec<&str> {
        self.pieces
            .iter()
            .filter_map(|p| match p {
                Piece::Variable(name) => Some(name.as_str()),
                Piece::Literal(_) => None,
            })
            .collect()
    }

    /// Each variable matches a non-empty run without `/` up to the next literal (a level-1
    /// expansion percent-encodes `/`), percent-decoded.
    fn matches(&self, uri: &str) -> Option<Map<String, Value>> {
        let mut values = Map::new();
        let mut rest = uri;
        for (i, piece) in self.pieces.iter().enumerate() {
            match piece {
                Piece::Literal(literal) => rest = rest.strip_prefix(literal.as_str())?,
                Piece::Variable(name) => {
                    let end = match self.pieces.get(i + 1) {
                        Some(Piece::Literal(next)) => rest.find(next.as_str())?,
                        _ => rest.len(),
                    };
                    let raw = &rest[..end];
                    if raw.is_empty() || raw.contains('/') {
                        return None;
                    }
                    values.insert(name.clone(), Value::from(percent_decode(raw)?));
                    rest = &rest[end..];
                }
            }
        }
        rest.is_empty().then_some(values)
    }
}

/// `%XX` escapes decoded (the result must be UTF-8).
fn percent_decode(text: &str) -> Option<String> {
    let bytes = text.as_bytes();
    let mut out = Vec::with_capacity(bytes.len());
    let mut i = 0;
    while i < bytes.len() {
        if bytes[i] == b'%' {
            let hex = std::str::from_utf8(bytes.get(i + 1..i + 3)?).ok()?;
            out.push(u8::from_str_radix(hex, 16).ok()?);
            i += 3;
        } else {
            out.push(bytes[i]);
            i += 1;
        }
    }
    String::from_utf8(out).ok()
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::*;

    fn template(text: &str) -> ResourceSpec {
        let descriptor = json!({"uriTemplate": text, "name": "t"});
        ResourceSpec::template(descriptor.as_object().cloned().unwrap()).unwrap()
    }

    #[test]
    fn a_template_matches_uris_and_reads_its_variables_percent_decoded() {
        let logs = template("logs://{day}/{name}.txt");
        assert_eq!(logs.variables(), vec!["day", "name"]);
        assert_eq!(
            Value::Object(logs.matches("logs://2026-12-04/a%20b.txt").unwrap()),
            json!({"day": "2026-12-04", "name": "a b"})
        );
        for miss in [
            "logs://2026-12-04/a.md",
            "logs:///a.txt",
            "logs://x/y/z.txt",
            "files://x/y.txt",
            "logs://x/%zz.txt",
        ] {
            assert!(logs.matches(miss).is_none(), "{miss}");
        }
        assert_eq!(
            Value::Object(template("user://{id}").matches("user://42").unwrap()),
            json!({"id": "42"})
        );
    }

    #[test]
    fn templates_that_are_not_level_1_are_refused_in_words() {
        for (text, says) in [
            ("logs://{day", "without its"),
            ("logs://{+path}", "not a simple variable"),
            ("logs://{a}{b}", "separated by a literal"),
            ("logs://fixed", "no {variable}"),
            ("x://{a}/{a}", "repeats"),
        ] {
            let descriptor = json!({"uriTemplate": text, "name": "t"});
            let error =
                ResourceSpec::template(descriptor.as_object().cloned().unwrap()).unwrap_err();
            assert!(error.contains(says), "{text}: {error}");
        }
    }

    #[test]
    fn descriptors_leave_out_what_a_revision_lacks() {
        let descriptor = json!({
            "uri": "config://app", "name": "config", "title": "Config", "size": 12,
            "annotations": {"priority": 0.5, "lastModified": "2026-12-04T00:00:00Z"},
            "icons": [{"src": "data:image/png;base64,AA=="}]
        });
        let spec = ResourceSpec::fixed(descriptor.as_object().cloned().unwrap()).unwrap();
        let old = spec.descriptor(Revision::V2025_03_26);
        assert!(old.get("title").is_none() && old.get("icons").is_none());
        assert_eq!(old["annotations"], json!({"priority": 0.5}));
        assert_eq!(old["size"], 12);
        let new = spec.descriptor(Revision::V2025_11_25);
        assert_eq!(new["title"], "Config");
        assert!(new.get("icons").is_some());
    }

    #[test]
    fn contents_get_the_uri_read_and_must_be_text_or_blob() {
        let spec = template("user://{id}");
        let made = ToolOutput::structured(
            json!({"contents": [{"text": "Ada", "mimeType": "text/plain"}]}),
        );
        assert_eq!(
            spec.result("user://1", made).unwrap(),
            json!({"contents": [{"text": "Ada", "mimeType": "text/plain", "uri": "user://1"}]})
        );
        for bad in [
            json!({"contents": []}),
            json!({"contents": [{"text": "a", "blob": "b"}]}),
        ] {
            let error = spec
                .result("user://1", ToolOutput::structured(bad))
                .unwrap_err();
            assert_eq!(error.code, ErrorCode::INTERNAL_ERROR);
        }
    }

    #[test]
    fn an_unknown_uri_is_32002_before_2026_07_28_and_32602_after() {
        assert_eq!(
            not_found("x://y", Revision::V2025_11_25).code,
            ErrorCode::RESOURCE_NOT_FOUND
        );
        assert_eq!(
            not_found("x://y", Revision::V2026_07_28).code,
            ErrorCode::INVALID_PARAMS
        );
    }
}
