//! A schema is compiled when its tool is first called unless compiling could find a problem the
//! meta-schema check does not (references, patterns, formats, dialects): those are compiled at
//! registration. Either way a tool sees the same checks and the same refusals.

use mcpline_core::{ArgumentValidator, ResultValidator};
use serde_json::{Value, json};

fn object_with(property: &Value) -> Value {
    json!({"type": "object", "properties": {"a": property}, "required": ["a"]})
}

#[test]
fn a_schema_compiled_on_first_use_checks_arguments_and_results_as_at_registration() {
    let schema = object_with(&json!({"type": "integer", "minimum": 1}));
    let validator = ArgumentValidator::new(&schema, true).unwrap();
    assert!(validator.check("t", Some(json!({"a": 2}))).is_ok());
    let error = validator.check("t", Some(json!({"a": 0}))).unwrap_err();
    assert!(error.contains("argument \"a\""), "{error}");
    let results = ResultValidator::new(&schema).unwrap();
    assert!(results.check(Some(&json!({"a": 3}))).is_ok());
    let error = results.check(Some(&json!({"a": "x"}))).unwrap_err();
    assert!(error.contains("integer"), "{error}");
}

#[test]
fn an_output_schema_only_compiling_can_refuse_is_refused_at_registration() {
    for property in [
        json!({"type": "string", "pattern": "(unclosed"}),
        json!({"$ref": "#/$defs/missing"}),
    ] {
        assert!(
            ResultValidator::new(&object_with(&property)).is_err(),
            "{property}"
        );
    }
    let error = ResultValidator::new(&object_with(&json!({"type": "strin"}))).unwrap_err();
    assert!(error.to_string().contains("#/properties/a"), "{error}");
}
