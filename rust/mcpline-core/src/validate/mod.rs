//! Validation of `tools/call` arguments against a tool's `inputSchema`.
//!
//! An [`ArgumentValidator`] is built once per tool at registration (its schema checked then,
//! compiled then or on the first call, see `compiled`) and then used on every `tools/call`
//! before the Python tool runs. It checks the arguments with a complete
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

use jsonschema::Validator;
use jsonschema::error::ValidationErrorKind;
use serde_json::{Map, Value};

mod compiled;
mod error;
mod limits;
mod messages;
mod names;
mod refs;
mod render;
mod result;
mod schema;

use compiled::Compiled;
pub use error::SchemaError;
use messages::{Problems, unknown_message};
use names::Declared;
use refs::NoRemoteRetrieval;
use render::{Subject, kind_with_article};
pub use result::ResultValidator;

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
    /// The schema and its validator.
    compiled: Compiled,
    unknown_keys: UnknownKeys,
    /// Declared argument names in schema order (for messages and suggestions).
    names: Vec<String>,
    /// The same names, sorted (for lookup on the hot path).
    sorted_names: Vec<String>,
    /// `patternProperties` patterns that also declare names (for messages).
    patterns: Vec<String>,
    /// Matches a key against `patterns` (same regex dialect as the schema validator).
    pattern_validator: Option<Validator>,
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
        let (compiled, root) = Compiled::new(schema)?;

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
            compiled,
            unknown_keys,
            names: declared.names,
            sorted_names,
            patterns: declared.patterns,
            pattern_validator,
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

        let validator = self
            .compiled
            .validator()
            .map_err(|error| format!("the tool's inputSchema cannot be used: {error}"))?;
        if unknown.is_empty() && validator.is_valid(&arguments) {
            return Ok(arguments);
        }
        Err(self.explain(validator, tool, &arguments, unknown))
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
    fn explain(
        &self,
        validator: &Validator,
        tool: &str,
        arguments: &Value,
        mut unknown: Vec<String>,
    ) -> String {
        let mut seen_unknown: HashSet<String> = unknown.iter().cloned().collect();
        let errors = validator.iter_errors(arguments).filter(|error| {
            if error.instance_path().is_empty() {
                if let ValidationErrorKind::AdditionalProperties { unexpected }
                | ValidationErrorKind::UnevaluatedProperties { unexpected } = error.kind()
                {
                    for key in unexpected {
                        if seen_unknown.insert(key.clone()) {
                            unknown.push(key.clone());
                        }
                    }
                    return false;
                }
            }
            true
        });
        let mut problems = Problems::collect(self.compiled.schema(), Subject::Arguments, errors);
        if !unknown.is_empty() {
            problems.put_first(unknown_message(tool, &unknown, &self.names, &self.patterns));
        }
        problems
            .into_message()
            .unwrap_or_else(|| "arguments do not match the tool's inputSchema".to_owned())
    }
}

/// Whether a schema is the `false` schema (a boolean `false`).
fn is_false_schema(schema: &Value) -> bool {
    matches!(schema, Value::Bool(false))
}
