//! `arguments` that is not a JSON object is an error naming what it was.

use mcpline_core::ArgumentValidator;
use serde_json::json;

#[test]
fn arrays_strings_numbers_and_booleans_are_rejected() {
    let validator = ArgumentValidator::new(&json!({"type": "object"}), true).unwrap();
    for (arguments, kind) in [
        (json!([1, 2]), "an array"),
        (json!("path=a"), "a string"),
        (json!(5), "a number"),
        (json!(true), "a boolean"),
    ] {
        assert_eq!(
            validator.check("t", Some(arguments)),
            Err(format!("arguments must be a JSON object, got {kind}"))
        );
    }
}

#[test]
fn non_object_arguments_are_rejected_even_when_anything_goes() {
    let schema = json!({"type": "object", "additionalProperties": true});
    let validator = ArgumentValidator::new(&schema, false).unwrap();
    assert_eq!(
        validator.check("t", Some(json!([]))),
        Err("arguments must be a JSON object, got an array".to_owned())
    );
}
