//! What a running tool can see and do: [`CallContext`].

use std::sync::{Arc, Mutex};

use serde_json::{Map, Value};

use crate::flags::CallFlags;
use crate::jsonrpc::{RequestId, notification_frame};
use crate::log::log_line;
use crate::outbox::Outbox;
use crate::protocol::{Feature, LogLevel, Revision};
use crate::sync::lock;

/// The view a tool has of its call: ids, revision, client, cancellation, progress and logging.
///
/// Cheap to clone; a clone kept after the call returns can still be queried but sends nothing.
#[derive(Clone)]
pub struct CallContext {
    pub(crate) outbox: Arc<Outbox>,
    pub(crate) flags: Arc<CallFlags>,
    pub(crate) id: RequestId,
    pub(crate) tool: Arc<str>,
    pub(crate) revision: Revision,
    pub(crate) progress_token: Option<Value>,
    pub(crate) client_info: Option<Arc<Value>>,
    /// 2026-07-28: the level requested in this request's `_meta` (absent = no log notifications).
    pub(crate) request_log_level: Option<LogLevel>,
    /// This call's id in the capture cell (see [`CallContext::write_output`]).
    pub(crate) member: u64,
    last_progress: Arc<Mutex<Option<f64>>>,
}

impl CallContext {
    #[allow(clippy::too_many_arguments)]
    pub(crate) fn new(
        outbox: Arc<Outbox>,
        flags: Arc<CallFlags>,
        id: RequestId,
        tool: Arc<str>,
        revision: Revision,
        progress_token: Option<Value>,
        client_info: Option<Arc<Value>>,
        request_log_level: Option<LogLevel>,
    ) -> Self {
        Self {
            outbox,
            flags,
            id,
            tool,
            revision,
            progress_token,
            client_info,
            request_log_level,
            member: crate::capture::new_member(),
            last_progress: Arc::new(Mutex::new(None)),
        }
    }

    /// The JSON-RPC id of the request, with its JSON type.
    #[must_use]
    pub fn request_id(&self) -> &RequestId {
        &self.id
    }

    /// Writes (part of) `bytes` to `fd` (1 or 2) as this call's own output: while calls run
    /// concurrently, what a call's code writes this way is attributed to it alone (a language
    /// binding routes the call's `print`s here). Returns the count written.
    ///
    /// # Errors
    ///
    /// The write failed.
    pub fn write_output(&self, fd: i32, bytes: &[u8]) -> std::io::Result<usize> {
        crate::capture::write_attributed(self.member, fd, bytes)
    }

    /// The tool's name.
    #[must_use]
    pub fn tool_name(&self) -> &str {
        &self.tool
    }

    /// The protocol revision of this request.
    #[must_use]
    pub fn revision(&self) -> Revision {
        self.revision
    }

    /// The client's `clientInfo` (from `initialize`, or this request's `_meta`).
    #[must_use]
    pub fn client_info(&self) -> Option<&Value> {
        self.client_info.as_deref()
    }

    /// True once the client cancelled the call, the timeout passed or the server is shutting down.
    #[must_use]
    pub fn is_cancelled(&self) -> bool {
        self.flags.is_cancelled()
    }

    /// Registers `hook` to run (on another thread) when the call is cancelled; runs it at once if
    /// it already was.
    pub fn on_cancel(&self, hook: impl Fn() + Send + Sync + 'static) {
        self.flags.on_cancel(hook);
    }

    /// Sends `notifications/progress` when the request carried a progress token.
    ///
    /// Returns whether a notification was written: never without a token, never after the
    /// response or a cancellation, and only when `done` increases.
    pub fn progress(&self, done: f64, total: Option<f64>, message: Option<&str>) -> bool {
        let Some(token) = &self.progress_token else {
            return false;
        };
        if self.flags.is_cancelled() || !done.is_finite() {
            return false;
        }
        {
            let mut last = lock(&self.last_progress);
            if last.is_some_and(|prev| done <= prev) {
                return false;
            }
            *last = Some(done);
        }
        let mut params = Map::new();
        params.insert("progressToken".into(), token.clone());
        params.insert("progress".into(), number(done));
        if let Some(total) = total.filter(|t| t.is_finite()) {
            params.insert("total".into(), number(total));
        }
        if let Some(message) = message {
            if self.revision.supports(Feature::ProgressMessage) {
                params.insert("message".into(), Value::from(message));
            }
        }
        let frame = notification_frame("notifications/progress", Value::Object(params));
        self.send_while_running(&frame)
    }

    /// Logs `message` at `level`: as `notifications/message` when the client asked for this level
    /// (`logging/setLevel`, or the request's `_meta` log level in 2026-07-28), otherwise as a
    /// labelled line on the real stderr. Returns whether a notification was sent.
    pub fn log(&self, level: LogLevel, message: &str) -> bool {
        let threshold = if self.revision.is_stateless() {
            self.request_log_level
        } else {
            self.outbox.log_level()
        };
        let sent = threshold.is_some_and(|min| level >= min) && !self.flags.is_cancelled() && {
            let mut params = Map::new();
            params.insert("level".into(), Value::from(level.as_str()));
            params.insert("logger".into(), Value::from(&*self.tool));
            params.insert("data".into(), Value::from(message));
            let frame = notification_frame("notifications/message", Value::Object(params));
            self.send_while_running(&frame)
        };
        if !sent {
            log_line(&format!(
                "[{} #{}] {}: {}",
                self.tool,
                self.id,
                level.as_str(),
                message
            ));
        }
        sent
    }
}

impl CallContext {
    /// Writes a request-scoped notification unless the call was answered or cancelled.
    fn send_while_running(&self, frame: &Value) -> bool {
        self.flags
            .while_open(false, || {
                if self.flags.is_cancelled() {
                    return false;
                }
                self.outbox.write(frame);
                true
            })
            .unwrap_or(false)
    }
}

fn number(v: f64) -> Value {
    // Whole numbers go out as integers (`50`, not `50.0`).
    #[allow(clippy::cast_possible_truncation)]
    if v.fract() == 0.0 && v.abs() < 9.0e15 {
        Value::from(v as i64)
    } else {
        serde_json::Number::from_f64(v).map_or(Value::Null, Value::Number)
    }
}
