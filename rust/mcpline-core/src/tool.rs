//! Tools: what a tool declares ([`ToolSpec`]), what runs it ([`ToolHandler`]) and what it
//! returns ([`ToolOutput`]), shaped per protocol revision.

use std::time::Duration;

use base64::Engine as _;
use serde_json::{Map, Value, json};

use crate::context::CallContext;
use crate::jsonrpc::object;
use crate::protocol::{Feature, Revision};

/// What happens to the output a tool run prints (fds 1 and 2, children included).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum OutputMode {
    /// Captured; copied to the real stderr (labelled) and its tail attached to `isError` results.
    #[default]
    Error,
    /// Captured; copied to the real stderr and its tail attached to every result.
    Result,
    /// Not captured: writes go live to the real stderr (stdout stays protected).
    Off,
}

impl OutputMode {
    /// Parses `"error"`, `"result"` or `"off"`.
    #[must_use]
    pub fn parse(s: &str) -> Option<Self> {
        match s {
            "error" => Some(Self::Error),
            "result" => Some(Self::Result),
            "off" => Some(Self::Off),
            _ => None,
        }
    }
}

/// Behaviour hints shown to clients (MCP tool annotations, from 2025-03-26).
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct ToolHints {
    /// The tool does not modify its environment.
    pub read_only: Option<bool>,
    /// The tool may perform destructive updates.
    pub destructive: Option<bool>,
    /// Calling it twice with the same arguments has no additional effect.
    pub idempotent: Option<bool>,
    /// The tool talks to an open world of external entities.
    pub open_world: Option<bool>,
}

/// A tool's declaration.
#[derive(Debug, Clone)]
pub struct ToolSpec {
    /// Unique name: 1-64 characters of `A-Z a-z 0-9 _ - .`.
    pub name: String,
    /// Human-readable title (from 2025-06-18).
    pub title: Option<String>,
    /// What the tool does, for the model.
    pub description: Option<String>,
    /// JSON Schema (2020-12) of the arguments object.
    pub input_schema: Value,
    /// JSON Schema of `structuredContent` (an object schema), when the tool returns data. With
    /// `strict`, every result is checked against it and one that does not match becomes an
    /// error result.
    pub output_schema: Option<Value>,
    /// The declared result type as its author wrote it (`int | None`), named in the error
    /// about a result that does not match `output_schema`.
    pub output_type: Option<String>,
    /// Behaviour hints.
    pub hints: ToolHints,
    /// Reject unknown argument keys and check results against `output_schema` (true), or drop
    /// unknown keys and send results unchecked (false).
    pub strict: bool,
    /// What to do with what the tool prints; `None` uses the server default.
    pub output: Option<OutputMode>,
    /// Cancel the call after this long.
    pub timeout: Option<Duration>,
    /// Icons (an array of MCP `Icon` objects; sent from 2025-11-25).
    pub icons: Option<Value>,
}

impl ToolSpec {
    /// A spec with the given name and input schema and every option at its default.
    #[must_use]
    pub fn new(name: impl Into<String>, input_schema: Value) -> Self {
        Self {
            name: name.into(),
            title: None,
            description: None,
            input_schema,
            output_schema: None,
            output_type: None,
            hints: ToolHints::default(),
            strict: true,
            output: None,
            timeout: None,
            icons: None,
        }
    }

    /// Sets the description.
    #[must_use]
    pub fn description(mut self, text: impl Into<String>) -> Self {
        self.description = Some(text.into());
        self
    }

    /// The `Tool` object of `tools/list` for `rev` (fields a revision does not know are left out).
    #[must_use]
    pub fn descriptor(&self, rev: Revision) -> Value {
        let mut tool = Map::new();
        tool.insert("name".into(), Value::from(self.name.as_str()));
        if rev.supports(Feature::Titles) {
            if let Some(title) = &self.title {
                tool.insert("title".into(), Value::from(title.as_str()));
            }
        }
        if let Some(description) = &self.description {
            tool.insert("description".into(), Value::from(description.as_str()));
        }
        tool.insert("inputSchema".into(), self.input_schema.clone());
        if rev.supports(Feature::Icons) {
            if let Some(icons) = &self.icons {
                tool.insert("icons".into(), icons.clone());
            }
        }
        if rev.supports(Feature::StructuredOutput) {
            if let Some(schema) = &self.output_schema {
                tool.insert("outputSchema".into(), schema.clone());
            }
        }
        if rev.supports(Feature::ToolAnnotations) {
            let mut hints = Map::new();
            let h = &self.hints;
            if !rev.supports(Feature::Titles) {
                if let Some(title) = &self.title {
                    hints.insert("title".into(), Value::from(title.as_str()));
                }
            }
            for (key, value) in [
                ("readOnlyHint", h.read_only),
                ("destructiveHint", h.destructive),
                ("idempotentHint", h.idempotent),
                ("openWorldHint", h.open_world),
            ] {
                if let Some(v) = value {
                    hints.insert(key.into(), Value::Bool(v));
                }
            }
            if !hints.is_empty() {
                tool.insert("annotations".into(), Value::Object(hints));
            }
        }
        Value::Object(tool)
    }
}

/// Checks the tool naming rule: 1-64 characters of `A-Z a-z 0-9 _ - .`.
#[must_use]
pub fn is_valid_tool_name(name: &str) -> bool {
    (1..=64).contains(&name.len())
        && name
            .bytes()
            .all(|b| b.is_ascii_alphanumeric() || matches!(b, b'_' | b'-' | b'.'))
}

/// One content block of a tool result.
#[derive(Debug, Clone, PartialEq)]
pub enum Content {
    /// Text.
    Text(String),
    /// An image, base64-encoded.
    Image {
        /// Base64 data.
        data: String,
        /// e.g. `image/png`.
        mime_type: String,
    },
    /// Audio, base64-encoded (from 2025-03-26; older revisions get a text note).
    Audio {
        /// Base64 data.
        data: String,
        /// e.g. `audio/wav`.
        mime_type: String,
    },
    /// A content block given as raw MCP JSON (passed through, downgraded where a revision lacks
    /// its type).
    Raw(Value),
}

impl Content {
    /// An image block from raw bytes.
    #[must_use]
    pub fn image(bytes: &[u8], mime_type: impl Into<String>) -> Self {
        Self::Image {
            data: base64::engine::general_purpose::STANDARD.encode(bytes),
            mime_type: mime_type.into(),
        }
    }

    /// An audio block from raw bytes.
    #[must_use]
    pub fn audio(bytes: &[u8], mime_type: impl Into<String>) -> Self {
        Self::Audio {
            data: base64::engine::general_purpose::STANDARD.encode(bytes),
            mime_type: mime_type.into(),
        }
    }

    /// An embedded binary resource (`{"type": "resource", "resource": {"uri", "mimeType", "blob"}}`).
    #[must_use]
    pub fn blob(bytes: &[u8], uri: &str, mime_type: &str) -> Self {
        let blob = base64::engine::general_purpose::STANDARD.encode(bytes);
        Self::Raw(object([
            ("type", "resource".into()),
            (
                "resource",
                object([
                    ("uri", uri.into()),
                    ("mimeType", mime_type.into()),
                    ("blob", blob.into()),
                ]),
            ),
        ]))
    }

    /// The content block for `rev` (consumed: a large text or blob is moved, not copied).
    pub(crate) fn into_json(self, rev: Revision) -> Value {
        match self {
            Self::Text(text) => object([("type", "text".into()), ("text", text.into())]),
            Self::Image { data, mime_type } => object([
                ("type", "image".into()),
                ("data", data.into()),
                ("mimeType", mime_type.into()),
            ]),
            Self::Audio { data, mime_type } => {
                if rev.supports(Feature::Audio) {
                    object([
                        ("type", "audio".into()),
                        ("data", data.into()),
                        ("mimeType", mime_type.into()),
                    ])
                } else {
                    downgrade_note("audio", &mime_type, rev)
                }
            }
            Self::Raw(value) => raw_for(value, rev),
        }
    }
}

fn downgrade_note(kind: &str, detail: &str, rev: Revision) -> Value {
    json!({
        "type": "text",
        "text": format!("[{kind} content ({detail}) cannot be sent in protocol revision {rev}]")
    })
}

fn raw_for(mut value: Value, rev: Revision) -> Value {
    let kind = value.get("type").and_then(Value::as_str).unwrap_or("");
    match kind {
        "audio" if !rev.supports(Feature::Audio) => {
            let mime = value
                .get("mimeType")
                .and_then(Value::as_str)
                .unwrap_or("audio");
            downgrade_note("audio", mime, rev)
        }
        "resource_link" if !rev.supports(Feature::ResourceLinks) => {
            let uri = value.get("uri").and_then(Value::as_str).unwrap_or("");
            let name = value.get("name").and_then(Value::as_str).unwrap_or(uri);
            json!({"type": "text", "text": format!("{name}: {uri}")})
        }
        _ if !rev.supports(Feature::ContentMeta) => {
            // `_meta` and `annotations.lastModified` are unknown before 2025-06-18.
            if let Some(obj) = value.as_object_mut() {
                obj.remove("_meta");
                if let Some(Value::Object(ann)) = obj.get_mut("annotations") {
                    ann.remove("lastModified");
                }
                if !rev.supports(Feature::ContentAnnotations) {
                    obj.remove("annotations");
                }
            }
            value
        }
        _ => value,
    }
}

/// What a tool run produced.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct ToolOutput {
    /// Content blocks (may be empty).
    pub content: Vec<Content>,
    /// Structured result (an object), sent as `structuredContent` from 2025-06-18.
    pub structured: Option<Value>,
    /// The run failed inside the tool.
    pub is_error: bool,
}

impl ToolOutput {
    /// A successful text result.
    #[must_use]
    pub fn text(text: impl Into<String>) -> Self {
        Self {
            content: vec![Content::Text(text.into())],
            structured: None,
            is_error: false,
        }
    }

    /// A tool error (`isError: true`) with one text block.
    #[must_use]
    pub fn error(text: impl Into<String>) -> Self {
        Self {
            content: vec![Content::Text(text.into())],
            structured: None,
            is_error: true,
        }
    }

    /// Structured data plus its JSON text mirror.
    #[must_use]
    pub fn structured(value: Value) -> Self {
        let text = value.to_string();
        Self {
            content: vec![Content::Text(text)],
            structured: Some(value),
            is_error: false,
        }
    }

    /// The `CallToolResult` object for `rev` (consumed: nothing is copied).
    #[must_use]
    pub fn into_result(self, rev: Revision) -> Value {
        let mut result = Map::new();
        result.insert(
            "content".into(),
            Value::Array(self.content.into_iter().map(|c| c.into_json(rev)).collect()),
        );
        if rev.supports(Feature::StructuredOutput) {
            if let Some(s) = self.structured {
                result.insert("structuredContent".into(), s);
            }
        }
        if self.is_error {
            result.insert("isError".into(), Value::Bool(true));
        }
        Value::Object(result)
    }
}

/// Runs a tool. Implemented by Rust closures (see [`FnTool`]) and by the Python binding.
pub trait ToolHandler: Send + Sync {
    /// Runs the tool with validated `arguments` (always a JSON object).
    fn call(&self, arguments: Value, ctx: &CallContext) -> ToolOutput;

    /// Flushes language-level output buffers; called before a capture starts and before it ends.
    fn flush_output(&self) {}

    /// Runs `bracketed` (a [`ToolHandler::call`] with its capture's start and end and the
    /// flushes around them) inside the tool's language runtime, entered once for all of them:
    /// the Python binding takes the interpreter lock once per call instead of three times.
    /// The default just runs it.
    fn enter(&self, bracketed: &mut dyn FnMut()) {
        bracketed();
    }

    /// Whether this tool's calls may overlap other calls (an `async` tool): the server starts
    /// them with [`ToolHandler::start`] and goes on to the next request, with at most
    /// `ServerConfig::max_concurrency` of them running at once. Other tools' calls run one at a
    /// time on the server's worker.
    fn concurrent(&self) -> bool {
        false
    }

    /// Starts a call and returns; `done` receives its output later, from any thread. The
    /// default runs [`ToolHandler::call`] at once.
    fn start(&self, arguments: Value, ctx: &CallContext, done: Done) {
        done.finish(self.call(arguments, ctx));
    }
}

/// Where a call started with [`ToolHandler::start`] delivers its output: [`Done::finish`], once,
/// from any thread. Dropped unfinished (a task that vanished, a panic), it answers the call with
/// an error: a request is never left without its response.
#[must_use = "a Done dropped unfinished answers the call with an error"]
pub struct Done(Option<Box<dyn FnOnce(ToolOutput) + Send>>);

impl Done {
    /// A `Done` that hands the output to `answer` (the server makes these; a handler may make
    /// one to run [`ToolHandler::start`] itself).
    pub fn new(answer: impl FnOnce(ToolOutput) + Send + 'static) -> Self {
        Self(Some(Box::new(answer)))
    }

    /// Delivers the call's output.
    pub fn finish(mut self, output: ToolOutput) {
        if let Some(answer) = self.0.take() {
            answer(output);
        }
    }
}

impl Drop for Done {
    fn drop(&mut self) {
        if let Some(answer) = self.0.take() {
            answer(ToolOutput::error(
                "the tool's call ended without producing a result",
            ));
        }
    }
}

impl std::fmt::Debug for Done {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(if self.0.is_some() {
            "Done(pending)"
        } else {
            "Done(finished)"
        })
    }
}

/// A [`ToolHandler`] made from a closure.
pub struct FnTool<F>(pub F);

impl<F> ToolHandler for FnTool<F>
where
    F: Fn(Value, &CallContext) -> ToolOutput + Send + Sync,
{
    fn call(&self, arguments: Value, ctx: &CallContext) -> ToolOutput {
        (self.0)(arguments, ctx)
    }
}
