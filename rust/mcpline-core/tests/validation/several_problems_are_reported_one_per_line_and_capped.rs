//! Every problem gets its own line; long lists are capped at ten lines; messages are never
//! empty and never contain huge values.

use mcpline_core::ArgumentValidator;
use serde_json::{Map, Value, json};

#[test]
fn many_problems_are_capped_at_ten_lines() {
    let mut properties = Map::new();
    for i in 0..30 {
        properties.insert(format!("p{i}"), json!({"type": "integer"}));
    }
    let schema = json!({"type": "object", "properties": properties});
    let validator = ArgumentValidator::new(&schema, true).unwrap();
    let args: Map<String, Value> = (0..30).map(|i| (format!("p{i}"), json!("x"))).collect();
    let message = validator.check("t", Some(Value::Object(args))).unwrap_err();
    let lines: Vec<&str> = message.lines().collect();
    assert_eq!(lines.len(), 10, "{message}");
    assert_eq!(lines[0], r#"argument "p0": "x" is not of type "integer""#);
    assert_eq!(lines[9], "... and 21 more problems");
}

#[test]
fn huge_values_are_shortened_in_messages() {
    let schema = json!({"type": "object", "properties": {"n": {"type": "integer"}}});
    let validator = ArgumentValidator::new(&schema, true).unwrap();
    let message = validator
        .check("t", Some(json!({"n": "y".repeat(100_000)})))
        .unwrap_err();
    assert!(message.len() < 200, "{message}");
    assert!(message.contains("…"), "{message}");
}

#[test]
fn newlines_in_keys_do_not_break_the_one_problem_per_line_rule() {
    let schema = json!({"type": "object", "properties": {"a": {"type": "string"}}});
    let validator = ArgumentValidator::new(&schema, true).unwrap();
    let message = validator
        .check("t", Some(json!({"evil\nkey": 1})))
        .unwrap_err();
    assert_eq!(message.lines().count(), 1, "{message}");
    assert!(message.contains(r#""evil\nkey""#), "{message}");
}
