//! A `$ref` to another document (http, https, file or relative) is refused when the validator
//! is built; nothing is ever fetched.

use mcpline_core::{ArgumentValidator, SchemaError};
use serde_json::json;

fn schema_with_ref(reference: &str) -> serde_json::Value {
    json!({
        "type": "object",
        "properties": {"config": {"$ref": reference}}
    })
}

#[test]
fn http_https_and_file_refs_are_rejected_with_their_location() {
    for reference in [
        "http://example.com/config.json",
        "https://example.com/schemas/config.json#/$defs/Config",
        "file:///etc/schemas/config.json",
    ] {
        let error = ArgumentValidator::new(&schema_with_ref(reference), true).unwrap_err();
        assert_eq!(
            error,
            SchemaError::RemoteRef {
                reference: reference.to_owned(),
                pointer: "#/properties/config/$ref".to_owned(),
            }
        );
        let message = error.to_string();
        assert!(message.contains(reference), "{message}");
        assert!(message.contains("#/properties/config/$ref"), "{message}");
        assert!(message.contains("remote $ref"), "{message}");
        assert!(message.contains("$defs"), "{message}");
    }
}

#[test]
fn relative_refs_to_other_documents_are_rejected() {
    let error = ArgumentValidator::new(&schema_with_ref("config.json#/Config"), true).unwrap_err();
    assert!(
        matches!(&error, SchemaError::RemoteRef { pointer, .. } if pointer == "#/properties/config/$ref"),
        "{error:?}"
    );
}

#[test]
fn a_ref_to_the_schemas_own_id_is_local() {
    let schema = json!({
        "$id": "https://example.com/tools/read.json",
        "type": "object",
        "properties": {"config": {"$ref": "https://example.com/tools/read.json#/$defs/Config"}},
        "$defs": {"Config": {"type": "string"}}
    });
    let validator = ArgumentValidator::new(&schema, true).unwrap();
    assert!(validator.check("t", Some(json!({"config": "x"}))).is_ok());
    assert!(validator.check("t", Some(json!({"config": 1}))).is_err());
}

#[test]
fn an_unknown_meta_schema_is_not_fetched_either() {
    let schema = json!({"$schema": "https://example.com/my-dialect", "type": "object"});
    assert_eq!(
        ArgumentValidator::new(&schema, true).unwrap_err(),
        SchemaError::UnknownDialect {
            uri: "https://example.com/my-dialect".to_owned()
        }
    );
}
