//! How values, names and locations are written inside messages: quoting, shortening,
//! lists and plurals.

use std::fmt::Write as _;

use jsonschema::JsonType;
use jsonschema::error::TypeKind;
use serde_json::Value;

use super::limits::{MAX_LINE_CHARS, MAX_LINES, MAX_LISTED_UNKNOWN, MAX_VALUE_CHARS};

/// Where an error message points: into the arguments, into a tool's result (`Wrapped`: a
/// result sent as `{"result": value}`, whose paths start below `/result`) or into the schema.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) enum Subject {
    Arguments,
    Result,
    Wrapped,
    Schema,
}

/// The types of a `type` error, in a stable order.
pub(super) fn type_kinds(kind: &TypeKind) -> Vec<JsonType> {
    match kind {
        TypeKind::Single(t) => vec![*t],
        TypeKind::Multiple(types) => types.iter().collect(),
    }
}

/// `"a"`, `"a" or "b"`, `"a", "b" or "c"`.
pub(super) fn type_list(types: &[JsonType]) -> String {
    let quoted: Vec<String> = types.iter().map(|t| quote(t.as_str())).collect();
    or_list(&quoted)
}

/// The options of an `enum`, rendered like [`or_list`] (at most ten).
pub(super) fn value_list(options: &Value) -> String {
    let Some(options) = options.as_array() else {
        return short(options);
    };
    let mut rendered: Vec<String> = options.iter().take(MAX_LINES).map(short).collect();
    if options.len() > rendered.len() {
        rendered.push(format!("{} other values", options.len() - rendered.len()));
    }
    or_list(&rendered)
}

/// Joins with commas and a final "or".
pub(super) fn or_list(items: &[String]) -> String {
    match items {
        [] => String::new(),
        [only] => only.clone(),
        [init @ .., last] => format!("{} or {last}", init.join(", ")),
    }
}

/// `"a"`, `"a", "b"` (each JSON-quoted and shortened).
pub(super) fn quote_list(items: &[String]) -> String {
    let listed: Vec<String> = items
        .iter()
        .take(MAX_LISTED_UNKNOWN)
        .map(|i| quote(i))
        .collect();
    let mut text = listed.join(", ");
    if items.len() > listed.len() {
        let _ = write!(text, " and {} more", items.len() - listed.len());
    }
    text
}

/// `argument "a/b"` for argument paths, `result "a/b"` for result paths, `#/a/b` for schema
/// paths.
pub(super) fn subject_name(path: &str, subject: Subject) -> String {
    let (noun, path) = match subject {
        Subject::Schema => return fragment(path),
        Subject::Arguments if path.is_empty() => return "arguments".to_owned(),
        Subject::Arguments => ("argument", path),
        Subject::Result => ("result", path),
        Subject::Wrapped => ("result", path.strip_prefix("/result").unwrap_or(path)),
    };
    match path.strip_prefix('/') {
        None => noun.to_owned(),
        Some(inner) => format!("{noun} {}", quote(inner)),
    }
}

/// A JSON pointer in URI-fragment form for messages: `""` → `#`, `/a/b` → `#/a/b`.
pub(super) fn fragment(pointer: &str) -> String {
    format!("#{pointer}")
}

/// A JSON string literal for `text`, shortened to [`MAX_VALUE_CHARS`] characters.
pub(super) fn quote(text: &str) -> String {
    short(&Value::String(text.to_owned()))
}

/// Compact JSON for a value, shortened to about [`MAX_VALUE_CHARS`] characters.
pub(super) fn short(value: &Value) -> String {
    if let Value::String(text) = value {
        if text.chars().count() > MAX_VALUE_CHARS {
            let cut: String = text.chars().take(MAX_VALUE_CHARS).collect();
            let mut quoted = Value::String(cut).to_string();
            quoted.insert(quoted.len() - 1, '…');
            return quoted;
        }
        return value.to_string();
    }
    let rendered = value.to_string();
    if rendered.chars().count() > MAX_VALUE_CHARS {
        let mut cut: String = rendered.chars().take(MAX_VALUE_CHARS).collect();
        cut.push('…');
        cut
    } else {
        rendered
    }
}

/// Caps a message line at [`MAX_LINE_CHARS`] characters.
pub(super) fn truncate_line(line: String) -> String {
    if line.chars().count() <= MAX_LINE_CHARS {
        return line;
    }
    let mut cut: String = line.chars().take(MAX_LINE_CHARS - 1).collect();
    cut.push('…');
    cut
}

/// Length of a string value in characters (code points, as JSON Schema counts them).
pub(super) fn char_len(value: &Value) -> usize {
    value.as_str().map_or(0, |text| text.chars().count())
}

/// `"s"` unless `count` is one.
pub(super) fn plural(count: usize) -> &'static str {
    if count == 1 { "" } else { "s" }
}

/// "an array", "a string", ... for messages about the wrong kind of JSON value.
pub(super) fn kind_with_article(value: &Value) -> &'static str {
    match value {
        Value::Null => "null",
        Value::Bool(_) => "a boolean",
        Value::Number(_) => "a number",
        Value::String(_) => "a string",
        Value::Array(_) => "an array",
        Value::Object(_) => "an object",
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn short_values_are_cut_on_character_boundaries() {
        let long = "é".repeat(200);
        let rendered = short(&Value::String(long));
        assert!(rendered.starts_with('"') && rendered.ends_with("…\""));
        assert!(rendered.chars().count() < MAX_VALUE_CHARS + 5);
    }
}
