//! Errors inside nested objects and arrays name the JSON pointer path of the offending value.

use mcpline_core::ArgumentValidator;
use serde_json::json;

fn validator() -> ArgumentValidator {
    let schema = json!({
        "type": "object",
        "properties": {
            "items": {"type": "array", "items": {"type": "integer"}},
            "options": {
                "type": "object",
                "properties": {
                    "depth": {"type": "integer", "minimum": 1},
                    "tags": {"type": "array", "items": {"type": "string"}, "maxItems": 2}
                },
                "required": ["depth"],
                "additionalProperties": false
            }
        }
    });
    ArgumentValidator::new(&schema, true).unwrap()
}

#[test]
fn an_array_item_is_named_by_its_index() {
    assert_eq!(
        validator().check("t", Some(json!({"items": [1, 2, "3"]}))),
        Err(r#"argument "items/2": "3" is not of type "integer""#.to_owned())
    );
}

#[test]
fn nested_object_problems_name_their_path() {
    let message = validator()
        .check(
            "t",
            Some(json!({"options": {"depth": 0, "tags": ["a", 2, "c"], "dept": 1}})),
        )
        .unwrap_err();
    let lines: Vec<&str> = message.lines().collect();
    assert!(
        lines.contains(&r#"argument "options/depth": 0 is less than the minimum of 1"#),
        "{message}"
    );
    assert!(
        lines.contains(&r#"argument "options/tags/1": 2 is not of type "string""#),
        "{message}"
    );
    assert!(
        lines.contains(&r#"argument "options/tags": has 3 items, more than the maximum of 2"#),
        "{message}"
    );
    assert!(
        lines.contains(
            &r#"argument "options": unexpected property "dept": did you mean "depth"? Allowed properties: depth, tags"#
        ),
        "{message}"
    );
}

#[test]
fn a_missing_nested_property_names_its_parent() {
    assert_eq!(
        validator().check("t", Some(json!({"options": {}}))),
        Err(r#"argument "options": missing required property "depth""#.to_owned())
    );
}

#[test]
fn keys_with_slashes_are_escaped_in_the_path() {
    let schema = json!({
        "type": "object",
        "properties": {"m": {"type": "object", "additionalProperties": {"type": "integer"}}}
    });
    let validator = ArgumentValidator::new(&schema, true).unwrap();
    assert_eq!(
        validator.check("t", Some(json!({"m": {"a/b": "x"}}))),
        Err(r#"argument "m/a~1b": "x" is not of type "integer""#.to_owned())
    );
}
