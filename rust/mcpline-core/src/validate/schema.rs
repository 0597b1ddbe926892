//! What is wrong with a schema the validator cannot use: the root type check and the
//! translation of compile errors into [`SchemaError`]s that say where and how to fix it.

use jsonschema::error::ValidationErrorKind;
use jsonschema::{ReferencingError, ValidationError, Validator};
use serde_json::{Map, Value};

use super::error::SchemaError;
use super::messages::reason;
use super::refs::{NoRemoteRetrieval, check_no_remote_refs, locate_reference};
use super::render::{Subject, fragment, kind_with_article, short, subject_name, truncate_line};

/// Compiles a tool's object schema (an `inputSchema` or `outputSchema`): its root must be
/// `{"type": "object", ...}` and it may refer only to itself. Returns the root object too.
pub(super) fn compile(schema: &Value) -> Result<(&Map<String, Value>, Validator), SchemaError> {
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
    Ok((root, validator))
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

/// Maps a compile error from the schema validator to a [`SchemaError`].
pub(super) fn schema_error(schema: &Value, error: &ValidationError<'_>) -> SchemaError {
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
