//! What an inbound frame means: parse errors, batches, notifications, and routing each request
//! to its answer (quick methods at once, tool calls onto the queue).

use std::sync::Arc;

use serde_json::{Map, Value, json};

use super::{Job, Session, Work};
use crate::completion;
use crate::flags::CallFlags;
use crate::json_syntax::{self, Syntax};
use crate::jsonrpc::{
    ErrorCode, IdField, Members, RequestError, RequestId, result_frame, sniff_id,
};
use crate::log::log_line;
use crate::methods;
use crate::outbox::{Batch, Route};
use crate::protocol::{
    Feature, LogLevel, META_CLIENT_CAPABILITIES, META_PROTOCOL_VERSION, Revision,
};
use crate::registry::RegisteredTool;
use crate::resource;

/// What handling one request produced.
enum Reply {
    /// Nothing to send (a notification, an ignored frame).
    None,
    /// Send this now.
    Now(Value),
    /// A tool call was queued; its response comes later.
    Later,
}

/// Who is asking, as far as a tool call needs to know.
struct Caller {
    revision: Revision,
    client_info: Option<Arc<Value>>,
    log_level: Option<LogLevel>,
}

impl Session {
    /// Handles one inbound line (a frame or a batch).
    pub(crate) fn handle_line(&self, bytes: &[u8]) {
        if let Some(members) = Members::parse(bytes) {
            if let Reply::Now(frame) = self.handle_message(members, &Route::Direct) {
                self.outbox.write(&frame);
            }
            return;
        }
        let value: Value = match serde_json::from_slice(bytes) {
            Ok(v) => v,
            Err(e) => match self.refused_by_parser(bytes, &e) {
                Some(value) => value,
                None => return,
            },
        };
        self.handle_value(value);
    }

    /// Handles one parsed message (or batch).
    pub(crate) fn handle_value(&self, value: Value) {
        match value {
            Value::Array(items) => self.handle_batch(items),
            Value::Object(obj) => match self.handle_message(Members::from_map(obj), &Route::Direct)
            {
                Reply::Now(frame) => self.outbox.write(&frame),
                Reply::None | Reply::Later => {}
            },
            _ => self.outbox.write(
                &RequestError::invalid_request("Invalid Request: a frame must be a JSON object")
                    .into_frame(None),
            ),
        }
    }

    /// A line the parser refused: well-formed JSON with lone surrogate escapes is parsed again
    /// with them replaced (`U+FFFD`, as a lossy decoder would); other well-formed JSON the parser
    /// cannot hold (nested deeper than its limit, a number beyond a float's range) is a parse
    /// error answered under the request's id; a line that is not JSON at all gets a parse error
    /// without an id (an id found in broken bytes is no one's).
    fn refused_by_parser(&self, bytes: &[u8], error: &serde_json::Error) -> Option<Value> {
        let why = if std::str::from_utf8(bytes).is_err() {
            "the line is not valid UTF-8".to_string()
        } else {
            format!("the line is not JSON ({error})")
        };
        let id = match json_syntax::scan(bytes) {
            Syntax::Malformed => None,
            Syntax::WellFormed { lone_surrogates } => {
                if !lone_surrogates.is_empty() {
                    let mut repaired = bytes.to_vec();
                    json_syntax::replace_lone_surrogates(&mut repaired, &lone_surrogates);
                    if let Ok(value) = serde_json::from_slice(&repaired) {
                        return Some(value);
                    }
                }
                sniff_id(bytes)
            }
        };
        let error = RequestError::new(ErrorCode::PARSE_ERROR, format!("Parse error: {why}"));
        self.outbox.write(&error.into_frame(id.as_ref()));
        None
    }

    fn handle_batch(&self, items: Vec<Value>) {
        let batching = self
            .handshake
            .get()
            .is_some_and(|h| h.revision.supports(Feature::Batches));
        if !batching || items.is_empty() {
            let msg = if items.is_empty() {
                "Invalid Request: an empty batch"
            } else {
                "Invalid Request: JSON-RPC batches exist only in protocol revision 2025-03-26 \
                 (send one message per line)"
            };
            self.outbox
                .write(&RequestError::invalid_request(msg).into_frame(None));
            return;
        }
        let batch = Arc::new(Batch::new());
        for item in items {
            let frame = match item {
                Value::Object(obj) => {
                    if obj.get("method").and_then(Value::as_str) == Some("initialize") {
                        let id = match IdField::of(&obj) {
                            IdField::Valid(id) => Some(id),
                            _ => None,
                        };
                        RequestError::invalid_request(
                            "Invalid Request: initialize must not be part of a batch",
                        )
                        .into_frame(id.as_ref())
                    } else {
                        batch.expect();
                        let members = Members::from_map(obj);
                        match self.handle_message(members, &Route::Batch(Arc::clone(&batch))) {
                            Reply::Now(f) => batch.deliver(&self.outbox, Some(f)),
                            Reply::None => batch.deliver(&self.outbox, None),
                            Reply::Later => {}
                        }
                        continue;
                    }
                }
                _ => RequestError::invalid_request(
                    "Invalid Request: a batch member must be a JSON object",
                )
                .into_frame(None),
            };
            batch.expect();
            batch.deliver(&self.outbox, Some(frame));
        }
        batch.deliver(&self.outbox, None);
    }

    fn handle_message(&self, frame: Members, route: &Route) -> Reply {
        let Members {
            jsonrpc,
            id,
            method,
            params: raw_params,
            response,
        } = frame;
        let id = IdField::of_member(id.as_ref());
        let valid_id = match &id {
            IdField::Valid(id) => Some(id),
            _ => None,
        };
        let Some(method) = method else {
            if response {
                log_line("ignored a response from the client (this server sends no requests)");
                return Reply::None;
            }
            return Reply::Now(
                RequestError::new(
                    ErrorCode::PARSE_ERROR,
                    "Parse error: the frame has no \"method\" and is not a response",
                )
                .into_frame(valid_id),
            );
        };
        let Some(method) = method.as_str() else {
            return Reply::Now(
                RequestError::invalid_request("Invalid Request: \"method\" must be a string")
                    .into_frame(valid_id),
            );
        };
        if jsonrpc.as_ref().and_then(Value::as_str) != Some("2.0") {
            return Reply::Now(
                RequestError::invalid_request("Invalid Request: \"jsonrpc\" must be \"2.0\"")
                    .into_frame(valid_id),
            );
        }
        let id = match id {
            IdField::Absent => {
                self.handle_notification(method, raw_params.as_ref());
                return Reply::None;
            }
            IdField::Invalid => {
                return Reply::Now(
                    RequestError::invalid_request(
                        "Invalid Request: \"id\" must be a string or an integer",
                    )
                    .into_frame(None),
                );
            }
            IdField::Valid(id) => id,
        };
        let params = match raw_params {
            None | Some(Value::Null) => Map::new(),
            Some(Value::Object(p)) => p,
            Some(_) => {
                return Reply::Now(
                    RequestError::invalid_params("Invalid params: \"params\" must be an object")
                        .into_frame(Some(&id)),
                );
            }
        };
        match self.handle_request(&id, method, params, route) {
            Ok(reply) => reply,
            Err(error) => Reply::Now(error.into_frame(Some(&id))),
        }
    }

    fn handle_notification(&self, method: &str, params: Option<&Value>) {
        if method == "notifications/cancelled" {
            if let Some(id) = params
                .and_then(|p| p.get("requestId"))
                .and_then(RequestId::from_value)
            {
                self.outbox.cancel(&id);
            }
        }
        // notifications/initialized and anything unknown: nothing to do.
    }

    fn handle_request(
        &self,
        id: &RequestId,
        method: &str,
        params: Map<String, Value>,
        route: &Route,
    ) -> Result<Reply, RequestError> {
        if methods::is_stateless(&params) {
            return self.handle_stateless(id, method, params, route);
        }
        let Some(handshake) = self.handshake.get() else {
            return match method {
                "initialize" => {
                    let handshake = methods::negotiate(&params)?;
                    let revision = handshake.revision;
                    if self.handshake.set(handshake).is_err() {
                        return Err(RequestError::invalid_request(
                            "Invalid Request: the session is already initialized",
                        ));
                    }
                    let result = methods::initialize(&self.info, &self.registry, revision);
                    Ok(Reply::Now(result_frame(id, result)))
                }
                "ping" => Ok(Reply::Now(result_frame(id, json!({})))),
                _ => Err(RequestError::invalid_params(format!(
                    "Invalid params: {method:?} arrived before initialize and without the \
                     2026-07-28 envelope (params._meta with {META_PROTOCOL_VERSION} and \
                     {META_CLIENT_CAPABILITIES}); send initialize first"
                ))),
            };
        };
        let rev = handshake.revision;
        let caller = Caller {
            revision: rev,
            client_info: handshake.client_info.clone(),
            log_level: None,
        };
        match method {
            "initialize" => Err(RequestError::invalid_request(format!(
                "Invalid Request: the session is already initialized (protocol {rev}); \
                 initialize may be sent once per process"
            ))),
            "ping" => Ok(Reply::Now(result_frame(id, json!({})))),
            "tools/list" => {
                let result = methods::list_tools(&self.registry, &self.config, rev, &params)?;
                Ok(Reply::Now(result_frame(id, result)))
            }
            "tools/call" => self.enqueue_call(id, params, caller, route),
            "prompts/list" if self.has_prompts() => {
                let result = methods::list_prompts(&self.registry, &self.config, rev, &params)?;
                Ok(Reply::Now(result_frame(id, result)))
            }
            "prompts/get" if self.has_prompts() => self.enqueue_prompt(id, params, caller, route),
            "resources/list" if self.registry.has_resources() => {
                let result = methods::list_resources(&self.registry, &self.config, rev, &params)?;
                Ok(Reply::Now(result_frame(id, result)))
            }
            "resources/templates/list" if self.registry.has_resources() => {
                let result =
                    methods::list_resource_templates(&self.registry, &self.config, rev, &params)?;
                Ok(Reply::Now(result_frame(id, result)))
            }
            "resources/read" if self.registry.has_resources() => {
                self.enqueue_read(id, params, caller, route)
            }
            "completion/complete" if self.registry.offers_completions() => {
                self.complete(id, &params, caller, route)
            }
            "logging/setLevel" => {
                self.outbox.set_log_level(methods::log_level(&params)?);
                Ok(Reply::Now(result_frame(id, json!({}))))
            }
            _ => Err(RequestError::method_not_found(method)),
        }
    }

    fn handle_stateless(
        &self,
        id: &RequestId,
        method: &str,
        params: Map<String, Value>,
        route: &Route,
    ) -> Result<Reply, RequestError> {
        let envelope = methods::envelope(&params)?;
        let rev = envelope.revision;
        let caller = Caller {
            revision: rev,
            client_info: envelope.client_info,
            log_level: envelope.log_level,
        };
        let result = match method {
            "server/discover" => methods::discover(&self.info, &self.registry, &self.config),
            "prompts/list" if self.has_prompts() => {
                methods::list_prompts(&self.registry, &self.config, rev, &params)?
            }
            "prompts/get" if self.has_prompts() => {
                return self.enqueue_prompt(id, params, caller, route);
            }
            "resources/list" if self.registry.has_resources() => {
                methods::list_resources(&self.registry, &self.config, rev, &params)?
            }
            "resources/templates/list" if self.registry.has_resources() => {
                methods::list_resource_templates(&self.registry, &self.config, rev, &params)?
            }
            "resources/read" if self.registry.has_resources() => {
                return self.enqueue_read(id, params, caller, route);
            }
            "completion/complete" if self.registry.offers_completions() => {
                return self.complete(id, &params, caller, route);
            }
            "tools/list" => methods::list_tools(&self.registry, &self.config, rev, &params)?,
            "tools/call" => {
                return self.enqueue_call(id, params, caller, route);
            }
            _ => return Err(RequestError::method_not_found(method)),
        };
        Ok(Reply::Now(result_frame(
            id,
            methods::stamp(&self.info, rev, result),
        )))
    }

    /// Whether prompts are offered (the `prompts` capability; otherwise their methods are
    /// unknown, `-32601`).
    fn has_prompts(&self) -> bool {
        self.registry.prompts().len() > 0
    }

    fn enqueue_call(
        &self,
        id: &RequestId,
        mut params: Map<String, Value>,
        caller: Caller,
        route: &Route,
    ) -> Result<Reply, RequestError> {
        let Some(name) = params.get("name").and_then(Value::as_str) else {
            return Err(RequestError::invalid_params(
                "Invalid params: tools/call needs \"name\" (a string)",
            ));
        };
        let Some(tool) = self.registry.get(name).map(Arc::clone) else {
            let known: Vec<&str> = self.registry.names().take(20).collect();
            return Err(RequestError::new(
                ErrorCode::METHOD_NOT_FOUND,
                format!("Unknown tool: {name:?} (available: {})", known.join(", ")),
            ));
        };
        let arguments = match params.remove("arguments") {
            None | Some(Value::Null) => None,
            Some(v @ Value::Object(_)) => Some(v),
            Some(_) => {
                return Err(RequestError::invalid_params(
                    "Invalid params: \"arguments\" must be an object",
                ));
            }
        };
        self.push_job(id, tool, arguments, &params, caller, route, Work::Call)
    }

    /// `prompts/get`: the arguments are checked here (a missing or unknown one is `-32602` at
    /// once); the prompt then runs on the worker like a tool call.
    fn enqueue_prompt(
        &self,
        id: &RequestId,
        params: Map<String, Value>,
        caller: Caller,
        route: &Route,
    ) -> Result<Reply, RequestError> {
        let Some(name) = params.get("name").and_then(Value::as_str) else {
            return Err(RequestError::invalid_params(
                "Invalid params: prompts/get needs \"name\" (a string)",
            ));
        };
        let Some(prompt) = self.registry.prompt(name).map(Arc::clone) else {
            let known: Vec<&str> = self
                .registry
                .prompts()
                .take(20)
                .map(|p| p.name.as_str())
                .collect();
            return Err(RequestError::invalid_params(format!(
                "Invalid params: unknown prompt {name:?} (available: {})",
                known.join(", ")
            )));
        };
        let arguments = prompt
            .spec
            .arguments_from(&params, &prompt.runner.spec.input_schema)?;
        let runner = Arc::clone(&prompt.runner);
        let work = Work::Prompt(prompt);
        self.push_job(id, runner, Some(arguments), &params, caller, route, work)
    }

    /// `resources/read`: an unknown URI is answered at once (`-32002`, or `-32602` from
    /// 2026-07-28), as is a template variable its type refuses; the read runs on the worker.
    fn enqueue_read(
        &self,
        id: &RequestId,
        params: Map<String, Value>,
        caller: Caller,
        route: &Route,
    ) -> Result<Reply, RequestError> {
        let Some(uri) = params.get("uri").and_then(Value::as_str) else {
            return Err(RequestError::invalid_params(
                "Invalid params: resources/read needs \"uri\" (a string)",
            ));
        };
        let Some(resource) = self.registry.resource_for(uri).map(Arc::clone) else {
            return Err(resource::not_found(uri, caller.revision));
        };
        let arguments = resource
            .spec
            .arguments(uri, &resource.runner.spec.input_schema)?;
        let runner = Arc::clone(&resource.runner);
        let work = Work::Read(resource, Arc::from(uri));
        self.push_job(id, runner, Some(arguments), &params, caller, route, work)
    }

    /// `completion/complete`: answered at once from the declared values, or queued for the
    /// server's completer.
    fn complete(
        &self,
        id: &RequestId,
        params: &Map<String, Value>,
        caller: Caller,
        route: &Route,
    ) -> Result<Reply, RequestError> {
        let request = completion::request(&self.registry, params)?;
        let Some(completer) = self.registry.completer().map(Arc::clone) else {
            let result = completion::result(request.declared);
            return Ok(Reply::Now(result_frame(
                id,
                methods::stamp(&self.info, caller.revision, result),
            )));
        };
        let work = Work::Complete(Arc::new(request.declared));
        let arguments = Some(request.arguments);
        self.push_job(id, completer, arguments, params, caller, route, work)
    }

    /// Queues `tool` to run with `arguments` for request `id`; its answer is sent later.
    #[allow(clippy::too_many_arguments)]
    fn push_job(
        &self,
        id: &RequestId,
        tool: Arc<RegisteredTool>,
        arguments: Option<Value>,
        params: &Map<String, Value>,
        caller: Caller,
        route: &Route,
        work: Work,
    ) -> Result<Reply, RequestError> {
        let progress_token = params
            .get("_meta")
            .and_then(|m| m.get("progressToken"))
            .filter(|t| t.is_string() || t.is_i64() || t.is_u64())
            .cloned();
        let flags = Arc::new(CallFlags::default());
        if !self.outbox.expect(id, &flags, route) {
            return Err(RequestError::invalid_request(format!(
                "Invalid Request: request id {id} is already in use by a call in progress"
            )));
        }
        let pushed = self.queue.push(Job {
            id: id.clone(),
            tool,
            work,
            arguments,
            revision: caller.revision,
            progress_token,
            client_info: caller.client_info,
            log_level: caller.log_level,
            flags,
        });
        if let Err(job) = pushed {
            // The serve is stopping (a signal, the parent gone): answered, not run.
            self.refuse(job, "stopping");
        }
        Ok(Reply::Later)
    }
}
