//! The wording of each validation problem: one line per validator error, the unknown-argument
//! message and its "did you mean" suggestions.

use std::fmt::Write as _;

use jsonschema::error::ValidationErrorKind;
use jsonschema::{JsonType, ValidationError};
use serde_json::{Map, Value};

use super::limits::{
    MAX_COUNTED_PROBLEMS, MAX_LINES, MAX_LISTED_NAMES, MAX_LISTED_UNKNOWN,
    MAX_SUGGESTION_KEY_CHARS, MIN_SIMILARITY,
};
use super::render::{
    Subject, char_len, plural, quote, quote_list, short, subject_name, truncate_line, type_kinds,
    type_list, value_list,
};

/// `unknown argument "pathh" for tool "count_words": did you mean "path"? Valid arguments: ...`
///
/// `names` and `patterns` are the ones the schema declares (listed as the valid arguments).
pub(super) fn unknown_message(
    tool: &str,
    unknown: &[String],
    names: &[String],
    patterns: &[String],
) -> String {
    let tool = quote(tool);
    let mut message = String::from(if unknown.len() == 1 {
        "unknown argument "
    } else {
        "unknown arguments "
    });
    let listed = unknown.len().min(MAX_LISTED_UNKNOWN);
    let single_suggestion = if unknown.len() == 1 {
        nearest(&unknown[0], names)
    } else {
        None
    };
    for (index, key) in unknown[..listed].iter().enumerate() {
        if index > 0 {
            message.push_str(", ");
        }
        message.push_str(&quote(key));
        if unknown.len() > 1 {
            if let Some(suggestion) = nearest(key, names) {
                let _ = write!(message, " (did you mean {}?)", quote(suggestion));
            }
        }
    }
    if unknown.len() > listed {
        let _ = write!(message, " and {} more", unknown.len() - listed);
    }
    let _ = write!(message, " for tool {tool}");

    if names.is_empty() && patterns.is_empty() {
        let _ = write!(message, ": tool {tool} takes no arguments");
        return truncate_line(message);
    }
    if let Some(suggestion) = single_suggestion {
        let _ = write!(message, ": did you mean {}?", quote(suggestion));
    } else {
        message.push('.');
    }
    message.push_str(" Valid arguments: ");
    let shown = names.len().min(MAX_LISTED_NAMES);
    message.push_str(&names[..shown].join(", "));
    if names.len() > shown {
        let _ = write!(message, ", ... ({} more)", names.len() - shown);
    }
    if !patterns.is_empty() {
        if !names.is_empty() {
            message.push_str(", or ");
        }
        message.push_str("any name matching ");
        let patterns: Vec<String> = patterns.iter().map(|p| quote(p)).collect();
        message.push_str(&patterns.join(" or "));
    }
    truncate_line(message)
}

/// The lines explaining a failed validation: one per distinct problem, at most [`MAX_LINES`],
/// the last saying how many more there were.
pub(super) struct Problems {
    lines: Vec<String>,
    count: usize,
}

impl Problems {
    /// Describes `errors` (stopping after [`MAX_COUNTED_PROBLEMS`]).
    pub(super) fn collect<'a>(
        schema: &Value,
        subject: Subject,
        errors: impl Iterator<Item = ValidationError<'a>>,
    ) -> Self {
        let mut problems = Self {
            lines: Vec::new(),
            count: 0,
        };
        for error in errors {
            let mut described = Vec::new();
            describe(schema, subject, &error, &mut described);
            for line in described {
                if !problems.lines.contains(&line) {
                    problems.count += 1;
                    if problems.lines.len() < MAX_LINES {
                        problems.lines.push(line);
                    }
                }
            }
            if problems.count >= MAX_COUNTED_PROBLEMS {
                break;
            }
        }
        problems
    }

    /// Puts one more problem in front of the others.
    pub(super) fn put_first(&mut self, line: String) {
        self.count += 1;
        self.lines.insert(0, line);
    }

    /// The lines joined, or `None` when the validator named no problem.
    pub(super) fn into_message(mut self) -> Option<String> {
        if self.lines.is_empty() {
            return None;
        }
        if self.count > MAX_LINES {
            self.lines.truncate(MAX_LINES - 1);
            let hidden = self.count - self.lines.len();
            let more = if self.count >= MAX_COUNTED_PROBLEMS {
                "at least "
            } else {
                ""
            };
            self.lines.push(format!(
                "... and {more}{hidden} more problem{}",
                plural(hidden)
            ));
        }
        Some(self.lines.join("\n"))
    }
}

/// Turns one validator error into one or more lines.
///
/// `schema` is the tool's schema, where the properties allowed next to a failing
/// `additionalProperties` are looked up for suggestions.
pub(super) fn describe(
    schema: &Value,
    subject: Subject,
    error: &ValidationError<'_>,
    out: &mut Vec<String>,
) {
    let path = error.instance_path().as_str();
    let value = error.instance();
    let line = match error.kind() {
        ValidationErrorKind::Required { property }
            if path.is_empty() && subject == Subject::Arguments =>
        {
            format!("missing required argument {}", short(property))
        }
        ValidationErrorKind::AnyOf { context } | ValidationErrorKind::OneOfNotValid { context } => {
            describe_alternatives(schema, subject, error, context, out);
            return;
        }
        ValidationErrorKind::AdditionalProperties { unexpected }
        | ValidationErrorKind::UnevaluatedProperties { unexpected } => {
            let mut line = format!(
                "{}: unexpected propert{} {}",
                subject_name(path, subject),
                if unexpected.len() == 1 { "y" } else { "ies" },
                quote_list(unexpected)
            );
            let allowed = sibling_properties(schema, error.schema_path().as_str());
            if !allowed.is_empty() {
                if unexpected.len() == 1 {
                    if let Some(suggestion) = nearest(&unexpected[0], &allowed) {
                        let _ = write!(line, ": did you mean {}?", quote(suggestion));
                    }
                }
                if !line.ends_with('?') {
                    line.push('.');
                }
                let _ = write!(line, " Allowed properties: {}", allowed.join(", "));
            }
            line
        }
        kind => format!("{}: {}", subject_name(path, subject), reason(kind, value)),
    };
    out.push(truncate_line(line));
}

/// `anyOf`/`oneOf` failures: alternatives that only failed on the type of the value itself
/// are folded into a type list; a single remaining alternative is explained in full.
fn describe_alternatives(
    schema: &Value,
    subject: Subject,
    error: &ValidationError<'_>,
    context: &[Vec<ValidationError<'static>>],
    out: &mut Vec<String>,
) {
    let here = error.instance_path().as_str();
    let name = subject_name(here, subject);
    let mut types: Vec<JsonType> = Vec::new();
    let mut others: Vec<&[ValidationError<'static>]> = Vec::new();
    for alternative in context {
        let type_only = !alternative.is_empty()
            && alternative.iter().all(|e| {
                e.instance_path().as_str() == here
                    && matches!(e.kind(), ValidationErrorKind::Type { .. })
            });
        if type_only {
            for e in alternative {
                if let ValidationErrorKind::Type { kind } = e.kind() {
                    for t in type_kinds(kind) {
                        if !types.contains(&t) {
                            types.push(t);
                        }
                    }
                }
            }
        } else {
            others.push(alternative);
        }
    }
    match others.as_slice() {
        [] => out.push(truncate_line(format!(
            "{name}: {} is not of type {}",
            short(error.instance()),
            type_list(&types)
        ))),
        [only] if !only.is_empty() => {
            let start = out.len();
            for e in *only {
                describe(schema, subject, e, out);
            }
            if !types.is_empty() {
                if let Some(first) = out.get_mut(start) {
                    let also = if types == [JsonType::Null] {
                        "null".to_owned()
                    } else {
                        format!("of type {}", type_list(&types))
                    };
                    let _ = write!(first, " ({name} may also be {also})");
                    *first = truncate_line(std::mem::take(first));
                }
            }
        }
        _ => {
            let mut line = format!(
                "{name}: {} does not match any of the allowed alternatives",
                short(error.instance())
            );
            if !types.is_empty() {
                let _ = write!(line, " (neither of type {}", type_list(&types));
                line.push_str(" nor any of the following)");
            }
            let mut first = true;
            for alternative in others {
                let mut described = Vec::new();
                if let Some(e) = alternative.first() {
                    describe(schema, subject, e, &mut described);
                }
                if let Some(text) = described.first() {
                    line.push_str(if first { ": " } else { "; or " });
                    line.push_str(text);
                    first = false;
                }
            }
            out.push(truncate_line(line));
        }
    }
}

/// The `properties` names next to the `additionalProperties` keyword at `schema_path`.
fn sibling_properties(schema: &Value, schema_path: &str) -> Vec<String> {
    let Some(parent) = schema_path
        .strip_suffix("/additionalProperties")
        .or_else(|| schema_path.strip_suffix("/unevaluatedProperties"))
    else {
        return Vec::new();
    };
    schema
        .pointer(parent)
        .and_then(|parent| parent.get("properties"))
        .and_then(Value::as_object)
        .map(|properties| properties.keys().cloned().collect())
        .unwrap_or_default()
}

/// The closest valid name to `key`, if it is close enough to be a plausible typo.
///
/// Case and `_`/`-` separators are ignored first (`"Path"` → `"path"`, `"maxResults"` →
/// `"max_results"`); otherwise the normalised Damerau–Levenshtein similarity must be at least
/// [`MIN_SIMILARITY`].
fn nearest<'a>(key: &str, names: &'a [String]) -> Option<&'a str> {
    if key.chars().count() > MAX_SUGGESTION_KEY_CHARS {
        return None;
    }
    let folded = fold(key);
    let lower = key.to_lowercase();
    let mut best: Option<(f64, &str)> = None;
    for name in names {
        if fold(name) == folded {
            return Some(name);
        }
        let similarity = strsim::normalized_damerau_levenshtein(&lower, &name.to_lowercase());
        if similarity >= MIN_SIMILARITY && best.is_none_or(|(score, _)| similarity > score) {
            best = Some((similarity, name));
        }
    }
    best.map(|(_, name)| name)
}

/// Lowercases and removes `_` and `-` (for case- and separator-insensitive comparison).
fn fold(name: &str) -> String {
    name.chars()
        .filter(|c| *c != '_' && *c != '-')
        .flat_map(char::to_lowercase)
        .collect()
}

/// The bare reason for one error kind (without the `argument "x": ` prefix).
#[allow(clippy::too_many_lines, reason = "one short arm per error kind")]
pub(super) fn reason(kind: &ValidationErrorKind, value: &Value) -> String {
    match kind {
        ValidationErrorKind::Type { kind } => {
            let types: Vec<JsonType> = type_kinds(kind);
            format!("{} is not of type {}", short(value), type_list(&types))
        }
        ValidationErrorKind::Required { property } => {
            format!("missing required property {}", short(property))
        }
        ValidationErrorKind::Enum { options } => {
            format!("{} is not one of {}", short(value), value_list(options))
        }
        ValidationErrorKind::Constant { expected_value } => {
            format!("expected {}, got {}", short(expected_value), short(value))
        }
        ValidationErrorKind::AnyOf { .. } | ValidationErrorKind::OneOfNotValid { .. } => {
            format!(
                "{} does not match any of the allowed alternatives",
                short(value)
            )
        }
        ValidationErrorKind::OneOfMultipleValid { .. } => format!(
            "{} matches more than one of the mutually exclusive alternatives (oneOf)",
            short(value)
        ),
        ValidationErrorKind::AdditionalProperties { unexpected }
        | ValidationErrorKind::UnevaluatedProperties { unexpected } => format!(
            "unexpected propert{} {}",
            if unexpected.len() == 1 { "y" } else { "ies" },
            quote_list(unexpected)
        ),
        ValidationErrorKind::AdditionalItems { limit } => format!(
            "has {} items, more than the {limit} allowed",
            value.as_array().map_or(0, Vec::len)
        ),
        ValidationErrorKind::UnevaluatedItems { unexpected } => format!(
            "has {} unexpected item{} not allowed by the schema",
            unexpected.len(),
            plural(unexpected.len())
        ),
        ValidationErrorKind::Minimum { limit } => {
            format!("{} is less than the minimum of {limit}", short(value))
        }
        ValidationErrorKind::Maximum { limit } => {
            format!("{} is greater than the maximum of {limit}", short(value))
        }
        ValidationErrorKind::ExclusiveMinimum { limit } => {
            format!("{} must be greater than {limit}", short(value))
        }
        ValidationErrorKind::ExclusiveMaximum { limit } => {
            format!("{} must be less than {limit}", short(value))
        }
        ValidationErrorKind::MultipleOf { multiple_of } => {
            format!("{} is not a multiple of {multiple_of}", short(value))
        }
        ValidationErrorKind::MinLength { limit } => format!(
            "{} has {} character{}, fewer than the minimum of {limit}",
            short(value),
            char_len(value),
            plural(char_len(value))
        ),
        ValidationErrorKind::MaxLength { limit } => format!(
            "{} has {} characters, more than the maximum of {limit}",
            short(value),
            char_len(value)
        ),
        ValidationErrorKind::MinItems { limit } => {
            let len = value.as_array().map_or(0, Vec::len);
            format!(
                "has {len} item{}, fewer than the minimum of {limit}",
                plural(len)
            )
        }
        ValidationErrorKind::MaxItems { limit } => {
            let len = value.as_array().map_or(0, Vec::len);
            format!("has {len} items, more than the maximum of {limit}")
        }
        ValidationErrorKind::MinProperties { limit } => {
            let len = value.as_object().map_or(0, Map::len);
            format!(
                "has {len} propert{}, fewer than the minimum of {limit}",
                if len == 1 { "y" } else { "ies" }
            )
        }
        ValidationErrorKind::MaxProperties { limit } => {
            let len = value.as_object().map_or(0, Map::len);
            format!("has {len} properties, more than the maximum of {limit}")
        }
        ValidationErrorKind::UniqueItems => "contains duplicate items".to_owned(),
        ValidationErrorKind::Contains => {
            "no item matches the schema given by \"contains\"".to_owned()
        }
        ValidationErrorKind::Pattern { pattern } => {
            format!(
                "{} does not match the pattern {}",
                short(value),
                quote(pattern)
            )
        }
        ValidationErrorKind::Format { format } => {
            format!("{} is not a valid {}", short(value), quote(format))
        }
        ValidationErrorKind::ContentEncoding { content_encoding } => {
            format!(
                "{} is not valid {} content",
                short(value),
                quote(content_encoding)
            )
        }
        ValidationErrorKind::ContentMediaType { content_media_type } => format!(
            "{} is not valid {} content",
            short(value),
            quote(content_media_type)
        ),
        ValidationErrorKind::FromUtf8 { .. } => "decoded content is not valid UTF-8".to_owned(),
        ValidationErrorKind::FalseSchema => "no value is allowed here".to_owned(),
        ValidationErrorKind::Not { schema } => {
            format!(
                "{} must not match the schema {}",
                short(value),
                short(schema)
            )
        }
        ValidationErrorKind::PropertyNames { error } => format!(
            "invalid property name: {}",
            reason(error.kind(), error.instance())
        ),
        ValidationErrorKind::BacktrackLimitExceeded { .. } => {
            "the value could not be checked against its pattern (regular expression backtracking \
             limit exceeded)"
                .to_owned()
        }
        ValidationErrorKind::RegexEngineFailure { message } => {
            format!("the value could not be checked against its pattern ({message})")
        }
        ValidationErrorKind::Custom { keyword, message } => {
            if message.is_empty() {
                format!("does not satisfy {}", quote(keyword))
            } else {
                message.clone()
            }
        }
        ValidationErrorKind::Referencing(error) => {
            format!("a schema reference cannot be resolved ({error})")
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn names(list: &[&str]) -> Vec<String> {
        list.iter().map(|s| (*s).to_owned()).collect()
    }

    #[test]
    fn nearest_matches_typos_case_and_separators() {
        let valid = names(&["path", "encoding", "max_results"]);
        assert_eq!(nearest("pathh", &valid), Some("path"));
        assert_eq!(nearest("Path", &valid), Some("path"));
        assert_eq!(nearest("maxResults", &valid), Some("max_results"));
        assert_eq!(nearest("encodng", &valid), Some("encoding"));
        assert_eq!(nearest("zzz", &valid), None);
        assert_eq!(nearest("x", &names(&["y"])), None);
    }
}
