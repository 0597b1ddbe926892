//! Property test: `check` never panics, whatever JSON it is given, and every error message is
//! non-empty and at most ten lines.

use mcpline_core::ArgumentValidator;
use proptest::prelude::*;
use serde_json::{Map, Value, json};

fn arbitrary_json() -> impl Strategy<Value = Value> {
    let leaf = prop_oneof![
        Just(Value::Null),
        any::<bool>().prop_map(Value::Bool),
        any::<i64>().prop_map(Value::from),
        any::<f64>()
            .prop_filter("finite", |f| f.is_finite())
            .prop_map(Value::from),
        ".{0,12}".prop_map(Value::String),
        prop_oneof![
            Just("path"),
            Just("pathh"),
            Just("count"),
            Just("mode"),
            Just("x-1")
        ]
        .prop_map(|s| Value::String(s.to_owned())),
    ];
    leaf.prop_recursive(4, 48, 6, |inner| {
        prop_oneof![
            prop::collection::vec(inner.clone(), 0..6).prop_map(Value::Array),
            prop::collection::vec(
                (
                    prop_oneof![
                        Just("path".to_owned()),
                        Just("count".to_owned()),
                        Just("mode".to_owned()),
                        Just("tags".to_owned()),
                        Just("opts".to_owned()),
                        Just("x-extra".to_owned()),
                        ".{0,8}"
                    ],
                    inner
                ),
                0..6
            )
            .prop_map(|entries| Value::Object(entries.into_iter().collect::<Map<_, _>>())),
        ]
    })
}

fn validators() -> Vec<ArgumentValidator> {
    let rich = json!({
        "type": "object",
        "properties": {
            "path": {"type": "string", "minLength": 1, "pattern": "^[^\\u0000]*$"},
            "count": {"type": "integer", "minimum": 0, "multipleOf": 2},
            "mode": {"anyOf": [{"enum": ["r", "w"]}, {"type": "null"}]},
            "tags": {"type": "array", "items": {"type": "string"}, "uniqueItems": true, "maxItems": 3},
            "opts": {"oneOf": [{"$ref": "#/$defs/Opts"}, {"type": "boolean"}]}
        },
        "patternProperties": {"^x-": {"not": {"type": "null"}}},
        "required": ["path"],
        "$defs": {
            "Opts": {
                "type": "object",
                "properties": {"depth": {"type": "integer"}, "next": {"$ref": "#/$defs/Opts"}},
                "additionalProperties": false,
                "minProperties": 1
            }
        }
    });
    let open = json!({"type": "object", "additionalProperties": {"type": "string"}});
    let closed = json!({"type": "object", "properties": {}, "additionalProperties": false});
    let mut all = Vec::new();
    for schema in [rich, open, closed] {
        for strict in [true, false] {
            all.push(ArgumentValidator::new(&schema, strict).unwrap());
        }
    }
    all
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(512))]

    #[test]
    fn check_never_panics(arguments in proptest::option::of(arbitrary_json())) {
        for validator in validators() {
            match validator.check("tool", arguments.clone()) {
                Ok(value) => prop_assert!(value.is_object()),
                Err(message) => {
                    prop_assert!(!message.trim().is_empty());
                    prop_assert!(message.lines().count() <= 10, "{}", message);
                    prop_assert!(message.lines().all(|line| !line.trim().is_empty()), "{}", message);
                }
            }
        }
    }
}
