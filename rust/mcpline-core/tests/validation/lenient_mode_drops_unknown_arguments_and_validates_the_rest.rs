//! `strict = false`: argument names the schema does not declare are silently dropped before
//! validation; the remaining arguments are still validated.

use mcpline_core::ArgumentValidator;
use serde_json::json;

fn schema(additional_false: bool) -> serde_json::Value {
    let mut schema = json!({
        "type": "object",
        "properties": {"path": {"type": "string"}, "limit": {"type": "integer"}},
        "required": ["path"]
    });
    if additional_false {
        schema["additionalProperties"] = json!(false);
    }
    schema
}

#[test]
fn unknown_keys_are_dropped_and_the_order_of_the_rest_is_kept() {
    for additional_false in [false, true] {
        let validator = ArgumentValidator::new(&schema(additional_false), false).unwrap();
        let out = validator
            .check(
                "t",
                Some(json!({"limit": 3, "verbose": true, "path": "a", "pathh": "b"})),
            )
            .unwrap();
        assert_eq!(out, json!({"limit": 3, "path": "a"}));
        let keys: Vec<&String> = out.as_object().unwrap().keys().collect();
        assert_eq!(keys, ["limit", "path"]);
    }
}

#[test]
fn the_remaining_arguments_are_still_validated() {
    let validator = ArgumentValidator::new(&schema(false), false).unwrap();
    let message = validator
        .check("t", Some(json!({"limit": "3", "verbose": true})))
        .unwrap_err();
    assert!(
        message.contains(r#"missing required argument "path""#),
        "{message}"
    );
    assert!(
        message.contains(r#"argument "limit": "3" is not of type "integer""#),
        "{message}"
    );
    assert!(!message.contains("verbose"), "{message}");
}

#[test]
fn arguments_without_unknown_keys_pass_unchanged() {
    let validator = ArgumentValidator::new(&schema(false), false).unwrap();
    let args = json!({"path": "a", "limit": 1});
    assert_eq!(validator.check("t", Some(args.clone())), Ok(args));
}
