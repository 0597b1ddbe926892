//! A missing required argument is reported by name, every one of them.

use mcpline_core::ArgumentValidator;
use serde_json::json;

#[test]
fn each_missing_required_argument_gets_a_line() {
    let schema = json!({
        "type": "object",
        "properties": {"path": {"type": "string"}, "mode": {"type": "string"}},
        "required": ["path", "mode"]
    });
    let validator = ArgumentValidator::new(&schema, true).unwrap();
    assert_eq!(
        validator.check("t", Some(json!({"mode": "r"}))),
        Err(r#"missing required argument "path""#.to_owned())
    );
    assert_eq!(
        validator.check("t", Some(json!({}))),
        Err("missing required argument \"path\"\nmissing required argument \"mode\"".to_owned())
    );
}

#[test]
fn a_null_value_does_not_satisfy_a_required_string() {
    let schema = json!({
        "type": "object",
        "properties": {"path": {"type": "string"}},
        "required": ["path"]
    });
    let validator = ArgumentValidator::new(&schema, true).unwrap();
    assert_eq!(
        validator.check("t", Some(json!({"path": null}))),
        Err(r#"argument "path": null is not of type "string""#.to_owned())
    );
}
