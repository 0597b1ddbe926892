//! No silent coercion: `"5"` is not `5`, `"true"` is not `true`, `5` is not `"5"`.
//! (`1.0` is an integer because JSON Schema 2020-12 says so.)

use mcpline_core::ArgumentValidator;
use serde_json::json;

fn validator() -> ArgumentValidator {
    let schema = json!({
        "type": "object",
        "properties": {
            "count": {"type": "integer"},
            "flag": {"type": "boolean"},
            "name": {"type": "string"},
            "ratio": {"type": "number"}
        }
    });
    ArgumentValidator::new(&schema, true).unwrap()
}

#[test]
fn a_string_is_not_an_integer() {
    assert_eq!(
        validator().check("t", Some(json!({"count": "5"}))),
        Err(r#"argument "count": "5" is not of type "integer""#.to_owned())
    );
}

#[test]
fn a_string_is_not_a_boolean() {
    assert_eq!(
        validator().check("t", Some(json!({"flag": "true"}))),
        Err(r#"argument "flag": "true" is not of type "boolean""#.to_owned())
    );
}

#[test]
fn a_number_is_not_a_string() {
    assert_eq!(
        validator().check("t", Some(json!({"name": 5}))),
        Err(r#"argument "name": 5 is not of type "string""#.to_owned())
    );
}

#[test]
fn a_string_is_not_a_number_and_a_number_is_not_a_boolean() {
    let message = validator()
        .check("t", Some(json!({"ratio": "0.5", "flag": 1})))
        .unwrap_err();
    assert!(
        message.contains(r#"argument "ratio": "0.5" is not of type "number""#),
        "{message}"
    );
    assert!(
        message.contains(r#"argument "flag": 1 is not of type "boolean""#),
        "{message}"
    );
}

#[test]
fn a_fraction_is_not_an_integer_but_one_point_zero_is() {
    assert_eq!(
        validator().check("t", Some(json!({"count": 1.5}))),
        Err(r#"argument "count": 1.5 is not of type "integer""#.to_owned())
    );
    let args = json!({"count": 1.0});
    assert_eq!(validator().check("t", Some(args.clone())), Ok(args));
}

#[test]
fn valid_values_come_back_exactly_as_given() {
    let args = json!({"count": 5, "flag": true, "name": "5", "ratio": 2});
    assert_eq!(validator().check("t", Some(args.clone())), Ok(args));
}
