//! The argument names a schema declares: the root `properties` and `patternProperties`,
//! followed through in-place applicators and local `$ref`s.

use std::collections::HashSet;

use serde_json::Value;

use super::limits::MAX_NAME_DEPTH;
use super::refs::{REF_KEYWORDS, resolve_local};

/// Names collected from the schema: properties and patterns, in schema order.
#[derive(Default)]
pub(super) struct Declared {
    pub(super) names: Vec<String>,
    pub(super) patterns: Vec<String>,
    seen_refs: HashSet<String>,
}

impl Declared {
    /// Collects names from `schema` and its in-place applicators (bounded, cycle-safe).
    pub(super) fn collect(&mut self, root: &Value, schema: &Value, depth: usize) {
        let Value::Object(map) = schema else {
            return;
        };
        if depth > MAX_NAME_DEPTH {
            return;
        }
        if let Some(Value::Object(properties)) = map.get("properties") {
            for name in properties.keys() {
                if !self.names.contains(name) {
                    self.names.push(name.clone());
                }
            }
        }
        if let Some(Value::Object(patterns)) = map.get("patternProperties") {
            for pattern in patterns.keys() {
                if !self.patterns.contains(pattern) {
                    self.patterns.push(pattern.clone());
                }
            }
        }
        for keyword in ["allOf", "anyOf", "oneOf"] {
            if let Some(Value::Array(subschemas)) = map.get(keyword) {
                for subschema in subschemas {
                    self.collect(root, subschema, depth + 1);
                }
            }
        }
        for keyword in ["if", "then", "else"] {
            if let Some(subschema) = map.get(keyword) {
                self.collect(root, subschema, depth + 1);
            }
        }
        if let Some(Value::Object(dependent)) = map.get("dependentSchemas") {
            for subschema in dependent.values() {
                self.collect(root, subschema, depth + 1);
            }
        }
        for keyword in REF_KEYWORDS {
            if let Some(Value::String(reference)) = map.get(keyword) {
                if let Some(target) = resolve_local(root, reference) {
                    if self.seen_refs.insert(reference.clone()) {
                        self.collect(root, target, depth + 1);
                    }
                }
            }
        }
    }
}
