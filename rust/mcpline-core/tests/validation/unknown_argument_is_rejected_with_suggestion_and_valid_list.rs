//! Strict mode: an argument the schema does not declare is rejected with a message that names
//! it, suggests the nearest valid name and lists the valid ones.

use mcpline_core::ArgumentValidator;
use serde_json::{Value, json};

fn count_words(strict: bool, additional: Option<Value>) -> ArgumentValidator {
    let mut schema = json!({
        "type": "object",
        "properties": {"path": {"type": "string"}, "encoding": {"type": "string"}},
        "required": ["path"]
    });
    if let Some(additional) = additional {
        schema["additionalProperties"] = additional;
    }
    ArgumentValidator::new(&schema, strict).expect("schema compiles")
}

#[test]
fn misspelt_argument_gets_a_suggestion_and_the_valid_list() {
    let validator = count_words(true, None);
    let message = validator
        .check("count_words", Some(json!({"pathh": "a.txt"})))
        .unwrap_err();
    assert_eq!(
        message.lines().next().unwrap(),
        r#"unknown argument "pathh" for tool "count_words": did you mean "path"? Valid arguments: path, encoding"#
    );
}

#[test]
fn missing_additional_properties_is_treated_as_false_in_strict_mode() {
    let validator = count_words(true, None);
    let message = validator
        .check(
            "count_words",
            Some(json!({"path": "a.txt", "verbose": true})),
        )
        .unwrap_err();
    assert_eq!(
        message,
        r#"unknown argument "verbose" for tool "count_words". Valid arguments: path, encoding"#
    );
}

#[test]
fn explicit_additional_properties_false_reports_the_key_once() {
    let validator = count_words(true, Some(json!(false)));
    let message = validator
        .check(
            "count_words",
            Some(json!({"path": "a.txt", "encodng": "utf-8"})),
        )
        .unwrap_err();
    assert_eq!(
        message,
        r#"unknown argument "encodng" for tool "count_words": did you mean "encoding"? Valid arguments: path, encoding"#
    );
}

#[test]
fn suggestions_ignore_case_and_separators() {
    let validator = count_words(true, None);
    let message = validator
        .check("count_words", Some(json!({"Path": "a.txt"})))
        .unwrap_err();
    assert!(message.contains(r#"did you mean "path"?"#), "{message}");
}

#[test]
fn distant_names_get_no_suggestion() {
    let validator = count_words(true, None);
    let message = validator
        .check("count_words", Some(json!({"path": "a", "zzzzzz": 1})))
        .unwrap_err();
    assert!(!message.contains("did you mean"), "{message}");
    assert!(
        message.contains("Valid arguments: path, encoding"),
        "{message}"
    );
}

#[test]
fn several_unknown_arguments_are_named_in_one_line() {
    let validator = count_words(true, None);
    let message = validator
        .check(
            "count_words",
            Some(json!({"path": "a", "pathh": 1, "zzzzzz": 2})),
        )
        .unwrap_err();
    assert_eq!(
        message,
        r#"unknown arguments "pathh" (did you mean "path"?), "zzzzzz" for tool "count_words". Valid arguments: path, encoding"#
    );
}

#[test]
fn unknown_arguments_are_reported_together_with_other_problems() {
    let validator = count_words(true, None);
    let message = validator
        .check("count_words", Some(json!({"pathh": "a", "encoding": 8})))
        .unwrap_err();
    let lines: Vec<&str> = message.lines().collect();
    assert_eq!(lines.len(), 3, "{message}");
    assert!(
        lines[0].starts_with(r#"unknown argument "pathh""#),
        "{message}"
    );
    assert!(
        lines.contains(&r#"missing required argument "path""#),
        "{message}"
    );
    assert!(
        lines.contains(&r#"argument "encoding": 8 is not of type "string""#),
        "{message}"
    );
}

#[test]
fn a_tool_without_arguments_says_so() {
    let validator =
        ArgumentValidator::new(&json!({"type": "object", "properties": {}}), true).unwrap();
    let message = validator
        .check("ping_db", Some(json!({"x": 1})))
        .unwrap_err();
    assert_eq!(
        message,
        r#"unknown argument "x" for tool "ping_db": tool "ping_db" takes no arguments"#
    );
    let bare = ArgumentValidator::new(&json!({"type": "object"}), true).unwrap();
    assert!(
        bare.check("t", Some(json!({"x": 1})))
            .unwrap_err()
            .contains("takes no arguments")
    );
}

#[test]
fn pattern_properties_declare_names_too() {
    let schema = json!({
        "type": "object",
        "properties": {"name": {"type": "string"}},
        "patternProperties": {"^x-": {"type": "integer"}}
    });
    let validator = ArgumentValidator::new(&schema, true).unwrap();
    let args = json!({"name": "n", "x-retries": 3});
    assert_eq!(validator.check("t", Some(args.clone())), Ok(args));
    let message = validator.check("t", Some(json!({"other": 1}))).unwrap_err();
    assert_eq!(
        message,
        r#"unknown argument "other" for tool "t". Valid arguments: name, or any name matching "^x-""#
    );
    let message = validator
        .check("t", Some(json!({"x-retries": "3"})))
        .unwrap_err();
    assert_eq!(
        message,
        r#"argument "x-retries": "3" is not of type "integer""#
    );
}

#[test]
fn names_declared_through_all_of_and_refs_are_known() {
    let schema = json!({
        "type": "object",
        "properties": {"path": {"type": "string"}},
        "allOf": [{"$ref": "#/$defs/Paging"}],
        "$defs": {"Paging": {"properties": {"limit": {"type": "integer"}}}}
    });
    let validator = ArgumentValidator::new(&schema, true).unwrap();
    let args = json!({"path": "p", "limit": 10});
    assert_eq!(validator.check("t", Some(args.clone())), Ok(args));
    let message = validator.check("t", Some(json!({"limt": 10}))).unwrap_err();
    assert!(
        message.contains(r#"did you mean "limit"? Valid arguments: path, limit"#),
        "{message}"
    );
}
