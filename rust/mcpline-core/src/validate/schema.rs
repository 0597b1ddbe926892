//! What is wrong with a schema the validator cannot use: the translation of compile and
//! meta-schema errors into [`SchemaError`]s that say where and how to fix it.

use jsonschema::error::ValidationErrorKind;
use jsonschema::{ReferencingError, ValidationError};
use serde_json::Value;

use super::error::SchemaError;
use super::messages::reason;
use super::refs::locate_reference;
use super::render::{Subject, fragment, subject_name, truncate_line};

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
