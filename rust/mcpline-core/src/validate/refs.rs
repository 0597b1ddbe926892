//! `$ref`s inside a schema: walking its subschemas, finding every reference, resolving local
//! ones and refusing remote ones (schemas are never fetched).

use std::fmt::Write as _;

use serde_json::{Map, Value};

use super::error::SchemaError;
use super::render::fragment;

/// A retriever that refuses everything: schemas are never fetched.
pub(super) struct NoRemoteRetrieval;

impl jsonschema::Retrieve for NoRemoteRetrieval {
    fn retrieve(
        &self,
        uri: &jsonschema::Uri<String>,
    ) -> Result<Value, Box<dyn std::error::Error + Send + Sync>> {
        Err(format!("remote schema retrieval is disabled (refused to fetch {uri})").into())
    }
}

/// Keywords whose values are maps from names to subschemas.
const SCHEMA_MAP_KEYWORDS: [&str; 6] = [
    "properties",
    "patternProperties",
    "$defs",
    "definitions",
    "dependentSchemas",
    "dependencies",
];
/// Keywords whose values are data, not schemas.
const DATA_KEYWORDS: [&str; 5] = ["enum", "const", "default", "examples", "required"];
/// Keywords that hold references.
pub(super) const REF_KEYWORDS: [&str; 3] = ["$ref", "$dynamicRef", "$recursiveRef"];

/// Calls `visit` on every schema object in `schema` with its JSON pointer (skipping data).
fn walk_schemas(
    schema: &Value,
    pointer: &mut String,
    visit: &mut dyn FnMut(&Map<String, Value>, &str),
) {
    match schema {
        Value::Object(map) => {
            visit(map, pointer);
            for (keyword, child) in map {
                if DATA_KEYWORDS.contains(&keyword.as_str()) {
                    continue;
                }
                let len = pointer.len();
                push_pointer_segment(pointer, keyword);
                match child {
                    Value::Object(entries) if SCHEMA_MAP_KEYWORDS.contains(&keyword.as_str()) => {
                        for (name, subschema) in entries {
                            let inner = pointer.len();
                            push_pointer_segment(pointer, name);
                            walk_schemas(subschema, pointer, visit);
                            pointer.truncate(inner);
                        }
                    }
                    _ => walk_schemas(child, pointer, visit),
                }
                pointer.truncate(len);
            }
        }
        Value::Array(items) => {
            for (index, item) in items.iter().enumerate() {
                let len = pointer.len();
                let _ = write!(pointer, "/{index}");
                walk_schemas(item, pointer, visit);
                pointer.truncate(len);
            }
        }
        _ => {}
    }
}

/// Appends `/segment` to a JSON pointer, escaping `~` and `/`.
fn push_pointer_segment(pointer: &mut String, segment: &str) {
    pointer.push('/');
    for c in segment.chars() {
        match c {
            '~' => pointer.push_str("~0"),
            '/' => pointer.push_str("~1"),
            c => pointer.push(c),
        }
    }
}

/// Every `$ref`-like keyword in the schema: (pointer of the reference, reference).
fn references(schema: &Value) -> Vec<(String, String)> {
    let mut found = Vec::new();
    walk_schemas(schema, &mut String::new(), &mut |map, pointer| {
        for keyword in REF_KEYWORDS {
            if let Some(Value::String(reference)) = map.get(keyword) {
                let mut at = pointer.to_owned();
                push_pointer_segment(&mut at, keyword);
                found.push((at, reference.clone()));
            }
        }
    });
    found
}

/// Refuses references to absolute `http`, `https` and `file` URIs that no `$id` in the schema
/// itself declares, before the compiler gets to see them.
pub(super) fn check_no_remote_refs(schema: &Value) -> Result<(), SchemaError> {
    let refs = references(schema);
    if refs.is_empty() {
        return Ok(());
    }
    let mut ids: Vec<String> = Vec::new();
    walk_schemas(schema, &mut String::new(), &mut |map, _| {
        for keyword in ["$id", "id"] {
            if let Some(Value::String(id)) = map.get(keyword) {
                ids.push(id.trim_end_matches('#').to_owned());
            }
        }
    });
    for (pointer, reference) in refs {
        let base = reference.split('#').next().unwrap_or_default();
        let lower = base.to_ascii_lowercase();
        let remote_scheme = ["http:", "https:", "file:"]
            .iter()
            .any(|scheme| lower.starts_with(scheme));
        if !remote_scheme {
            continue;
        }
        let declared_here = ids.iter().any(|id| {
            !id.is_empty()
                && (id == base || base.ends_with(&format!("/{}", id.trim_start_matches("./"))))
        });
        if !declared_here {
            return Err(SchemaError::RemoteRef {
                reference,
                pointer: fragment(&pointer),
            });
        }
    }
    Ok(())
}

/// Finds the `$ref` that produced `uri`: (pointer in fragment form, reference as written).
pub(super) fn locate_reference(schema: &Value, uri: &str) -> Option<(String, String)> {
    let uri_base = uri.split('#').next().unwrap_or_default();
    let refs = references(schema);
    let exact = refs.iter().find(|(_, reference)| reference == uri);
    let by_base = || {
        refs.iter().find(|(_, reference)| {
            let base = reference.split('#').next().unwrap_or_default();
            !base.is_empty() && (base == uri_base || uri_base.ends_with(base))
        })
    };
    let by_fragment = || {
        refs.iter()
            .find(|(_, reference)| reference.ends_with(uri) && uri.starts_with('#'))
    };
    exact
        .or_else(by_base)
        .or_else(by_fragment)
        .map(|(pointer, reference)| (fragment(pointer), reference.clone()))
}

/// Resolves `#/json/pointer` and `#anchor` references inside the root document.
pub(super) fn resolve_local<'a>(root: &'a Value, reference: &str) -> Option<&'a Value> {
    let fragment = reference.strip_prefix('#')?;
    if fragment.is_empty() {
        return Some(root);
    }
    if fragment.starts_with('/') {
        return root.pointer(&percent_decode(fragment));
    }
    let mut found = None;
    walk_schemas(root, &mut String::new(), &mut |map, pointer| {
        if found.is_none()
            && ["$anchor", "$dynamicAnchor"]
                .iter()
                .any(|k| map.get(*k).and_then(Value::as_str) == Some(fragment))
        {
            found = Some(pointer.to_owned());
        }
    });
    found.and_then(|pointer| root.pointer(&pointer))
}

/// Decodes `%XX` escapes in a URI fragment (invalid escapes are kept as written).
fn percent_decode(text: &str) -> String {
    if !text.contains('%') {
        return text.to_owned();
    }
    let bytes = text.as_bytes();
    let mut decoded = Vec::with_capacity(bytes.len());
    let mut index = 0;
    while index < bytes.len() {
        if bytes[index] == b'%' && index + 2 < bytes.len() {
            let hex = std::str::from_utf8(&bytes[index + 1..index + 3]).ok();
            if let Some(byte) = hex.and_then(|h| u8::from_str_radix(h, 16).ok()) {
                decoded.push(byte);
                index += 3;
                continue;
            }
        }
        decoded.push(bytes[index]);
        index += 1;
    }
    String::from_utf8(decoded).unwrap_or_else(|_| text.to_owned())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn percent_decoding_keeps_invalid_escapes() {
        assert_eq!(percent_decode("/$defs/a%20b"), "/$defs/a b");
        assert_eq!(percent_decode("/a%zz"), "/a%zz");
        assert_eq!(percent_decode("/a%2"), "/a%2");
    }
}
