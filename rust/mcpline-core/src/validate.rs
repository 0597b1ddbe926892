//! Validation of `tools/call` arguments against a tool's `inputSchema`.
//!
//! An [`ArgumentValidator`] is compiled once per tool at registration and then used on every
//! `tools/call` before the Python tool runs. It checks the arguments with a complete
//! JSON Schema validator (2020-12 unless the schema's `$schema` names another draft), handles
//! argument names the schema does not declare (rejected in strict mode, dropped otherwise), and
//! turns every problem into one short line that a person or a model can act on:
//!
//! ```text
//! unknown argument "pathh" for tool "count_words": did you mean "path"? Valid arguments: path, encoding
//! argument "count": "5" is not of type "integer"
//! missing required argument "path"
//! ```
//!
//! Values are never coerced: `"5"` is not `5` and `"true"` is not `true`. (`1.0` is an integer,
//! because JSON Schema says so.) Schemas are never fetched: a `$ref` to an `http`, `https` or
//! `file` URI — or to any document other than the schema itself — is refused when the validator
//! is built.

use std::collections::HashSet;
use std::fmt::Write as _;

use jsonschema::error::{TypeKind, ValidationErrorKind};
use jsonschema::{JsonType, ReferencingError, ValidationError, Validator};
use serde_json::{Map, Value};

/// At most this many lines in one error message (the last one may say how many were left out).
const MAX_LINES: usize = 10;
/// Stop counting further problems after this many (the count is only for the summary line).
const MAX_COUNTED_PROBLEMS: usize = 1000;
/// Longest line kept in an error message, in characters.
const MAX_LINE_CHARS: usize = 400;
/// Longest rendering of an offending value, in characters.
const MAX_VALUE_CHARS: usize = 60;
/// How many names "Valid arguments: ..." lists before summarising the rest.
const MAX_LISTED_NAMES: usize = 30;
/// How many unknown keys one message names before summarising the rest.
const MAX_LISTED_UNKNOWN: usize = 10;
/// Keys longer than this are not compared against the valid names (edit distance is quadratic).
const MAX_SUGGESTION_KEY_CHARS: usize = 128;
/// Minimum normalised Damerau–Levenshtein similarity for a "did you mean" suggestion.
const MIN_SIMILARITY: f64 = 0.6;
/// How deep in-place applicators (`allOf`, `$ref`, ...) are followed to collect argument names.
const MAX_NAME_DEPTH: usize = 32;

/// Why a tool's `inputSchema` cannot be used to validate its arguments.
///
/// Raised once, when the tool is registered; the caller adds the tool name. Every message names
/// the mechanism that refused the schema and how to fix it. Pointers (`#/properties/a`) locate
/// the problem inside the schema.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[non_exhaustive]
pub enum SchemaError {
    /// The schema is not a JSON object (for example `true`, an array or a string).
    #[error(
        "inputSchema must be a JSON object, got {found}: tool arguments are a JSON object, so \
         declare them as {{\"type\": \"object\", \"properties\": {{...}}}}"
    )]
    NotAnObject {
        /// What was found instead, with an article ("an array").
        found: &'static str,
    },
    /// The root schema does not say `"type": "object"`.
    #[error(
        "inputSchema root must declare \"type\": \"object\" (MCP tool arguments are always a JSON \
         object), found {found}: set \"type\": \"object\" at the root of the schema"
    )]
    RootNotObjectType {
        /// The root `type` as written in the schema, or `no "type"`.
        found: String,
    },
    /// A `$ref` points outside the schema document; remote resolution is disabled.
    #[error(
        "inputSchema refers to the external schema \"{reference}\" at {pointer}: resolving remote \
         $ref (http, https, file or any other document) is disabled because schemas are never \
         fetched; copy the referenced schema into \"$defs\" and refer to it as \
         \"#/$defs/<name>\""
    )]
    RemoteRef {
        /// The reference as written (or as resolved, when it could not be located).
        reference: String,
        /// JSON pointer (URI fragment form) of the `$ref` inside the schema.
        pointer: String,
    },
    /// A local `$ref` does not lead anywhere inside the schema.
    #[error(
        "inputSchema has a $ref at {pointer} that cannot be resolved inside the schema ({reason}): \
         point it at an existing local definition such as \"#/$defs/<name>\""
    )]
    UnresolvedRef {
        /// JSON pointer (URI fragment form) of the `$ref` inside the schema, `#` if unknown.
        pointer: String,
        /// What the reference resolver reported.
        reason: String,
    },
    /// `$schema` names a dialect that is not built in.
    #[error(
        "inputSchema declares \"$schema\": \"{uri}\", which is not a supported JSON Schema \
         dialect (custom meta-schemas are never fetched): remove \"$schema\" (JSON Schema \
         2020-12 is assumed) or use \"https://json-schema.org/draft/2020-12/schema\""
    )]
    UnknownDialect {
        /// The `$schema` URI.
        uri: String,
    },
    /// The schema does not conform to its meta-schema (misspelt type, bad regex, ...).
    #[error(
        "inputSchema is not a valid JSON Schema at {pointer}: {details}; fix the schema so that \
         it conforms to its meta-schema (JSON Schema 2020-12 unless \"$schema\" names another \
         draft)"
    )]
    Invalid {
        /// JSON pointer (URI fragment form) of the offending part of the schema.
        pointer: String,
        /// What is wrong there.
        details: String,
    },
}

/// What happens to argument names the schema does not declare.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum UnknownKeys {
    /// The root schema allows additional properties explicitly: pass them on (and validate them).
    Allowed,
    /// Strict mode: report them as errors.
    Rejected,
    /// Lenient mode: remove them before validation.
    Dropped,
}

/// Where an error message points: into the arguments or into the schema.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Subject {
    Arguments,
    Schema,
}

/// A tool's compiled argument check, built once at registration and used on every `tools/call`.
///
/// Cheap to share between threads (`Send + Sync`). For valid arguments
/// [`check`](Self::check) allocates nothing and returns the very value it was given.
///
/// Argument names the schema declares are the keys of the root `properties`, including those of
/// subschemas that apply to the root object in place (`allOf`, `anyOf`, `oneOf`,
/// `if`/`then`/`else`, `dependentSchemas` and local `$ref`s), plus any name matching one of their
/// `patternProperties`. Any other name is *unknown*: when the root schema says
/// `"additionalProperties": false` or says nothing about additional properties, unknown names are
/// rejected in strict mode and silently dropped otherwise; when it allows them explicitly (`true`
/// or a schema, or likewise `unevaluatedProperties`), they are passed on in both modes.
pub struct ArgumentValidator {
    validator: Validator,
    unknown_keys: UnknownKeys,
    /// Declared argument names in schema order (for messages and suggestions).
    names: Vec<String>,
    /// The same names, sorted (for lookup on the hot path).
    sorted_names: Vec<String>,
    /// `patternProperties` patterns that also declare names (for messages).
    patterns: Vec<String>,
    /// Matches a key against `patterns` (same regex dialect as the schema validator).
    pattern_validator: Option<Validator>,
    /// The schema, for suggestions in nested `additionalProperties` errors.
    schema: Value,
}

impl std::fmt::Debug for ArgumentValidator {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("ArgumentValidator")
            .field("unknown_keys", &self.unknown_keys)
            .field("names", &self.names)
            .field("patterns", &self.patterns)
            .finish_non_exhaustive()
    }
}

impl ArgumentValidator {
    /// Compiles a tool's `inputSchema`.
    ///
    /// The schema is JSON Schema 2020-12 unless its `$schema` names another built-in draft; its
    /// root must be an object schema (`{"type": "object", ...}`). `strict` decides what happens to
    /// argument names the schema does not declare (see the type's documentation): `true` rejects
    /// them, `false` drops them before validation.
    ///
    /// Only references inside the schema (`#/$defs/...`, anchors, embedded `$id`s) are resolved;
    /// nothing is ever fetched.
    ///
    /// # Errors
    ///
    /// [`SchemaError`] when the schema is not an object schema, refers to an external document,
    /// has a local `$ref` that leads nowhere, names an unknown `$schema` dialect or does not
    /// conform to its meta-schema.
    pub fn new(schema: &Value, strict: bool) -> Result<Self, SchemaError> {
        let Value::Object(root) = schema else {
            return Err(SchemaError::NotAnObject {
                found: kind_with_article(schema),
            });
        };
        check_root_type(root)?;
        check_no_remote_refs(schema)?;
        let validator = jsonschema::options()
            .with_retriever(NoRemoteRetrieval)
            .build(schema)
            .map_err(|error| schema_error(schema, &error))?;

        let explicitly_allowed = match root.get("additionalProperties") {
            Some(additional) => !is_false_schema(additional),
            None => root
                .get("unevaluatedProperties")
                .is_some_and(|unevaluated| !is_false_schema(unevaluated)),
        };
        let unknown_keys = if explicitly_allowed {
            UnknownKeys::Allowed
        } else if strict {
            UnknownKeys::Rejected
        } else {
            UnknownKeys::Dropped
        };

        let mut declared = Declared::default();
        declared.collect(schema, schema, 0);
        let pattern_validator = if declared.patterns.is_empty() {
            None
        } else {
            let any_pattern: Vec<Value> = declared
                .patterns
                .iter()
                .map(|pattern| serde_json::json!({ "pattern": pattern }))
                .collect();
            let key_schema = serde_json::json!({ "anyOf": any_pattern });
            let compiled = jsonschema::options()
                .with_draft(jsonschema::Draft::Draft202012)
                .with_retriever(NoRemoteRetrieval)
                .build(&key_schema)
                .map_err(|error| SchemaError::Invalid {
                    pointer: "#".to_owned(),
                    details: format!("a \"patternProperties\" pattern cannot be compiled: {error}"),
                })?;
            Some(compiled)
        };
        let mut sorted_names = declared.names.clone();
        sorted_names.sort_unstable();

        Ok(Self {
            validator,
            unknown_keys,
            names: declared.names,
            sorted_names,
            patterns: declared.patterns,
            pattern_validator,
            schema: schema.clone(),
        })
    }

    /// Checks the `arguments` of a `tools/call` for the tool named `tool` (used in messages).
    ///
    /// `None` (and JSON `null`) mean no arguments, i.e. `{}`. On success the arguments to pass to
    /// the tool are returned: the same value, with unknown names removed in non-strict mode.
    /// Nothing is ever coerced.
    ///
    /// # Errors
    ///
    /// A non-empty, human- and model-readable explanation, one problem per line (at most ten
    /// lines), each naming the offending argument by its JSON pointer path, for example
    /// `argument "items/2": "3" is not of type "integer"`. Arguments that are not a JSON object
    /// give `arguments must be a JSON object, got an array`.
    pub fn check(&self, tool: &str, arguments: Option<Value>) -> Result<Value, String> {
        let mut arguments = match arguments {
            None | Some(Value::Null) => Value::Object(Map::new()),
            Some(object @ Value::Object(_)) => object,
            Some(other) => {
                return Err(format!(
                    "arguments must be a JSON object, got {}",
                    kind_with_article(&other)
                ));
            }
        };

        let mut unknown: Vec<String> = Vec::new();
        if self.unknown_keys != UnknownKeys::Allowed {
            if let Value::Object(map) = &mut arguments {
                if !map.keys().all(|key| self.is_declared(key)) {
                    if self.unknown_keys == UnknownKeys::Dropped {
                        map.retain(|key, _| self.is_declared(key));
                    } else {
                        unknown.extend(map.keys().filter(|key| !self.is_declared(key)).cloned());
                    }
                }
            }
        }

        if unknown.is_empty() && self.validator.is_valid(&arguments) {
            return Ok(arguments);
        }
        Err(self.explain(tool, &arguments, unknown))
    }

    /// Whether `key` is a declared argument name (a listed property or a pattern match).
    fn is_declared(&self, key: &str) -> bool {
        self.sorted_names
            .binary_search_by(|name| name.as_str().cmp(key))
            .is_ok()
            || self
                .pattern_validator
                .as_ref()
                .is_some_and(|patterns| patterns.is_valid(&Value::String(key.to_owned())))
    }

    /// Builds the message for arguments that failed: unknown names first, then everything the
    /// schema validator reports, one line each, capped at [`MAX_LINES`].
    fn explain(&self, tool: &str, arguments: &Value, mut unknown: Vec<String>) -> String {
        let mut lines: Vec<String> = Vec::new();
        let mut problems = 0_usize;
        let mut seen_unknown: HashSet<String> = unknown.iter().cloned().collect();
        for error in self.validator.iter_errors(arguments) {
            if error.instance_path().is_empty() {
                if let ValidationErrorKind::AdditionalProperties { unexpected }
                | ValidationErrorKind::UnevaluatedProperties { unexpected } = error.kind()
                {
                    for key in unexpected {
                        if seen_unknown.insert(key.clone()) {
                            unknown.push(key.clone());
                        }
                    }
                    continue;
                }
            }
            let mut described = Vec::new();
            self.describe(&error, &mut described);
            for line in described {
                if !lines.contains(&line) {
                    problems += 1;
                    if lines.len() < MAX_LINES {
                        lines.push(line);
                    }
                }
            }
            if problems >= MAX_COUNTED_PROBLEMS {
                break;
            }
        }
        if !unknown.is_empty() {
            problems += 1;
            lines.insert(0, self.unknown_message(tool, &unknown));
        }
        if lines.is_empty() {
            return "arguments do not match the tool's inputSchema".to_owned();
        }
        if problems > MAX_LINES {
            lines.truncate(MAX_LINES - 1);
            let hidden = problems - lines.len();
            let more = if problems >= MAX_COUNTED_PROBLEMS {
                "at least "
            } else {
                ""
            };
            lines.push(format!(
                "... and {more}{hidden} more problem{}",
                plural(hidden)
            ));
        }
        lines.join("\n")
    }

    /// `unknown argument "pathh" for tool "count_words": did you mean "path"? Valid arguments: ...`
    fn unknown_message(&self, tool: &str, unknown: &[String]) -> String {
        let tool = quote(tool);
        let mut message = String::from(if unknown.len() == 1 {
            "unknown argument "
        } else {
            "unknown arguments "
        });
        let listed = unknown.len().min(MAX_LISTED_UNKNOWN);
        let single_suggestion = if unknown.len() == 1 {
            nearest(&unknown[0], &self.names)
        } else {
            None
        };
        for (index, key) in unknown[..listed].iter().enumerate() {
            if index > 0 {
                message.push_str(", ");
            }
            message.push_str(&quote(key));
            if unknown.len() > 1 {
                if let Some(suggestion) = nearest(key, &self.names) {
                    let _ = write!(message, " (did you mean {}?)", quote(suggestion));
                }
            }
        }
        if unknown.len() > listed {
            let _ = write!(message, " and {} more", unknown.len() - listed);
        }
        let _ = write!(message, " for tool {tool}");

        if self.names.is_empty() && self.patterns.is_empty() {
            let _ = write!(message, ": tool {tool} takes no arguments");
            return truncate_line(message);
        }
        if let Some(suggestion) = single_suggestion {
            let _ = write!(message, ": did you mean {}?", quote(suggestion));
        } else {
            message.push('.');
        }
        message.push_str(" Valid arguments: ");
        let shown = self.names.len().min(MAX_LISTED_NAMES);
        message.push_str(&self.names[..shown].join(", "));
        if self.names.len() > shown {
            let _ = write!(message, ", ... ({} more)", self.names.len() - shown);
        }
        if !self.patterns.is_empty() {
            if !self.names.is_empty() {
                message.push_str(", or ");
            }
            message.push_str("any name matching ");
            let patterns: Vec<String> = self.patterns.iter().map(|p| quote(p)).collect();
            message.push_str(&patterns.join(" or "));
        }
        truncate_line(message)
    }

    /// Turns one validator error into one or more lines.
    fn describe(&self, error: &ValidationError<'_>, out: &mut Vec<String>) {
        let subject = Subject::Arguments;
        let path = error.instance_path().as_str();
        let value = error.instance();
        let line = match error.kind() {
            ValidationErrorKind::Required { property } if path.is_empty() => {
                format!("missing required argument {}", short(property))
            }
            ValidationErrorKind::AnyOf { context }
            | ValidationErrorKind::OneOfNotValid { context } => {
                self.describe_alternatives(error, context, out);
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
                let allowed = self.sibling_properties(error.schema_path().as_str());
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
        &self,
        error: &ValidationError<'_>,
        context: &[Vec<ValidationError<'static>>],
        out: &mut Vec<String>,
    ) {
        let subject = Subject::Arguments;
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
                    self.describe(e, out);
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
                        self.describe(e, &mut described);
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
    fn sibling_properties(&self, schema_path: &str) -> Vec<String> {
        let Some(parent) = schema_path
            .strip_suffix("/additionalProperties")
            .or_else(|| schema_path.strip_suffix("/unevaluatedProperties"))
        else {
            return Vec::new();
        };
        self.schema
            .pointer(parent)
            .and_then(|parent| parent.get("properties"))
            .and_then(Value::as_object)
            .map(|properties| properties.keys().cloned().collect())
            .unwrap_or_default()
    }
}

/// A retriever that refuses everything: schemas are never fetched.
struct NoRemoteRetrieval;

impl jsonschema::Retrieve for NoRemoteRetrieval {
    fn retrieve(
        &self,
        uri: &jsonschema::Uri<String>,
    ) -> Result<Value, Box<dyn std::error::Error + Send + Sync>> {
        Err(format!("remote schema retrieval is disabled (refused to fetch {uri})").into())
    }
}

/// Requires `"type": "object"` (or `["object"]`) at the root.
fn check_root_type(root: &Map<String, Value>) -> Result<(), SchemaError> {
    match root.get("type") {
        Some(Value::String(t)) if t == "object" => Ok(()),
        Some(Value::Array(types)) if types.len() == 1 && types[0] == "object" => Ok(()),
        Some(other) => Err(SchemaError::RootNotObjectType {
            found: format!("\"type\": {}", short(other)),
        }),
        None => Err(SchemaError::RootNotObjectType {
            found: "no \"type\"".to_owned(),
        }),
    }
}

/// Whether a schema is the `false` schema (a boolean `false`).
fn is_false_schema(schema: &Value) -> bool {
    matches!(schema, Value::Bool(false))
}

/// Keywords whose values are maps from names to subschemas.
const SCHEMA_MAP_KEYWORDS: [&str; 6] = [
    "properties",
    "patternProperties",
    "$defs",
    "definitions",
    "dependentSchemas",
    "dependencies",
];
/// Keywords whose values are data, not schemas.
const DATA_KEYWORDS: [&str; 5] = ["enum", "const", "default", "examples", "required"];
/// Keywords that hold references.
const REF_KEYWORDS: [&str; 3] = ["$ref", "$dynamicRef", "$recursiveRef"];

/// Calls `visit` on every schema object in `schema` with its JSON pointer (skipping data).
fn walk_schemas(
    schema: &Value,
    pointer: &mut String,
    visit: &mut dyn FnMut(&Map<String, Value>, &str),
) {
    match schema {
        Value::Object(map) => {
            visit(map, pointer);
            for (keyword, child) in map {
                if DATA_KEYWORDS.contains(&keyword.as_str()) {
                    continue;
                }
                let len = pointer.len();
                push_pointer_segment(pointer, keyword);
                match child {
                    Value::Object(entries) if SCHEMA_MAP_KEYWORDS.contains(&keyword.as_str()) => {
                        for (name, subschema) in entries {
                            let inner = pointer.len();
                            push_pointer_segment(pointer, name);
                            walk_schemas(subschema, pointer, visit);
                            pointer.truncate(inner);
                        }
                    }
                    _ => walk_schemas(child, pointer, visit),
                }
                pointer.truncate(len);
            }
        }
        Value::Array(items) => {
            for (index, item) in items.iter().enumerate() {
                let len = pointer.len();
                let _ = write!(pointer, "/{index}");
                walk_schemas(item, pointer, visit);
                pointer.truncate(len);
            }
        }
        _ => {}
    }
}

/// Appends `/segment` to a JSON pointer, escaping `~` and `/`.
fn push_pointer_segment(pointer: &mut String, segment: &str) {
    pointer.push('/');
    for c in segment.chars() {
        match c {
            '~' => pointer.push_str("~0"),
            '/' => pointer.push_str("~1"),
            c => pointer.push(c),
        }
    }
}

/// Every `$ref`-like keyword in the schema: (pointer of the reference, reference).
fn references(schema: &Value) -> Vec<(String, String)> {
    let mut found = Vec::new();
    walk_schemas(schema, &mut String::new(), &mut |map, pointer| {
        for keyword in REF_KEYWORDS {
            if let Some(Value::String(reference)) = map.get(keyword) {
                let mut at = pointer.to_owned();
                push_pointer_segment(&mut at, keyword);
                found.push((at, reference.clone()));
            }
        }
    });
    found
}

/// Refuses references to absolute `http`, `https` and `file` URIs that no `$id` in the schema
/// itself declares, before the compiler gets to see them.
fn check_no_remote_refs(schema: &Value) -> Result<(), SchemaError> {
    let refs = references(schema);
    if refs.is_empty() {
        return Ok(());
    }
    let mut ids: Vec<String> = Vec::new();
    walk_schemas(schema, &mut String::new(), &mut |map, _| {
        for keyword in ["$id", "id"] {
            if let Some(Value::String(id)) = map.get(keyword) {
                ids.push(id.trim_end_matches('#').to_owned());
            }
        }
    });
    for (pointer, reference) in refs {
        let base = reference.split('#').next().unwrap_or_default();
        let lower = base.to_ascii_lowercase();
        let remote_scheme = ["http:", "https:", "file:"]
            .iter()
            .any(|scheme| lower.starts_with(scheme));
        if !remote_scheme {
            continue;
        }
        let declared_here = ids.iter().any(|id| {
            !id.is_empty()
                && (id == base || base.ends_with(&format!("/{}", id.trim_start_matches("./"))))
        });
        if !declared_here {
            return Err(SchemaError::RemoteRef {
                reference,
                pointer: fragment(&pointer),
            });
        }
    }
    Ok(())
}

/// Maps a compile error from the schema validator to a [`SchemaError`].
fn schema_error(schema: &Value, error: &ValidationError<'_>) -> SchemaError {
    if let ValidationErrorKind::Referencing(reference_error) = error.kind() {
        return referencing_error(schema, reference_error);
    }
    let mut lines = Vec::new();
    describe_schema_error(error, error.instance_path().as_str(), &mut lines);
    SchemaError::Invalid {
        pointer: fragment(error.instance_path().as_str()),
        details: lines.join("; "),
    }
}

/// Describes a meta-schema violation with the same wording as argument errors. The location is
/// left out where it is `top` (the pointer the message already names). For `anyOf` failures the
/// alternative that is not a bare type mismatch is the informative one.
fn describe_schema_error(error: &ValidationError<'_>, top: &str, out: &mut Vec<String>) {
    if let ValidationErrorKind::AnyOf { context } | ValidationErrorKind::OneOfNotValid { context } =
        error.kind()
    {
        let best = context
            .iter()
            .find(|alternative| {
                alternative
                    .iter()
                    .any(|e| !matches!(e.kind(), ValidationErrorKind::Type { .. }))
            })
            .or_else(|| context.first());
        if let Some(inner) = best.and_then(|alternative| alternative.first()) {
            describe_schema_error(inner, top, out);
            return;
        }
    }
    let path = error.instance_path().as_str();
    let reason = reason(error.kind(), error.instance());
    out.push(truncate_line(if path == top {
        reason
    } else {
        format!("{}: {reason}", subject_name(path, Subject::Schema))
    }));
}

/// Maps a reference-resolution failure at compile time to a [`SchemaError`].
fn referencing_error(schema: &Value, error: &ReferencingError) -> SchemaError {
    match error {
        ReferencingError::Unretrievable { uri, .. } => {
            let located = locate_reference(schema, uri);
            let (pointer, reference) = located.unwrap_or_else(|| ("#".to_owned(), uri.clone()));
            SchemaError::RemoteRef { reference, pointer }
        }
        ReferencingError::UnknownSpecification { specification } => SchemaError::UnknownDialect {
            uri: specification.clone(),
        },
        ReferencingError::CircularMetaschema { uri } => {
            SchemaError::UnknownDialect { uri: uri.clone() }
        }
        ReferencingError::PointerToNowhere { pointer } => {
            let wanted = format!("#{pointer}");
            SchemaError::UnresolvedRef {
                pointer: locate_reference(schema, &wanted)
                    .map_or_else(|| "#".to_owned(), |(at, _)| at),
                reason: format!("{wanted} does not exist in the schema"),
            }
        }
        ReferencingError::NoSuchAnchor { anchor } | ReferencingError::InvalidAnchor { anchor } => {
            let wanted = format!("#{anchor}");
            SchemaError::UnresolvedRef {
                pointer: locate_reference(schema, &wanted)
                    .map_or_else(|| "#".to_owned(), |(at, _)| at),
                reason: error.to_string(),
            }
        }
        other => SchemaError::UnresolvedRef {
            pointer: "#".to_owned(),
            reason: other.to_string(),
        },
    }
}

/// Finds the `$ref` that produced `uri`: (pointer in fragment form, reference as written).
fn locate_reference(schema: &Value, uri: &str) -> Option<(String, String)> {
    let uri_base = uri.split('#').next().unwrap_or_default();
    let refs = references(schema);
    let exact = refs.iter().find(|(_, reference)| reference == uri);
    let by_base = || {
        refs.iter().find(|(_, reference)| {
            let base = reference.split('#').next().unwrap_or_default();
            !base.is_empty() && (base == uri_base || uri_base.ends_with(base))
        })
    };
    let by_fragment = || {
        refs.iter()
            .find(|(_, reference)| reference.ends_with(uri) && uri.starts_with('#'))
    };
    exact
        .or_else(by_base)
        .or_else(by_fragment)
        .map(|(pointer, reference)| (fragment(pointer), reference.clone()))
}

/// A JSON pointer in URI-fragment form for messages: `""` → `#`, `/a/b` → `#/a/b`.
fn fragment(pointer: &str) -> String {
    format!("#{pointer}")
}

/// Names collected from the schema: properties and patterns, in schema order.
#[derive(Default)]
struct Declared {
    names: Vec<String>,
    patterns: Vec<String>,
    seen_refs: HashSet<String>,
}

impl Declared {
    /// Collects names from `schema` and its in-place applicators (bounded, cycle-safe).
    fn collect(&mut self, root: &Value, schema: &Value, depth: usize) {
        let Value::Object(map) = schema else {
            return;
        };
        if depth > MAX_NAME_DEPTH {
            return;
        }
        if let Some(Value::Object(properties)) = map.get("properties") {
            for name in properties.keys() {
                if !self.names.contains(name) {
                    self.names.push(name.clone());
                }
            }
        }
        if let Some(Value::Object(patterns)) = map.get("patternProperties") {
            for pattern in patterns.keys() {
                if !self.patterns.contains(pattern) {
                    self.patterns.push(pattern.clone());
                }
            }
        }
        for keyword in ["allOf", "anyOf", "oneOf"] {
            if let Some(Value::Array(subschemas)) = map.get(keyword) {
                for subschema in subschemas {
                    self.collect(root, subschema, depth + 1);
                }
            }
        }
        for keyword in ["if", "then", "else"] {
            if let Some(subschema) = map.get(keyword) {
                self.collect(root, subschema, depth + 1);
            }
        }
        if let Some(Value::Object(dependent)) = map.get("dependentSchemas") {
            for subschema in dependent.values() {
                self.collect(root, subschema, depth + 1);
            }
        }
        for keyword in REF_KEYWORDS {
            if let Some(Value::String(reference)) = map.get(keyword) {
                if let Some(target) = resolve_local(root, reference) {
                    if self.seen_refs.insert(reference.clone()) {
                        self.collect(root, target, depth + 1);
                    }
                }
            }
        }
    }
}

/// Resolves `#/json/pointer` and `#anchor` references inside the root document.
fn resolve_local<'a>(root: &'a Value, reference: &str) -> Option<&'a Value> {
    let fragment = reference.strip_prefix('#')?;
    if fragment.is_empty() {
        return Some(root);
    }
    if fragment.starts_with('/') {
        return root.pointer(&percent_decode(fragment));
    }
    let mut found = None;
    walk_schemas(root, &mut String::new(), &mut |map, pointer| {
        if found.is_none()
            && ["$anchor", "$dynamicAnchor"]
                .iter()
                .any(|k| map.get(*k).and_then(Value::as_str) == Some(fragment))
        {
            found = Some(pointer.to_owned());
        }
    });
    found.and_then(|pointer| root.pointer(&pointer))
}

/// Decodes `%XX` escapes in a URI fragment (invalid escapes are kept as written).
fn percent_decode(text: &str) -> String {
    if !text.contains('%') {
        return text.to_owned();
    }
    let bytes = text.as_bytes();
    let mut decoded = Vec::with_capacity(bytes.len());
    let mut index = 0;
    while index < bytes.len() {
        if bytes[index] == b'%' && index + 2 < bytes.len() {
            let hex = std::str::from_utf8(&bytes[index + 1..index + 3]).ok();
            if let Some(byte) = hex.and_then(|h| u8::from_str_radix(h, 16).ok()) {
                decoded.push(byte);
                index += 3;
                continue;
            }
        }
        decoded.push(bytes[index]);
        index += 1;
    }
    String::from_utf8(decoded).unwrap_or_else(|_| text.to_owned())
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
fn reason(kind: &ValidationErrorKind, value: &Value) -> String {
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

/// The types of a `type` error, in a stable order.
fn type_kinds(kind: &TypeKind) -> Vec<JsonType> {
    match kind {
        TypeKind::Single(t) => vec![*t],
        TypeKind::Multiple(types) => types.iter().collect(),
    }
}

/// `"a"`, `"a" or "b"`, `"a", "b" or "c"`.
fn type_list(types: &[JsonType]) -> String {
    let quoted: Vec<String> = types.iter().map(|t| quote(t.as_str())).collect();
    or_list(&quoted)
}

/// The options of an `enum`, rendered like [`or_list`] (at most ten).
fn value_list(options: &Value) -> String {
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
fn or_list(items: &[String]) -> String {
    match items {
        [] => String::new(),
        [only] => only.clone(),
        [init @ .., last] => format!("{} or {last}", init.join(", ")),
    }
}

/// `"a"`, `"a", "b"` (each JSON-quoted and shortened).
fn quote_list(items: &[String]) -> String {
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

/// `argument "a/b"` for argument paths, `#/a/b` for schema paths.
fn subject_name(path: &str, subject: Subject) -> String {
    match subject {
        Subject::Arguments if path.is_empty() => "arguments".to_owned(),
        Subject::Arguments => format!("argument {}", quote(path.strip_prefix('/').unwrap_or(path))),
        Subject::Schema => fragment(path),
    }
}

/// A JSON string literal for `text`, shortened to [`MAX_VALUE_CHARS`] characters.
fn quote(text: &str) -> String {
    short(&Value::String(text.to_owned()))
}

/// Compact JSON for a value, shortened to about [`MAX_VALUE_CHARS`] characters.
fn short(value: &Value) -> String {
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
fn truncate_line(line: String) -> String {
    if line.chars().count() <= MAX_LINE_CHARS {
        return line;
    }
    let mut cut: String = line.chars().take(MAX_LINE_CHARS - 1).collect();
    cut.push('…');
    cut
}

/// Length of a string value in characters (code points, as JSON Schema counts them).
fn char_len(value: &Value) -> usize {
    value.as_str().map_or(0, |text| text.chars().count())
}

/// `"s"` unless `count` is one.
fn plural(count: usize) -> &'static str {
    if count == 1 { "" } else { "s" }
}

/// "an array", "a string", ... for messages about the wrong kind of JSON value.
fn kind_with_article(value: &Value) -> &'static str {
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

    #[test]
    fn short_values_are_cut_on_character_boundaries() {
        let long = "é".repeat(200);
        let rendered = short(&Value::String(long));
        assert!(rendered.starts_with('"') && rendered.ends_with("…\""));
        assert!(rendered.chars().count() < MAX_VALUE_CHARS + 5);
    }

    #[test]
    fn percent_decoding_keeps_invalid_escapes() {
        assert_eq!(percent_decode("/$defs/a%20b"), "/$defs/a b");
        assert_eq!(percent_decode("/a%zz"), "/a%zz");
        assert_eq!(percent_decode("/a%2"), "/a%2");
    }
}
