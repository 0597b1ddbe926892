//! Valid arguments are handed back as the very value that came in (no clone on the hot path),
//! and a validator can be shared between threads.

use mcpline_core::ArgumentValidator;
use serde_json::json;

#[test]
fn valid_arguments_are_moved_through_not_cloned() {
    let schema = json!({
        "type": "object",
        "properties": {"path": {"type": "string"}},
        "required": ["path"],
        "additionalProperties": false
    });
    for strict in [true, false] {
        let validator = ArgumentValidator::new(&schema, strict).unwrap();
        let args = json!({"path": "some/long/path/to/a/file.txt"});
        let buffer = args["path"].as_str().unwrap().as_ptr();
        let out = validator.check("t", Some(args)).unwrap();
        assert_eq!(
            out["path"].as_str().unwrap().as_ptr(),
            buffer,
            "strict={strict}"
        );
    }
}

#[test]
fn validators_are_send_and_sync() {
    fn assert_send_sync<T: Send + Sync>() {}
    assert_send_sync::<ArgumentValidator>();
}
