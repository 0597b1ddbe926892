//! MCP's Streamable HTTP transport, minus the HTTP: [`HttpEndpoint`] takes a request's headers
//! and body and says what to answer (status, headers, a body or an [`Exchange`] to stream).
//! Moving the bytes (a socket, ASGI) is the caller's job.
//!
//! - 2026-07-28 is stateless: each POST carries its own envelope, its mirrored headers must
//!   match its body (`-32020` otherwise), and any worker of a fleet can answer it.
//! - 2025-03-26 … 2025-11-25 keep what `initialize` negotiated under an `Mcp-Session-Id`, for
//!   the POSTs that follow, until a DELETE ends it (sticky routing is needed to scale them out).

mod exchange;
mod headers;
mod sessions;

use std::sync::Arc;
use std::time::Duration;

use serde_json::{Map, Value};

pub use exchange::{Exchange, Next, Wake};
pub use headers::HttpHeaders;

use crate::jsonrpc::{ErrorCode, IdField, RequestError, RequestId, encode};
use crate::methods;
use crate::queue::JobQueue;
use crate::registry::Registry;
use crate::server::Server;
use crate::session::{Job, PeerState, Session};
use exchange::Sink;
use headers::{HEADER_MISMATCH, check_mirrored};
use sessions::{ClientSession, Sessions};

/// How the HTTP endpoint guards itself; see the fields.
#[derive(Debug, Clone)]
pub struct HttpConfig {
    /// Browser origins allowed besides the local ones (`http://localhost:*`,
    /// `http://127.0.0.1:*`, `http://[::1]:*`), as `scheme://host[:port]`; `*` allows any.
    /// A request with another `Origin` is refused with 403 (DNS-rebinding protection).
    pub allowed_origins: Vec<String>,
    /// `Host` values allowed (`name` or `name:port`; `*` allows any). `None` allows only the
    /// local names (`localhost`, `127.0.0.1`, `[::1]`, any port), which is right for a server
    /// on a loopback address; a public deployment lists its names. Another `Host` is refused
    /// with 403: a rebinding page cannot reach the server under a name it controls.
    pub allowed_hosts: Option<Vec<String>>,
    /// How long a handshake-era session may sit unused before it is forgotten (default 1 h).
    pub session_idle: Duration,
    /// Most handshake-era sessions kept at once (default 10,000); the one idle longest goes.
    pub max_sessions: usize,
}

impl Default for HttpConfig {
    fn default() -> Self {
        Self {
            allowed_origins: Vec::new(),
            allowed_hosts: None,
            session_idle: Duration::from_secs(3600),
            max_sessions: 10_000,
        }
    }
}

/// What to answer an HTTP request with.
pub struct HttpReply {
    /// The HTTP status.
    pub status: u16,
    /// Headers to send besides `Content-Type` (`Mcp-Session-Id`, `Allow`).
    pub headers: Vec<(&'static str, String)>,
    /// A JSON body (empty: no body), unless `exchange` streams it.
    pub body: Vec<u8>,
    /// The request's calls, still running: their frames come from here (send them as JSON when
    /// the first one is also the last, else as an SSE stream when the client accepts it).
    pub exchange: Option<Exchange>,
}

impl HttpReply {
    fn status(status: u16) -> Self {
        Self {
            status,
            headers: Vec::new(),
            body: Vec::new(),
            exchange: None,
        }
    }

    fn error(status: u16, error: RequestError, id: Option<&RequestId>) -> Self {
        Self {
            body: encode(&error.into_frame(id)),
            ..Self::status(status)
        }
    }
}

/// A server's MCP endpoint over HTTP: every request is dispatched by the core as over stdio.
pub struct HttpEndpoint {
    server: Server,
    config: HttpConfig,
    sessions: Sessions,
    /// Calls of concurrent tools in every exchange count against the server's
    /// `max_concurrency` here.
    gate: Arc<JobQueue<Job>>,
}

impl HttpEndpoint {
    /// The endpoint of `server` (its tools, prompts and resources as registered now).
    #[must_use]
    pub fn new(server: Server, config: HttpConfig) -> Self {
        let sessions = Sessions::new(config.session_idle, config.max_sessions);
        Self {
            server,
            config,
            sessions,
            gate: Arc::new(JobQueue::new(1)),
        }
    }

    /// Handshake-era sessions alive now.
    #[must_use]
    pub fn session_count(&self) -> usize {
        self.sessions.len()
    }

    /// The answer to a request with an HTTP method other than POST and DELETE: 405.
    #[must_use]
    pub fn not_allowed(&self) -> HttpReply {
        let mut reply = HttpReply::status(405);
        reply.headers.push(("Allow", "POST, DELETE".to_owned()));
        reply
    }

    /// `DELETE`: ends the handshake-era session named by `Mcp-Session-Id`.
    #[must_use]
    pub fn delete(&self, headers: &HttpHeaders) -> HttpReply {
        if let Some(refused) = self.refused_origin(headers) {
            return refused;
        }
        match headers.get("mcp-session-id") {
            None => self.not_allowed(),
            Some(id) if self.sessions.remove(id) => HttpReply::status(200),
            Some(_) => unknown_session(),
        }
    }

    /// `POST`: one JSON-RPC message (or a 2025-03-26 batch) and what it is answered with.
    #[must_use]
    pub fn post(&self, headers: &HttpHeaders, body: &[u8]) -> HttpReply {
        if let Some(refused) = self.refused_origin(headers) {
            return refused;
        }
        let json = headers
            .get("content-type")
            .and_then(|t| t.split(';').next())
            .is_some_and(|t| t.trim().eq_ignore_ascii_case("application/json"));
        if !json {
            let error = RequestError::invalid_request(
                "Unsupported Media Type: the body must be JSON (Content-Type: application/json)",
            );
            return HttpReply::error(415, error, None);
        }
        if !headers.accepts("application/json") && !headers.accepts("text/event-stream") {
            let error = RequestError::invalid_request(
                "Not Acceptable: the client must accept application/json and text/event-stream",
            );
            return HttpReply::error(406, error, None);
        }
        let value: Value = match serde_json::from_slice(body) {
            Ok(value) => value,
            Err(e) => {
                let error = RequestError::new(ErrorCode::PARSE_ERROR, format!("Parse error: {e}"));
                return HttpReply::error(400, error, None);
            }
        };
        let session_id = headers.get("mcp-session-id");
        match value {
            Value::Object(message) => {
                let params = message.get("params").and_then(Value::as_object);
                let method = message.get("method").and_then(Value::as_str);
                if params.is_some_and(methods::is_stateless) {
                    return self.stateless(headers, message);
                }
                match session_id {
                    Some(id) => self.in_session(headers, id, Value::Object(message)),
                    None if method == Some("initialize") => self.initialize(message),
                    None => self.stateless(headers, message),
                }
            }
            Value::Array(_) => match session_id {
                // Batches exist in 2025-03-26 only: the session's dispatch decides.
                Some(id) => self.in_session(headers, id, value),
                None => HttpReply::error(
                    400,
                    RequestError::invalid_request(
                        "Bad Request: a JSON-RPC batch needs a 2025-03-26 session \
                         (send initialize first)",
                    ),
                    None,
                ),
            },
            _ => HttpReply::error(
                400,
                RequestError::invalid_request("Invalid Request: a message must be a JSON object"),
                None,
            ),
        }
    }

    /// 403 for a `Host` or an `Origin` this server does not answer (DNS-rebinding protection).
    fn refused_origin(&self, headers: &HttpHeaders) -> Option<HttpReply> {
        if let Some(host) = headers.get("host") {
            if !host_allowed(host, self.config.allowed_hosts.as_deref()) {
                let error = RequestError::invalid_request(format!(
                    "Forbidden: Host {host:?} is not allowed (list it in allowed_hosts to serve \
                     under that name)"
                ));
                return Some(HttpReply::error(403, error, None));
            }
        }
        let origin = headers.get("origin")?;
        if origin_allowed(origin, &self.config.allowed_origins) {
            return None;
        }
        let error = RequestError::invalid_request(format!(
            "Forbidden: Origin {origin:?} is not allowed (list it in allowed_origins to let \
             that site call this server)"
        ));
        Some(HttpReply::error(403, error, None))
    }

    /// A request outside any session: 2026-07-28, served by a session of its own once its
    /// envelope and its mirrored headers are checked. (A notification is accepted and ignored:
    /// that revision defines none over HTTP, and outside a session none has anything to act on.)
    fn stateless(&self, headers: &HttpHeaders, message: Map<String, Value>) -> HttpReply {
        let id = match IdField::of(&message) {
            IdField::Valid(id) => Some(id),
            IdField::Absent if message.contains_key("method") => return HttpReply::status(202),
            IdField::Absent => {
                let error = RequestError::invalid_request(
                    "Bad Request: a response outside any session answers nothing",
                );
                return HttpReply::error(400, error, None);
            }
            IdField::Invalid => None,
        };
        let method = message.get("method").and_then(Value::as_str).unwrap_or("");
        if let Some(request) = &id {
            let no_params = Map::new();
            let params = message
                .get("params")
                .and_then(Value::as_object)
                .unwrap_or(&no_params);
            if let Err(mut error) = methods::envelope(params) {
                if error.code == ErrorCode::INVALID_PARAMS {
                    error.message.push_str(
                        " (a request outside a session is served as 2026-07-28; for an \
                         earlier revision send initialize, then Mcp-Session-Id)",
                    );
                    return HttpReply::error(400, error, Some(request));
                }
            }
            let schema = (method == "tools/call")
                .then(|| params.get("name").and_then(Value::as_str))
                .flatten()
                .and_then(|name| self.registry().get(name))
                .map(|tool| &tool.spec.input_schema);
            if let Err(error) = check_mirrored(headers, method, params, schema) {
                return HttpReply::error(400, error, id.as_ref());
            }
        }
        let method = method.to_owned();
        let (session, sink) = self.open(PeerState::new());
        session.handle_value(Value::Object(message));
        self.reply(session, sink, None, |frame| {
            stateless_status(frame, &method)
        })
    }

    /// A request of a handshake-era session.
    fn in_session(&self, headers: &HttpHeaders, id: &str, message: Value) -> HttpReply {
        let Some(client) = self.sessions.get(id) else {
            return unknown_session();
        };
        if let (Some(sent), Some(handshake)) = (
            headers.get("mcp-protocol-version"),
            client.peer.handshake.get(),
        ) {
            if sent.trim() != handshake.revision.as_str() {
                let error = RequestError::invalid_request(format!(
                    "Bad Request: MCP-Protocol-Version {sent:?} is not the session's protocol \
                     version {}",
                    handshake.revision
                ));
                return HttpReply::error(400, error, request_id(&message).as_ref());
            }
        }
        if let Some(cancelled) = cancelled_id(&message) {
            client.cancel(&cancelled);
            return HttpReply::status(202);
        }
        let (session, sink) = self.open(client.peer.clone());
        session.handle_value(message);
        self.reply(session, sink, Some(&client), |_| 200)
    }

    /// `initialize` outside a session opens a handshake-era session.
    fn initialize(&self, message: Map<String, Value>) -> HttpReply {
        let peer = PeerState::new();
        let (session, sink) = self.open(peer.clone());
        session.handle_value(Value::Object(message));
        let mut reply = self.reply(session, sink, None, |_| 200);
        if peer.handshake.get().is_some() {
            match self.sessions.create(peer) {
                Ok(id) => reply.headers.push(("Mcp-Session-Id", id)),
                Err(e) => {
                    let error = RequestError::new(
                        ErrorCode::INTERNAL_ERROR,
                        format!("cannot make a session id: {e} (the OS random source failed)"),
                    );
                    return HttpReply::error(500, error, None);
                }
            }
        }
        reply
    }

    fn registry(&self) -> &Registry {
        self.server.registry()
    }

    fn open(&self, peer: PeerState) -> (Arc<Session>, Arc<Sink>) {
        let sink = Arc::new(Sink::default());
        let session = self
            .server
            .exchange_session(Arc::clone(&sink) as _, peer, &self.gate);
        (session, sink)
    }

    /// Everything answered already: a JSON body (or 202 when nothing is owed); else the
    /// exchange that streams the rest.
    fn reply(
        &self,
        session: Arc<Session>,
        sink: Arc<Sink>,
        client: Option<&Arc<ClientSession>>,
        status_of: impl Fn(&[u8]) -> u16,
    ) -> HttpReply {
        if session.outbox.owes_nothing() && !session.queue.has_jobs() {
            let mut frames = sink.take_all();
            return match frames.len() {
                0 => HttpReply::status(202),
                _ => {
                    // A quick answer has one frame (a batch's is one array).
                    let body = frames.swap_remove(frames.len() - 1);
                    HttpReply {
                        body: body.clone(),
                        ..HttpReply::status(status_of(&body))
                    }
                }
            };
        }
        let member = client.map(|c| c.join(&session));
        HttpReply {
            exchange: Some(Exchange::new(session, sink, member)),
            ..HttpReply::status(200)
        }
    }
}

/// 404 with a JSON-RPC error: the session ended, expired, or never was.
fn unknown_session() -> HttpReply {
    let error = RequestError::new(
        ErrorCode(-32001),
        "Session not found: it ended or expired (send initialize again without Mcp-Session-Id)",
    );
    HttpReply::error(404, error, None)
}

fn request_id(message: &Value) -> Option<RequestId> {
    match message.as_object().map(IdField::of) {
        Some(IdField::Valid(id)) => Some(id),
        _ => None,
    }
}

/// The request id a `notifications/cancelled` names.
fn cancelled_id(message: &Value) -> Option<RequestId> {
    if message.get("method").and_then(Value::as_str) != Some("notifications/cancelled")
        || message.get("id").is_some()
    {
        return None;
    }
    message
        .get("params")
        .and_then(|p| p.get("requestId"))
        .and_then(RequestId::from_value)
}

/// The HTTP status of a 2026-07-28 answer: 400 for the version and header errors, 404 for an
/// unknown method, 200 for every other result or error.
fn stateless_status(frame: &[u8], method: &str) -> u16 {
    const UNSUPPORTED: ErrorCode = ErrorCode::UNSUPPORTED_PROTOCOL_VERSION;
    const MISSING_CAPABILITY: ErrorCode = ErrorCode(-32021);
    // Only error frames are parsed (their key cannot appear unescaped inside a string).
    if !frame.windows(16).any(|w| w == br#""error":{"code":"#) {
        return 200;
    }
    let code = serde_json::from_slice::<Value>(frame)
        .ok()
        .and_then(|v| v.get("error")?.get("code")?.as_i64())
        .map(ErrorCode);
    match code {
        Some(HEADER_MISMATCH | UNSUPPORTED | MISSING_CAPABILITY | ErrorCode::PARSE_ERROR) => 400,
        Some(ErrorCode::INVALID_REQUEST) => 400,
        // An unknown tool is a tool's absence, not the method's.
        Some(ErrorCode::METHOD_NOT_FOUND) if method != "tools/call" => 404,
        _ => 200,
    }
}

/// Whether `host` (a `Host` header: name and optional port) may be served.
fn host_allowed(host: &str, allowed: Option<&[String]>) -> bool {
    let name = if let Some(v6) = host.strip_prefix('[') {
        v6.split_once(']').map_or("", |(h, _)| h)
    } else {
        host.rsplit_once(':').map_or(host, |(h, _)| h)
    };
    match allowed {
        None => matches!(name, "localhost" | "127.0.0.1" | "::1"),
        Some(list) => list
            .iter()
            .any(|a| a == "*" || a.eq_ignore_ascii_case(host) || a.eq_ignore_ascii_case(name)),
    }
}

/// Whether a browser page from `origin` may call: local origins always, others when listed.
fn origin_allowed(origin: &str, allowed: &[String]) -> bool {
    if allowed
        .iter()
        .any(|a| a == "*" || a.eq_ignore_ascii_case(origin))
    {
        return true;
    }
    let Some((scheme, rest)) = origin.split_once("://") else {
        return false;
    };
    if !matches!(scheme, "http" | "https") {
        return false;
    }
    let host = if let Some(v6) = rest.strip_prefix('[') {
        v6.split_once(']').map_or("", |(h, _)| h)
    } else {
        rest.split(':').next().unwrap_or("")
    };
    matches!(host, "localhost" | "127.0.0.1" | "::1")
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn local_origins_pass_and_others_need_listing() {
        assert!(origin_allowed("http://localhost:6274", &[]));
        assert!(origin_allowed("http://127.0.0.1", &[]));
        assert!(origin_allowed("http://[::1]:8080", &[]));
        assert!(!origin_allowed("http://localhost.evil.example", &[]));
        assert!(!origin_allowed("https://evil.example", &[]));
        assert!(!origin_allowed("null", &[]));
        let listed = vec!["https://app.example.com".to_owned()];
        assert!(origin_allowed("https://app.example.com", &listed));
        assert!(origin_allowed("https://anything", &["*".to_owned()]));
    }

    #[test]
    fn local_hosts_pass_unless_a_list_says_otherwise() {
        assert!(host_allowed("localhost:8000", None));
        assert!(host_allowed("127.0.0.1", None));
        assert!(host_allowed("[::1]:9", None));
        assert!(!host_allowed("evil.example.com", None));
        assert!(!host_allowed("evil.example.com:8000", None));
        let listed = vec!["mcp.example.com".to_owned()];
        assert!(host_allowed("mcp.example.com:443", Some(&listed)));
        assert!(!host_allowed("localhost", Some(&listed)));
        assert!(host_allowed("anything", Some(&["*".to_owned()])));
    }

    #[test]
    fn stateless_errors_map_to_their_http_statuses() {
        let err = |code: i64| {
            format!(r#"{{"jsonrpc":"2.0","id":1,"error":{{"code":{code},"message":"x"}}}}"#)
        };
        assert_eq!(stateless_status(err(-32020).as_bytes(), "tools/list"), 400);
        assert_eq!(stateless_status(err(-32022).as_bytes(), "tools/list"), 400);
        assert_eq!(stateless_status(err(-32601).as_bytes(), "nope"), 404);
        assert_eq!(stateless_status(err(-32601).as_bytes(), "tools/call"), 200);
        assert_eq!(stateless_status(err(-32602).as_bytes(), "tools/call"), 200);
        let ok = br#"{"jsonrpc":"2.0","id":1,"result":{"text":"\"error\":{\"code\":-32020"}}"#;
        assert_eq!(stateless_status(ok, "tools/call"), 200);
    }
}
