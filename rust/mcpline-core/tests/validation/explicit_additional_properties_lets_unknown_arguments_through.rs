//! A root schema that allows additional properties explicitly (`true` or a schema) passes
//! unknown argument names on in both modes.

use mcpline_core::ArgumentValidator;
use serde_json::json;

#[test]
fn additional_properties_true_passes_unknown_keys_in_both_modes() {
    let schema = json!({
        "type": "object",
        "properties": {"path": {"type": "string"}},
        "additionalProperties": true
    });
    for strict in [true, false] {
        let validator = ArgumentValidator::new(&schema, strict).unwrap();
        let args = json!({"path": "a", "extra": [1, 2], "more": null});
        assert_eq!(
            validator.check("t", Some(args.clone())),
            Ok(args),
            "strict={strict}"
        );
    }
}

#[test]
fn additional_properties_schema_passes_unknown_keys_and_validates_them() {
    let schema = json!({
        "type": "object",
        "properties": {"path": {"type": "string"}},
        "additionalProperties": {"type": "integer"}
    });
    for strict in [true, false] {
        let validator = ArgumentValidator::new(&schema, strict).unwrap();
        let args = json!({"path": "a", "extra": 1});
        assert_eq!(
            validator.check("t", Some(args.clone())),
            Ok(args),
            "strict={strict}"
        );
        let message = validator
            .check("t", Some(json!({"path": "a", "extra": "1"})))
            .unwrap_err();
        assert_eq!(message, r#"argument "extra": "1" is not of type "integer""#);
    }
}
