//! `T | None` is `anyOf: [T, {"type": "null"}]`: null is accepted, other values get a message
//! that explains the real alternative.

use mcpline_core::ArgumentValidator;
use serde_json::json;

fn validator() -> ArgumentValidator {
    let schema = json!({
        "type": "object",
        "properties": {
            "limit": {"anyOf": [{"type": "integer"}, {"type": "null"}], "default": null},
            "mode": {"anyOf": [{"enum": ["fast", "slow"]}, {"type": "null"}]},
            "filter": {"anyOf": [{"$ref": "#/$defs/Filter"}, {"type": "null"}]}
        },
        "$defs": {
            "Filter": {
                "type": "object",
                "properties": {"glob": {"type": "string"}},
                "required": ["glob"]
            }
        }
    });
    ArgumentValidator::new(&schema, true).unwrap()
}

#[test]
fn null_is_accepted_for_optional_values() {
    let args = json!({"limit": null, "mode": null, "filter": null});
    assert_eq!(validator().check("t", Some(args.clone())), Ok(args));
    let args = json!({"limit": 3, "mode": "fast", "filter": {"glob": "*.md"}});
    assert_eq!(validator().check("t", Some(args.clone())), Ok(args));
}

#[test]
fn a_wrong_type_lists_every_accepted_type() {
    assert_eq!(
        validator().check("t", Some(json!({"limit": "3"}))),
        Err(r#"argument "limit": "3" is not of type "integer" or "null""#.to_owned())
    );
}

#[test]
fn a_wrong_literal_explains_the_values_and_mentions_null() {
    assert_eq!(
        validator().check("t", Some(json!({"mode": "medium"}))),
        Err(r#"argument "mode": "medium" is not one of "fast" or "slow" (argument "mode" may also be null)"#.to_owned())
    );
}

#[test]
fn a_nested_problem_in_the_non_null_alternative_is_explained() {
    assert_eq!(
        validator().check("t", Some(json!({"filter": {"glob": 7}}))),
        Err(r#"argument "filter/glob": 7 is not of type "string" (argument "filter" may also be null)"#.to_owned())
    );
}
