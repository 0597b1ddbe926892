//! `completion/complete`: suggestions for a prompt's argument or a resource template's variable.
//!
//! Values come from the declared type where it lists them (an `enum` in the argument's schema:
//! `Literal[...]`, an `Enum`; `true`/`false` for a boolean), or from the server's completer (a
//! handler run like a tool call, whose output carries `{"values": [...]}` or `{"values": null}`
//! to fall back to the declared ones). At most [`MAX_VALUES`] are sent, with `total` and `hasMore`.

use serde_json::{Map, Value, json};

use crate::jsonrpc::{ErrorCode, RequestError};
use crate::prompt;
use crate::registry::Registry;
use crate::tool::ToolOutput;

/// The most values one answer carries (the specification's limit).
pub(crate) const MAX_VALUES: usize = 100;

/// A checked `completion/complete` request: what it completes and the values its declared type
/// offers (already filtered by the typed prefix).
pub(crate) struct Request {
    /// The handler's arguments: `ref`, `argument` and `context` as the client sent them.
    pub(crate) arguments: Value,
    /// The values the declared type offers for what was typed.
    pub(crate) declared: Vec<String>,
}

/// Reads `params`: the reference must name a prompt or a template this server has, and the
/// argument one of its arguments (or variables); anything else is `-32602`.
pub(crate) fn request(
    registry: &Registry,
    params: &Map<String, Value>,
) -> Result<Request, RequestError> {
    let invalid = |why: &str| RequestError::invalid_params(format!("Invalid params: {why}"));
    let reference = params
        .get("ref")
        .and_then(Value::as_object)
        .ok_or_else(|| invalid("completion/complete needs \"ref\" (an object)"))?;
    let argument = params
        .get("argument")
        .and_then(Value::as_object)
        .ok_or_else(|| invalid("completion/complete needs \"argument\" (an object)"))?;
    let (Some(name), Some(typed)) = (
        argument.get("name").and_then(Value::as_str),
        argument.get("value").and_then(Value::as_str),
    ) else {
        return Err(invalid(
            "\"argument\" needs \"name\" and \"value\" (strings)",
        ));
    };
    let schema = match reference.get("type").and_then(Value::as_str) {
        Some("ref/prompt") => {
            let prompt_name = reference
                .get("name")
                .and_then(Value::as_str)
                .unwrap_or_default();
            let prompt = registry
                .prompt(prompt_name)
                .ok_or_else(|| invalid(&format!("unknown prompt {prompt_name:?}")))?;
            if !prompt.spec.arguments.iter().any(|a| a.name == name) {
                return Err(invalid(&format!(
                    "prompt {prompt_name:?} has no argument {name:?}"
                )));
            }
            &prompt.runner.spec.input_schema
        }
        Some("ref/resource") => {
            let uri = reference
                .get("uri")
                .and_then(Value::as_str)
                .unwrap_or_default();
            let template = registry
                .template(uri)
                .ok_or_else(|| invalid(&format!("no resource template {uri:?}")))?;
            if !template.spec.variables().contains(&name) {
                return Err(invalid(&format!(
                    "template {uri:?} has no variable {name:?}"
                )));
            }
            &template.runner.spec.input_schema
        }
        _ => return Err(invalid("\"ref\" must be a ref/prompt or a ref/resource")),
    };
    let declared = declared_values(schema, name)
        .into_iter()
        .filter(|v| v.starts_with(typed))
        .collect();
    let arguments = json!({
        "ref": reference,
        "argument": argument,
        "context": params.get("context").cloned().unwrap_or_else(|| json!({})),
    });
    Ok(Request {
        arguments,
        declared,
    })
}

/// The values the schema of property `name` lists, as strings.
fn declared_values(schema: &Value, name: &str) -> Vec<String> {
    let property = &schema["properties"][name];
    if let Some(values) = property.get("enum").and_then(Value::as_array) {
        return values
            .iter()
            .map(|v| v.as_str().map_or_else(|| v.to_string(), str::to_owned))
            .collect();
    }
    if prompt::declared_type(schema, name) == Some("boolean") {
        return vec!["false".into(), "true".into()];
    }
    Vec::new()
}

/// The `CompleteResult` for `values` (at most [`MAX_VALUES`] sent).
pub(crate) fn result(mut values: Vec<String>) -> Value {
    let total = values.len();
    values.truncate(MAX_VALUES);
    json!({"completion": {"values": values, "total": total, "hasMore": total > MAX_VALUES}})
}

/// The `CompleteResult` for what the completer made (`{"values": null}` or no values: the
/// declared ones); a completer that failed is `-32603`.
pub(crate) fn from_completer(
    output: ToolOutput,
    declared: Vec<String>,
) -> Result<Value, RequestError> {
    if output.is_error {
        return Err(RequestError::new(
            ErrorCode::INTERNAL_ERROR,
            format!("the completer failed: {}", prompt::error_text(output)),
        ));
    }
    let values = output
        .structured
        .as_ref()
        .and_then(|s| s.get("values"))
        .and_then(Value::as_array)
        .map(|values| {
            values
                .iter()
                .map(|v| v.as_str().map_or_else(|| v.to_string(), str::to_owned))
                .collect()
        });
    Ok(result(values.unwrap_or(declared)))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn at_most_100_values_are_sent_with_the_total_and_has_more() {
        let many: Vec<String> = (0..150).map(|n| format!("v{n}")).collect();
        let answer = result(many);
        assert_eq!(
            answer["completion"]["values"].as_array().unwrap().len(),
            100
        );
        assert_eq!(answer["completion"]["total"], 150);
        assert_eq!(answer["completion"]["hasMore"], true);
        assert_eq!(result(vec!["a".into()])["completion"]["hasMore"], false);
    }

    #[test]
    fn declared_values_come_from_an_enum_or_a_boolean() {
        let schema = json!({"properties": {
            "color": {"enum": ["red", "blue"]}, "n": {"enum": [1, 2]},
            "flag": {"type": "boolean"}, "text": {"type": "string"}
        }});
        assert_eq!(declared_values(&schema, "color"), ["red", "blue"]);
        assert_eq!(declared_values(&schema, "n"), ["1", "2"]);
        assert_eq!(declared_values(&schema, "flag"), ["false", "true"]);
        assert!(declared_values(&schema, "text").is_empty());
    }
}
