//! A tool's structured result is checked against its `outputSchema` with the argument
//! validator's wording ([`mcpline_core::ResultValidator`]).

use mcpline_core::ResultValidator;
use serde_json::json;

fn wrapped(inner: serde_json::Value) -> serde_json::Value {
    json!({"type": "object", "properties": {"result": inner}, "required": ["result"]})
}

#[test]
fn a_matching_result_passes() {
    let validator = ResultValidator::new(&wrapped(json!({"type": "integer"}))).unwrap();
    assert_eq!(validator.check(Some(&json!({"result": 3}))), Ok(()));
}

#[test]
fn a_wrapped_result_is_named_without_its_wrapper() {
    let schema = wrapped(json!({"type": "array", "items": {"type": "integer"}}));
    let validator = ResultValidator::new(&schema).unwrap();
    assert_eq!(
        validator.check(Some(&json!({"result": "x"}))),
        Err(r#"result: "x" is not of type "array""#.to_owned())
    );
    assert_eq!(
        validator.check(Some(&json!({"result": [1, "two"]}))),
        Err(r#"result "1": "two" is not of type "integer""#.to_owned())
    );
}

#[test]
fn an_object_result_names_its_fields() {
    let schema = json!({
        "type": "object",
        "properties": {"x": {"type": "integer"}},
        "required": ["x"],
        "additionalProperties": false
    });
    let validator = ResultValidator::new(&schema).unwrap();
    assert_eq!(
        validator.check(Some(&json!({"x": "1"}))),
        Err(r#"result "x": "1" is not of type "integer""#.to_owned())
    );
    assert_eq!(
        validator.check(Some(&json!({}))),
        Err(r#"result: missing required property "x""#.to_owned())
    );
}

#[test]
fn a_result_without_structured_content_is_refused() {
    let validator = ResultValidator::new(&wrapped(json!({"type": "integer"}))).unwrap();
    assert_eq!(
        validator.check(None),
        Err("the tool returned content without a structured result".to_owned())
    );
}

#[test]
fn an_output_schema_that_is_not_an_object_schema_is_refused() {
    assert!(ResultValidator::new(&json!({"type": "integer"})).is_err());
}
