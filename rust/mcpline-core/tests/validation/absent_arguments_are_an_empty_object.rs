//! Absent `arguments` (and JSON `null`) mean `{}`.

use mcpline_core::ArgumentValidator;
use serde_json::{Value, json};

#[test]
fn absent_arguments_validate_as_an_empty_object() {
    let optional = json!({"type": "object", "properties": {"limit": {"type": "integer"}}});
    let validator = ArgumentValidator::new(&optional, true).unwrap();
    assert_eq!(validator.check("t", None), Ok(json!({})));
    assert_eq!(validator.check("t", Some(Value::Null)), Ok(json!({})));
}

#[test]
fn absent_arguments_still_miss_required_ones() {
    let required = json!({
        "type": "object",
        "properties": {"path": {"type": "string"}},
        "required": ["path"]
    });
    let validator = ArgumentValidator::new(&required, true).unwrap();
    let expected = Err(r#"missing required argument "path""#.to_owned());
    assert_eq!(validator.check("t", None), expected);
    assert_eq!(validator.check("t", Some(json!({}))), expected);
}
