//! `enum` (Python `Literal[...]`/`Enum`) and `const` violations say what is allowed.

use mcpline_core::ArgumentValidator;
use serde_json::json;

#[test]
fn enum_violation_lists_the_allowed_values() {
    let schema = json!({
        "type": "object",
        "properties": {"mode": {"enum": ["read", "write", "append"]}}
    });
    let validator = ArgumentValidator::new(&schema, true).unwrap();
    assert_eq!(
        validator.check("t", Some(json!({"mode": "delete"}))),
        Err(r#"argument "mode": "delete" is not one of "read", "write" or "append""#.to_owned())
    );
    let args = json!({"mode": "write"});
    assert_eq!(validator.check("t", Some(args.clone())), Ok(args));
}

#[test]
fn enum_values_are_compared_without_coercion() {
    let schema = json!({"type": "object", "properties": {"level": {"enum": [1, 2, 3]}}});
    let validator = ArgumentValidator::new(&schema, true).unwrap();
    assert_eq!(
        validator.check("t", Some(json!({"level": "1"}))),
        Err(r#"argument "level": "1" is not one of 1, 2 or 3"#.to_owned())
    );
}

#[test]
fn const_violation_names_the_expected_value() {
    let schema = json!({"type": "object", "properties": {"kind": {"const": "file"}}});
    let validator = ArgumentValidator::new(&schema, true).unwrap();
    assert_eq!(
        validator.check("t", Some(json!({"kind": "dir"}))),
        Err(r#"argument "kind": expected "file", got "dir""#.to_owned())
    );
}

#[test]
fn long_enums_are_summarised() {
    let options: Vec<String> = (0..25).map(|i| format!("v{i}")).collect();
    let schema = json!({"type": "object", "properties": {"v": {"enum": options}}});
    let validator = ArgumentValidator::new(&schema, true).unwrap();
    let message = validator.check("t", Some(json!({"v": "x"}))).unwrap_err();
    assert!(message.ends_with(r#""v9" or 15 other values"#), "{message}");
}
