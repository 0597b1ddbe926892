//! A schema that is not an object schema, or that breaks its meta-schema, is refused at build
//! time with the location of the problem and how to fix it.

use mcpline_core::{ArgumentValidator, SchemaError};
use serde_json::json;

#[test]
fn the_schema_must_be_an_object() {
    assert_eq!(
        ArgumentValidator::new(&json!(true), true).unwrap_err(),
        SchemaError::NotAnObject { found: "a boolean" }
    );
}

#[test]
fn the_root_must_say_type_object() {
    let error = ArgumentValidator::new(&json!({"properties": {}}), true).unwrap_err();
    assert!(
        matches!(error, SchemaError::RootNotObjectType { .. }),
        "{error:?}"
    );
    assert!(
        error.to_string().contains(r#"set "type": "object""#),
        "{error}"
    );
    let error = ArgumentValidator::new(&json!({"type": "array"}), true).unwrap_err();
    assert!(
        error.to_string().contains(r#"found "type": "array""#),
        "{error}"
    );
}

#[test]
fn a_misspelt_type_is_located() {
    let schema = json!({"type": "object", "properties": {"a": {"type": "strng"}}});
    let error = ArgumentValidator::new(&schema, true).unwrap_err();
    let SchemaError::Invalid { pointer, details } = &error else {
        panic!("{error:?}");
    };
    assert_eq!(pointer, "#/properties/a/type");
    assert!(
        details.starts_with(r#""strng" is not one of "array""#),
        "{details}"
    );
}

#[test]
fn a_bad_regex_is_located() {
    let schema = json!({"type": "object", "properties": {"a": {"pattern": "(open"}}});
    let error = ArgumentValidator::new(&schema, true).unwrap_err();
    assert!(
        matches!(&error, SchemaError::Invalid { pointer, .. } if pointer == "#/properties/a/pattern"),
        "{error:?}"
    );
}
