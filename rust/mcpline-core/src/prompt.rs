//! Prompts: what a prompt declares ([`PromptSpec`]), how `prompts/get` arguments are read, and
//! how what its handler made becomes a `GetPromptResult`, per protocol revision.
//!
//! A prompt runs like a tool call (queued, on the worker, under the capture cell): its handler
//! is a [`crate::ToolHandler`] whose output carries `{"messages": [{"role", "content"}]}` as
//! structured data, each content one MCP content block.

use serde_json::{Map, Value};

use crate::jsonrpc::{ErrorCode, RequestError};
use crate::protocol::{Feature, Revision};
use crate::tool::{Content, ToolOutput};

/// One argument of a prompt (`prompts/get` sends every argument as a string).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct PromptArgument {
    /// Its name.
    pub name: String,
    /// What it is for.
    pub description: Option<String>,
    /// Whether `prompts/get` must send it.
    pub required: bool,
}

/// A prompt's declaration.
#[derive(Debug, Clone)]
pub struct PromptSpec {
    /// Unique name (the tool naming rule: 1-64 characters of `A-Z a-z 0-9 _ - .`).
    pub name: String,
    /// Human-readable title (from 2025-06-18).
    pub title: Option<String>,
    /// What the prompt is for.
    pub description: Option<String>,
    /// Its arguments, in order.
    pub arguments: Vec<PromptArgument>,
    /// Icons (an array of MCP `Icon` objects; sent from 2025-11-25).
    pub icons: Option<Value>,
}

impl PromptSpec {
    /// A prompt with the given name, no arguments and no description.
    #[must_use]
    pub fn new(name: impl Into<String>) -> Self {
        Self {
            name: name.into(),
            title: None,
            description: None,
            arguments: Vec::new(),
            icons: None,
        }
    }

    /// The `Prompt` object of `prompts/list` for `rev`.
    #[must_use]
    pub fn descriptor(&self, rev: Revision) -> Value {
        let mut prompt = Map::new();
        prompt.insert("name".into(), Value::from(self.name.as_str()));
        if rev.supports(Feature::Titles) {
            if let Some(title) = &self.title {
                prompt.insert("title".into(), Value::from(title.as_str()));
            }
        }
        if let Some(description) = &self.description {
            prompt.insert("description".into(), Value::from(description.as_str()));
        }
        if rev.supports(Feature::Icons) {
            if let Some(icons) = &self.icons {
                prompt.insert("icons".into(), icons.clone());
            }
        }
        if !self.arguments.is_empty() {
            let arguments = self.arguments.iter().map(|a| {
                let mut argument = Map::new();
                argument.insert("name".into(), Value::from(a.name.as_str()));
                if let Some(description) = &a.description {
                    argument.insert("description".into(), Value::from(description.as_str()));
                }
                argument.insert("required".into(), Value::Bool(a.required));
                Value::Object(argument)
            });
            prompt.insert("arguments".into(), Value::Array(arguments.collect()));
        }
        Value::Object(prompt)
    }

    /// The arguments of a `prompts/get` request as the handler's input: an object of strings,
    /// every required one present, none unknown; each string read as the type `input_schema`
    /// gives its property (`"3"` for an integer is 3), since the wire carries only strings.
    pub(crate) fn arguments_from(
        &self,
        params: &Map<String, Value>,
        input_schema: &Value,
    ) -> Result<Value, RequestError> {
        let sent = match params.get("arguments") {
            None | Some(Value::Null) => Map::new(),
            Some(Value::Object(sent)) => sent.clone(),
            Some(_) => {
                return Err(RequestError::invalid_params(
                    "Invalid params: prompt \"arguments\" must be an object of strings",
                ));
            }
        };
        let missing: Vec<&str> = self
            .arguments
            .iter()
            .filter(|a| a.required && !sent.contains_key(&a.name))
            .map(|a| a.name.as_str())
            .collect();
        if !missing.is_empty() {
            return Err(RequestError::invalid_params(format!(
                "Invalid params: prompt {:?} needs the argument(s) {}",
                self.name,
                missing.join(", ")
            )));
        }
        let mut arguments = Map::new();
        for (name, value) in sent {
            if !self.arguments.iter().any(|a| a.name == name) {
                let known: Vec<&str> = self.arguments.iter().map(|a| a.name.as_str()).collect();
                return Err(RequestError::invalid_params(format!(
                    "Invalid params: prompt {:?} has no argument {name:?} (its arguments: {})",
                    self.name,
                    if known.is_empty() {
                        "none".to_string()
                    } else {
                        known.join(", ")
                    }
                )));
            }
            let Value::String(text) = value else {
                return Err(RequestError::invalid_params(format!(
                    "Invalid params: prompt argument {name:?} must be a string"
                )));
            };
            let declared = declared_type(input_schema, &name);
            let read = read_string_as(&text, declared).ok_or_else(|| {
                RequestError::invalid_params(format!(
                    "Invalid params: prompt argument {name:?} must be {} (got {text:?})",
                    declared.map_or("a string", article)
                ))
            })?;
            arguments.insert(name, read);
        }
        Ok(Value::Object(arguments))
    }

    /// The `GetPromptResult` for what the handler made: its messages, each content block shaped
    /// for `rev`; an error output is a JSON-RPC error (`-32603`) carrying its text.
    pub(crate) fn result(&self, output: ToolOutput, rev: Revision) -> Result<Value, RequestError> {
        let failure = |why: String| RequestError::new(ErrorCode::INTERNAL_ERROR, why);
        if output.is_error {
            return Err(failure(format!(
                "prompt {:?} failed: {}",
                self.name,
                error_text(output)
            )));
        }
        let Some(Value::Object(mut made)) = output.structured else {
            return Err(failure(format!("prompt {:?} made no messages", self.name)));
        };
        let Some(Value::Array(messages)) = made.remove("messages") else {
            return Err(failure(format!("prompt {:?} made no messages", self.name)));
        };
        let mut shaped = Vec::with_capacity(messages.len());
        for message in messages {
            let Value::Object(mut message) = message else {
                return Err(failure(format!(
                    "prompt {:?} made a message that is not an object",
                    self.name
                )));
            };
            let role = message.remove("role");
            if !matches!(
                role.as_ref().and_then(Value::as_str),
                Some("user" | "assistant")
            ) {
                return Err(failure(format!(
                    "prompt {:?} made a message whose role is not \"user\" or \"assistant\"",
                    self.name
                )));
            }
            let Some(content) = message.remove("content") else {
                return Err(failure(format!(
                    "prompt {:?} made a message without content",
                    self.name
                )));
            };
            let mut out = Map::new();
            out.insert("role".into(), role.unwrap_or_default());
            out.insert("content".into(), Content::Raw(content).into_json(rev));
            shaped.push(Value::Object(out));
        }
        let mut result = Map::new();
        if let Some(description) = &self.description {
            result.insert("description".into(), Value::from(description.as_str()));
        }
        result.insert("messages".into(), Value::Array(shaped));
        Ok(Value::Object(result))
    }
}

/// The text of an error output (its message, then what the run printed, when attached).
pub(crate) fn error_text(output: ToolOutput) -> String {
    let text: Vec<String> = output
        .content
        .into_iter()
        .map(|c| match c {
            Content::Text(t) => t,
            other => format!("{other:?}"),
        })
        .collect();
    text.join("\n")
}

/// `text` read as a value of JSON Schema type `declared` (a string for any other type).
pub(crate) fn read_string_as(text: &str, declared: Option<&str>) -> Option<Value> {
    match declared {
        Some("integer") => text.trim().parse::<i64>().ok().map(Value::from),
        Some("number") => text
            .trim()
            .parse::<f64>()
            .ok()
            .filter(|n| n.is_finite())
            .map(Value::from),
        Some("boolean") => match text.trim() {
            "true" => Some(Value::Bool(true)),
            "false" => Some(Value::Bool(false)),
            _ => None,
        },
        _ => Some(Value::String(text.to_owned())),
    }
}

/// The JSON Schema `type` `input_schema` gives property `name`, when it gives one.
pub(crate) fn declared_type<'a>(input_schema: &'a Value, name: &str) -> Option<&'a str> {
    input_schema
        .pointer(&format!("/properties/{}/type", escape_pointer(name)))
        .and_then(Value::as_str)
}

pub(crate) fn article(declared: &str) -> &'static str {
    match declared {
        "integer" => "an integer",
        "number" => "a number",
        "boolean" => "true or false",
        _ => "a string",
    }
}

/// `name` as one JSON Pointer token.
fn escape_pointer(name: &str) -> String {
    name.replace('~', "~0").replace('/', "~1")
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::*;

    fn spec() -> PromptSpec {
        let mut spec = PromptSpec::new("review");
        spec.title = Some("Code review".into());
        spec.description = Some("Review a change.".into());
        spec.arguments = vec![
            PromptArgument {
                name: "code".into(),
                description: Some("The code.".into()),
                required: true,
            },
            PromptArgument {
                name: "rounds".into(),
                description: None,
                required: false,
            },
        ];
        spec
    }

    fn schema() -> Value {
        json!({"type": "object", "properties": {"code": {"type": "string"}, "rounds": {"type": "integer"}}})
    }

    fn params(arguments: Value) -> Map<String, Value> {
        let mut params = Map::new();
        params.insert("arguments".into(), arguments);
        params
    }

    #[test]
    fn the_descriptor_lists_arguments_and_a_title_from_2025_06_18() {
        let old = spec().descriptor(Revision::V2025_03_26);
        assert!(old.get("title").is_none());
        assert_eq!(
            old["arguments"][0],
            json!({"name": "code", "description": "The code.", "required": true})
        );
        assert_eq!(
            spec().descriptor(Revision::V2025_06_18)["title"],
            "Code review"
        );
    }

    #[test]
    fn string_arguments_are_read_as_their_declared_types() {
        let read = spec()
            .arguments_from(&params(json!({"code": "x", "rounds": "3"})), &schema())
            .unwrap();
        assert_eq!(read, json!({"code": "x", "rounds": 3}));
    }

    #[test]
    fn a_missing_unknown_or_mistyped_argument_is_invalid_params() {
        for (arguments, says) in [
            (json!({}), "needs the argument(s) code"),
            (
                json!({"code": "x", "depth": "1"}),
                "has no argument \"depth\"",
            ),
            (json!({"code": 1}), "must be a string"),
            (json!({"code": "x", "rounds": "many"}), "must be an integer"),
        ] {
            let error = spec()
                .arguments_from(&params(arguments), &schema())
                .unwrap_err();
            assert_eq!(error.code, ErrorCode::INVALID_PARAMS);
            assert!(error.message.contains(says), "{}", error.message);
        }
    }

    #[test]
    fn messages_are_shaped_per_revision_and_errors_become_internal_errors() {
        let audio = json!({"type": "audio", "data": "AAAA", "mimeType": "audio/wav"});
        let output = ToolOutput::structured(json!({"messages": [
            {"role": "user", "content": {"type": "text", "text": "hi"}},
            {"role": "assistant", "content": audio},
        ]}));
        let new = spec()
            .result(output.clone(), Revision::V2025_06_18)
            .unwrap();
        assert_eq!(new["description"], "Review a change.");
        assert_eq!(new["messages"][1]["content"]["type"], "audio");
        let old = spec().result(output, Revision::V2024_11_05).unwrap();
        assert_eq!(old["messages"][1]["content"]["type"], "text");
        let failed = spec()
            .result(ToolOutput::error("boom"), Revision::V2025_06_18)
            .unwrap_err();
        assert_eq!(failed.code, ErrorCode::INTERNAL_ERROR);
        assert!(failed.message.contains("boom"));
    }
}
