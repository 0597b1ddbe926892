//! Local references (`#/$defs/...`, draft-07 `#/definitions/...`, recursive ones) work; a local
//! reference that leads nowhere is a schema error with its location.

use mcpline_core::{ArgumentValidator, SchemaError};
use serde_json::json;

#[test]
fn defs_refs_validate_the_referenced_schema() {
    let schema = json!({
        "type": "object",
        "properties": {"point": {"$ref": "#/$defs/Point"}},
        "required": ["point"],
        "$defs": {
            "Point": {
                "type": "object",
                "properties": {"x": {"type": "number"}, "y": {"type": "number"}},
                "required": ["x", "y"]
            }
        }
    });
    let validator = ArgumentValidator::new(&schema, true).unwrap();
    let args = json!({"point": {"x": 1, "y": 2.5}});
    assert_eq!(validator.check("t", Some(args.clone())), Ok(args));
    assert_eq!(
        validator.check("t", Some(json!({"point": {"x": 1, "y": "2"}}))),
        Err(r#"argument "point/y": "2" is not of type "number""#.to_owned())
    );
}

#[test]
fn recursive_refs_work() {
    let schema = json!({
        "type": "object",
        "properties": {"tree": {"$ref": "#/$defs/Node"}},
        "$defs": {
            "Node": {
                "type": "object",
                "properties": {
                    "name": {"type": "string"},
                    "children": {"type": "array", "items": {"$ref": "#/$defs/Node"}}
                }
            }
        }
    });
    let validator = ArgumentValidator::new(&schema, true).unwrap();
    let args = json!({"tree": {"name": "a", "children": [{"name": "b", "children": []}]}});
    assert_eq!(validator.check("t", Some(args.clone())), Ok(args));
    assert_eq!(
        validator.check("t", Some(json!({"tree": {"children": [{"name": 1}]}}))),
        Err(r#"argument "tree/children/0/name": 1 is not of type "string""#.to_owned())
    );
}

#[test]
fn draft_07_definitions_work_when_the_schema_says_so() {
    let schema = json!({
        "$schema": "http://json-schema.org/draft-07/schema#",
        "type": "object",
        "properties": {"n": {"$ref": "#/definitions/N"}},
        "definitions": {"N": {"type": "integer"}}
    });
    let validator = ArgumentValidator::new(&schema, true).unwrap();
    assert!(validator.check("t", Some(json!({"n": 1}))).is_ok());
    assert!(validator.check("t", Some(json!({"n": "1"}))).is_err());
}

#[test]
fn a_dangling_local_ref_is_a_schema_error() {
    let schema = json!({
        "type": "object",
        "properties": {"point": {"$ref": "#/$defs/Missing"}}
    });
    let error = ArgumentValidator::new(&schema, true).unwrap_err();
    assert!(
        matches!(&error, SchemaError::UnresolvedRef { pointer, .. } if pointer == "#/properties/point/$ref"),
        "{error:?}"
    );
    assert!(error.to_string().contains("#/$defs/Missing"), "{error}");
}
