//! A tool schema with its validator: checked when the tool is registered, compiled then only
//! when compiling could find what the check does not, else when it is first used.
//!
//! Compiling a validator costs about 0.1 ms and touches a good part of the validator's code,
//! which then stays resident: paid at registration for every tool, a server of fifty tools
//! took 5 ms longer to answer `initialize` and held more memory for tools never called. Most
//! schemas (those written for plain parameters: types, properties, `required`, `enum`, bounds)
//! can only be refused for breaking their meta-schema, which a cheaper check finds at
//! registration. The rest (references, patterns, formats, identifiers, dialects) are compiled
//! at once, so that every schema a tool can never use is still refused when it is registered.

use std::sync::OnceLock;

use jsonschema::Validator;
use serde_json::{Map, Value};

use super::error::SchemaError;
use super::refs::{NoRemoteRetrieval, check_no_remote_refs};
use super::render::{kind_with_article, short};
use super::schema::schema_error;

/// Keywords only compiling checks fully: where a reference leads, whether a pattern is a
/// regular expression, which dialect or format is meant, what an identifier names.
const CHECKED_BY_COMPILING: [&str; 12] = [
    "$ref",
    "$dynamicRef",
    "$recursiveRef",
    "$schema",
    "$id",
    "$anchor",
    "$dynamicAnchor",
    "$recursiveAnchor",
    "$vocabulary",
    "pattern",
    "patternProperties",
    "format",
];

/// A tool's object schema (an `inputSchema` or `outputSchema`) and its validator, compiled
/// once: at registration, or on first use when nothing but the meta-schema can refuse it.
pub(super) struct Compiled {
    schema: Value,
    validator: OnceLock<Result<Validator, SchemaError>>,
}

impl Compiled {
    /// Checks a tool's object schema: its root must be `{"type": "object", ...}`, it may refer
    /// only to itself and it must conform to its meta-schema. Returns the root object too.
    pub(super) fn new(schema: &Value) -> Result<(Self, &Map<String, Value>), SchemaError> {
        let Value::Object(root) = schema else {
            return Err(SchemaError::NotAnObject {
                found: kind_with_article(schema),
            });
        };
        check_root_type(root)?;
        let validator = OnceLock::new();
        if checked_by_compiling(schema) {
            check_no_remote_refs(schema)?;
            let _ = validator.set(Ok(build(schema)?));
        } else {
            jsonschema::meta::validate(schema).map_err(|error| schema_error(schema, &error))?;
        }
        let compiled = Self {
            schema: schema.clone(),
            validator,
        };
        Ok((compiled, root))
    }

    /// The schema as given.
    pub(super) const fn schema(&self) -> &Value {
        &self.schema
    }

    /// The validator, compiled now if it was not yet. It fails only if the validator refuses
    /// a schema that conforms to its meta-schema and has none of [`CHECKED_BY_COMPILING`].
    pub(super) fn validator(&self) -> Result<&Validator, &SchemaError> {
        self.validator.get_or_init(|| build(&self.schema)).as_ref()
    }

    /// Whether the validator is compiled.
    #[cfg(test)]
    fn is_compiled(&self) -> bool {
        self.validator.get().is_some()
    }
}

/// Compiles a checked schema; schemas are never fetched.
fn build(schema: &Value) -> Result<Validator, SchemaError> {
    jsonschema::options()
        .with_retriever(NoRemoteRetrieval)
        .build(schema)
        .map_err(|error| schema_error(schema, &error))
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

/// Whether any object in the schema has one of [`CHECKED_BY_COMPILING`] as a key (a property
/// of that name counts too: the check errs on the side of compiling).
fn checked_by_compiling(value: &Value) -> bool {
    match value {
        Value::Object(map) => map.iter().any(|(key, child)| {
            CHECKED_BY_COMPILING.contains(&key.as_str()) || checked_by_compiling(child)
        }),
        Value::Array(items) => items.iter().any(checked_by_compiling),
        _ => false,
    }
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::Compiled;

    #[test]
    fn a_schema_only_its_meta_schema_can_refuse_is_compiled_on_first_use() {
        let schema = json!({
            "type": "object",
            "properties": {"a": {"type": "integer", "minimum": 0}, "b": {"enum": ["x", "y"]}},
            "required": ["a"]
        });
        let (compiled, _) = Compiled::new(&schema).unwrap();
        assert!(!compiled.is_compiled());
        let validator = compiled.validator().unwrap();
        assert!(validator.is_valid(&json!({"a": 1})));
        assert!(!validator.is_valid(&json!({"a": -1})));
        assert!(compiled.is_compiled());
    }

    #[test]
    fn a_schema_with_references_or_patterns_is_compiled_at_once() {
        for schema in [
            json!({"type": "object", "properties": {"a": {"$ref": "#/$defs/n"}}, "$defs": {"n": {}}}),
            json!({"type": "object", "properties": {"a": {"type": "string", "pattern": "^x"}}}),
            json!({"type": "object", "patternProperties": {"^x": {}}}),
            json!({"type": "object", "properties": {"a": {"type": "string", "format": "date"}}}),
        ] {
            assert!(Compiled::new(&schema).unwrap().0.is_compiled(), "{schema}");
        }
    }

    #[test]
    fn a_lazily_compiled_schema_is_still_refused_at_once_when_it_breaks_its_meta_schema() {
        let schema = json!({"type": "object", "properties": {"a": {"type": "integr"}}});
        let error = Compiled::new(&schema).err().unwrap().to_string();
        assert!(error.contains("#/properties/a"), "{error}");
    }
}
