//! What each quick method answers, per protocol revision: plain functions of the server's
//! identity, configuration and registry, with no session behind them.
//!
//! `tools/call` is not here: it is queued by the session and run by [`crate::invoke`].

use std::sync::Arc;

use serde_json::{Map, Value, json};

use crate::config::{ServerConfig, ServerInfo};
use crate::jsonrpc::{ErrorCode, RequestError};
use crate::protocol::{
    Feature, HANDSHAKE_REVISIONS, LogLevel, META_CLIENT_CAPABILITIES, META_CLIENT_INFO,
    META_LOG_LEVEL, META_PROTOCOL_VERSION, META_SERVER_INFO, Revision, STATELESS_REVISIONS,
};
use crate::registry::Registry;

/// What the client said in `initialize`.
pub(crate) struct Handshake {
    pub(crate) revision: Revision,
    pub(crate) client_info: Option<Arc<Value>>,
}

/// Reads `initialize` params: the requested version when this server speaks it, else the newest
/// handshake revision.
pub(crate) fn negotiate(params: &Map<String, Value>) -> Result<Handshake, RequestError> {
    let Some(requested) = params.get("protocolVersion").and_then(Value::as_str) else {
        return Err(RequestError::invalid_params(
            "Invalid params: initialize needs \"protocolVersion\" (a string)",
        ));
    };
    let revision = Revision::parse(requested)
        .filter(|r| HANDSHAKE_REVISIONS.contains(r))
        .unwrap_or_else(Revision::newest_handshake);
    Ok(Handshake {
        revision,
        client_info: params.get("clientInfo").cloned().map(Arc::new),
    })
}

/// What the server offers: tools always, prompts and resources when any are registered (a client must not
/// be told of a capability the server lacks, and its methods answer `-32601` then).
fn capabilities(registry: &Registry, rev: Revision, logging: bool) -> Value {
    let mut capabilities = Map::new();
    if logging {
        capabilities.insert("logging".into(), json!({}));
    }
    capabilities.insert("tools".into(), json!({"listChanged": false}));
    if registry.prompts().len() > 0 {
        capabilities.insert("prompts".into(), json!({"listChanged": false}));
    }
    if registry.has_resources() {
        capabilities.insert(
            "resources".into(),
            json!({"subscribe": false, "listChanged": false}),
        );
    }
    if registry.offers_completions() && rev.supports(Feature::CompletionsCapability) {
        capabilities.insert("completions".into(), json!({}));
    }
    Value::Object(capabilities)
}

/// The `initialize` result for the negotiated `revision`.
pub(crate) fn initialize(info: &ServerInfo, registry: &Registry, revision: Revision) -> Value {
    let mut result = Map::new();
    result.insert("protocolVersion".into(), Value::from(revision.as_str()));
    result.insert(
        "capabilities".into(),
        capabilities(registry, revision, true),
    );
    result.insert("serverInfo".into(), info.to_json(revision));
    if let Some(text) = &info.instructions {
        result.insert("instructions".into(), Value::from(text.as_str()));
    }
    Value::Object(result)
}

/// The level of a `logging/setLevel` request.
pub(crate) fn log_level(params: &Map<String, Value>) -> Result<LogLevel, RequestError> {
    params
        .get("level")
        .and_then(Value::as_str)
        .and_then(LogLevel::parse)
        .ok_or_else(|| {
            RequestError::invalid_params(
                "Invalid params: level must be one of debug, info, notice, warning, error, \
                 critical, alert, emergency",
            )
        })
}

/// What a 2026-07-28 request carries in its `_meta` envelope.
pub(crate) struct Envelope {
    pub(crate) revision: Revision,
    pub(crate) client_info: Option<Arc<Value>>,
    pub(crate) log_level: Option<LogLevel>,
}

/// Whether `params` carry the 2026-07-28 envelope (then the request is served statelessly).
pub(crate) fn is_stateless(params: &Map<String, Value>) -> bool {
    params
        .get("_meta")
        .and_then(Value::as_object)
        .is_some_and(|m| {
            m.contains_key(META_PROTOCOL_VERSION) || m.contains_key(META_CLIENT_CAPABILITIES)
        })
}

/// Reads and checks the 2026-07-28 envelope of a request.
pub(crate) fn envelope(params: &Map<String, Value>) -> Result<Envelope, RequestError> {
    let no_meta = Map::new();
    let meta = params
        .get("_meta")
        .and_then(Value::as_object)
        .unwrap_or(&no_meta);
    let Some(requested) = meta.get(META_PROTOCOL_VERSION).and_then(Value::as_str) else {
        return Err(RequestError::invalid_params(format!(
            "Invalid params: params._meta must carry {META_PROTOCOL_VERSION} (a string)"
        )));
    };
    if !meta
        .get(META_CLIENT_CAPABILITIES)
        .is_some_and(Value::is_object)
    {
        return Err(RequestError::invalid_params(format!(
            "Invalid params: params._meta must carry {META_CLIENT_CAPABILITIES} (an object)"
        )));
    }
    let Some(revision) = Revision::parse(requested).filter(|r| STATELESS_REVISIONS.contains(r))
    else {
        let supported: Vec<&str> = STATELESS_REVISIONS.iter().map(|r| r.as_str()).collect();
        return Err(RequestError::new(
            ErrorCode::UNSUPPORTED_PROTOCOL_VERSION,
            "Unsupported protocol version",
        )
        .with_data(json!({"supported": supported, "requested": requested})));
    };
    let log_level = match meta.get(META_LOG_LEVEL) {
        None => None,
        Some(v) => Some(v.as_str().and_then(LogLevel::parse).ok_or_else(|| {
            RequestError::invalid_params(format!(
                "Invalid params: {META_LOG_LEVEL} is not a log level"
            ))
        })?),
    };
    Ok(Envelope {
        revision,
        client_info: meta.get(META_CLIENT_INFO).cloned().map(Arc::new),
        log_level,
    })
}

/// The `server/discover` result (2026-07-28).
pub(crate) fn discover(info: &ServerInfo, registry: &Registry, config: &ServerConfig) -> Value {
    let supported: Vec<&str> = STATELESS_REVISIONS.iter().map(|r| r.as_str()).collect();
    let mut result = Map::new();
    result.insert("supportedVersions".into(), json!(supported));
    let newest = STATELESS_REVISIONS[STATELESS_REVISIONS.len() - 1];
    result.insert("capabilities".into(), capabilities(registry, newest, false));
    if let Some(text) = &info.instructions {
        result.insert("instructions".into(), Value::from(text.as_str()));
    }
    result.insert("ttlMs".into(), Value::from(config.list_ttl_ms));
    result.insert("cacheScope".into(), Value::from("public"));
    Value::Object(result)
}

/// One page of `tools/list`; the cursor is `tools:<offset>` from an earlier page.
pub(crate) fn list_tools(
    registry: &Registry,
    config: &ServerConfig,
    rev: Revision,
    params: &Map<String, Value>,
) -> Result<Value, RequestError> {
    let descriptors = registry.tools().map(|t| t.spec.descriptor(rev));
    list_page(
        "tools",
        "tools/list",
        descriptors,
        registry.len(),
        config,
        rev,
        params,
    )
}

/// One page of `resources/list` (fixed resources in URI order).
pub(crate) fn list_resources(
    registry: &Registry,
    config: &ServerConfig,
    rev: Revision,
    params: &Map<String, Value>,
) -> Result<Value, RequestError> {
    let count = registry.resources().len();
    let descriptors = registry.resources().map(|r| r.descriptor(rev));
    list_page(
        "resources",
        "resources/list",
        descriptors,
        count,
        config,
        rev,
        params,
    )
}

/// One page of `resources/templates/list` (templates in the order they were added).
pub(crate) fn list_resource_templates(
    registry: &Registry,
    config: &ServerConfig,
    rev: Revision,
    params: &Map<String, Value>,
) -> Result<Value, RequestError> {
    let count = registry.templates().len();
    let descriptors = registry.templates().map(|r| r.descriptor(rev));
    let method = "resources/templates/list";
    list_page(
        "resourceTemplates",
        method,
        descriptors,
        count,
        config,
        rev,
        params,
    )
}

/// One page of `prompts/list`; the cursor is `prompts:<offset>` from an earlier page.
pub(crate) fn list_prompts(
    registry: &Registry,
    config: &ServerConfig,
    rev: Revision,
    params: &Map<String, Value>,
) -> Result<Value, RequestError> {
    let count = registry.prompts().len();
    let descriptors = registry.prompts().map(|p| p.descriptor(rev));
    list_page(
        "prompts",
        "prompts/list",
        descriptors,
        count,
        config,
        rev,
        params,
    )
}

/// The page of list `method` (its items under `key`, which also marks its cursors) that the
/// request's cursor asks for.
fn list_page(
    key: &str,
    method: &str,
    items: impl Iterator<Item = Value>,
    count: usize,
    config: &ServerConfig,
    rev: Revision,
    params: &Map<String, Value>,
) -> Result<Value, RequestError> {
    let start = match params.get("cursor") {
        None | Some(Value::Null) => 0,
        Some(Value::String(c)) => c
            .strip_prefix(key)
            .and_then(|rest| rest.strip_prefix(':'))
            .and_then(|n| n.parse::<usize>().ok())
            .filter(|&n| n > 0 && n < count)
            .ok_or_else(|| {
                RequestError::invalid_params(format!(
                    "Invalid params: unknown cursor {c:?} (pass back a nextCursor from an \
                     earlier {method})"
                ))
            })?,
        Some(_) => {
            return Err(RequestError::invalid_params(
                "Invalid params: cursor must be a string",
            ));
        }
    };
    let page = config.page_size.max(1);
    let mut result = Map::new();
    result.insert(
        key.into(),
        Value::Array(items.skip(start).take(page).collect()),
    );
    if start + page < count {
        result.insert(
            "nextCursor".into(),
            Value::from(format!("{key}:{}", start + page)),
        );
    }
    cache_hints(&mut result, config, rev);
    Ok(Value::Object(result))
}

/// The 2026-07-28 caching fields a list or a read result must carry (others carry none).
pub(crate) fn cache_hints(result: &mut Map<String, Value>, config: &ServerConfig, rev: Revision) {
    if rev.is_stateless() {
        result.insert("ttlMs".into(), Value::from(config.list_ttl_ms));
        result.insert("cacheScope".into(), Value::from("public"));
    }
}

/// Adds what 2026-07-28 requires of every result (`resultType`, the server identity in `_meta`);
/// other revisions' results pass unchanged.
pub(crate) fn stamp(info: &ServerInfo, rev: Revision, mut result: Value) -> Value {
    if rev.is_stateless() {
        if let Value::Object(obj) = &mut result {
            obj.insert("resultType".into(), Value::from("complete"));
            let meta = obj
                .entry("_meta")
                .or_insert_with(|| Value::Object(Map::new()));
            if let Value::Object(meta) = meta {
                meta.insert(META_SERVER_INFO.into(), info.to_json(rev));
            }
        }
    }
    result
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::tool::{FnTool, ToolOutput, ToolSpec};

    fn registry(names: &[&str]) -> Registry {
        let mut registry = Registry::default();
        for name in names {
            let spec = ToolSpec::new(*name, json!({"type": "object"}));
            let handler = Arc::new(FnTool(|_: Value, _: &crate::CallContext| {
                ToolOutput::text("")
            }));
            registry.add(spec, handler).unwrap();
        }
        registry
    }

    #[test]
    fn tools_are_listed_in_name_order_one_page_at_a_time() {
        let registry = registry(&["c", "a", "b"]);
        let config = ServerConfig {
            page_size: 2,
            ..ServerConfig::default()
        };
        let first = list_tools(&registry, &config, Revision::V2025_06_18, &Map::new()).unwrap();
        assert_eq!(first["tools"][0]["name"], "a");
        assert_eq!(first["tools"][1]["name"], "b");
        assert_eq!(first["nextCursor"], "tools:2");
        let mut params = Map::new();
        params.insert("cursor".into(), first["nextCursor"].clone());
        let second = list_tools(&registry, &config, Revision::V2025_06_18, &params).unwrap();
        assert_eq!(second["tools"][0]["name"], "c");
        assert!(second.get("nextCursor").is_none());
    }

    #[test]
    fn a_cursor_that_no_page_gave_is_invalid_params() {
        let mut params = Map::new();
        params.insert("cursor".into(), json!("tools:99"));
        let err = list_tools(
            &registry(&["a"]),
            &ServerConfig::default(),
            Revision::V2025_06_18,
            &params,
        )
        .unwrap_err();
        assert_eq!(err.code, ErrorCode::INVALID_PARAMS);
    }

    #[test]
    fn stateless_lists_carry_cache_fields_and_handshake_lists_do_not() {
        let config = ServerConfig::default();
        let stateless =
            list_tools(&registry(&[]), &config, Revision::V2026_07_28, &Map::new()).unwrap();
        assert_eq!(stateless["cacheScope"], "public");
        let handshake =
            list_tools(&registry(&[]), &config, Revision::V2025_11_25, &Map::new()).unwrap();
        assert!(handshake.get("ttlMs").is_none());
    }

    #[test]
    fn only_stateless_results_are_stamped() {
        let info = ServerInfo::new("s", "1");
        let stamped = stamp(&info, Revision::V2026_07_28, json!({}));
        assert_eq!(stamped["resultType"], "complete");
        assert_eq!(stamped["_meta"][META_SERVER_INFO]["name"], "s");
        assert_eq!(stamp(&info, Revision::V2025_11_25, json!({})), json!({}));
    }

    #[test]
    fn server_description_is_sent_from_2025_11_25_only() {
        let mut info = ServerInfo::new("s", "1");
        info.description = Some("d".into());
        info.title = Some("T".into());
        let old = initialize(&info, &Registry::default(), Revision::V2025_06_18);
        assert!(old["serverInfo"].get("description").is_none());
        assert_eq!(old["serverInfo"]["title"], "T");
        let new = initialize(&info, &Registry::default(), Revision::V2025_11_25);
        assert_eq!(new["serverInfo"]["description"], "d");
    }

    #[test]
    fn an_unknown_requested_version_negotiates_the_newest_handshake_revision() {
        let mut params = Map::new();
        params.insert("protocolVersion".into(), json!("1999-01-01"));
        assert_eq!(
            negotiate(&params).unwrap().revision,
            Revision::newest_handshake()
        );
    }
}
