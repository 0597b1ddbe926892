//! What a running tool can see and do: [`CallContext`].

use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex};

use serde_json::{Map, Value};

use crate::jsonrpc::{RequestId, notification_frame};
use crate::protocol::Revision;
use crate::server::Session;
use crate::sync::lock;

/// MCP log levels, in increasing severity.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub enum LogLevel {
    /// Detailed debugging information.
    Debug,
    /// General information.
    Info,
    /// Normal but significant events.
    Notice,
    /// Warning conditions.
    Warning,
    /// Error conditions.
    Error,
    /// Critical conditions.
    Critical,
    /// Action must be taken immediately.
    Alert,
    /// The system is unusable.
    Emergency,
}

impl LogLevel {
    const ALL: [Self; 8] = [
        Self::Debug,
        Self::Info,
        Self::Notice,
        Self::Warning,
        Self::Error,
        Self::Critical,
        Self::Alert,
        Self::Emergency,
    ];

    /// Parses a level name (`"debug"` … `"emergency"`).
    #[must_use]
    pub fn parse(s: &str) -> Option<Self> {
        Self::ALL.into_iter().find(|l| l.as_str() == s)
    }

    /// The level's wire name.
    #[must_use]
    pub const fn as_str(self) -> &'static str {
        match self {
            Self::Debug => "debug",
            Self::Info => "info",
            Self::Notice => "notice",
            Self::Warning => "warning",
            Self::Error => "error",
            Self::Critical => "critical",
            Self::Alert => "alert",
            Self::Emergency => "emergency",
        }
    }

    pub(crate) fn to_u8(self) -> u8 {
        self as u8
    }

    pub(crate) fn from_u8(v: u8) -> Option<Self> {
        Self::ALL.get(usize::from(v)).copied()
    }
}

type CancelHook = Box<dyn Fn() + Send + Sync>;

/// Per-call state shared by the worker, the reader (cancellation) and the timer (timeouts).
#[derive(Default)]
pub(crate) struct CallFlags {
    cancelled: AtomicBool,
    timed_out: AtomicBool,
    /// Set (under the lock) once the response is being written: nothing may follow it.
    finished: Mutex<bool>,
    hooks: Mutex<Vec<CancelHook>>,
}

impl CallFlags {
    pub(crate) fn cancel(&self) {
        // Taken so that a progress or log write in flight finishes before the flag flips, and
        // none starts after it.
        let guard = lock(&self.finished);
        let first = !self.cancelled.swap(true, Ordering::SeqCst);
        drop(guard);
        if first {
            let hooks = std::mem::take(&mut *lock(&self.hooks));
            for hook in hooks {
                hook();
            }
        }
    }

    /// Cancels without waiting for a write in flight: for when the output is already dead (the
    /// caller may be that very write, holding the call's write lock).
    pub(crate) fn cancel_unordered(&self) {
        if !self.cancelled.swap(true, Ordering::SeqCst) {
            let hooks = std::mem::take(&mut *lock(&self.hooks));
            for hook in hooks {
                hook();
            }
        }
    }

    pub(crate) fn time_out(&self) {
        self.timed_out.store(true, Ordering::SeqCst);
        self.cancel();
    }

    pub(crate) fn is_cancelled(&self) -> bool {
        self.cancelled.load(Ordering::SeqCst)
    }

    pub(crate) fn timed_out(&self) -> bool {
        self.timed_out.load(Ordering::SeqCst)
    }

    /// Runs `f` unless the call has finished; `finish = true` marks it finished.
    pub(crate) fn while_open<T>(&self, finish: bool, f: impl FnOnce() -> T) -> Option<T> {
        let mut done = lock(&self.finished);
        if *done {
            return None;
        }
        if finish {
            *done = true;
        }
        Some(f())
    }
}

/// The view a tool has of its call: ids, revision, client, cancellation, progress and logging.
///
/// Cheap to clone; a clone kept after the call returns can still be queried but sends nothing.
#[derive(Clone)]
pub struct CallContext {
    pub(crate) session: Arc<Session>,
    pub(crate) flags: Arc<CallFlags>,
    pub(crate) id: RequestId,
    pub(crate) tool: Arc<str>,
    pub(crate) revision: Revision,
    pub(crate) progress_token: Option<Value>,
    pub(crate) client_info: Option<Arc<Value>>,
    /// 2026-07-28: the level requested in this request's `_meta` (absent = no log notifications).
    pub(crate) request_log_level: Option<LogLevel>,
    last_progress: Arc<Mutex<Option<f64>>>,
}

impl CallContext {
    #[allow(clippy::too_many_arguments)]
    pub(crate) fn new(
        session: Arc<Session>,
        flags: Arc<CallFlags>,
        id: RequestId,
        tool: Arc<str>,
        revision: Revision,
        progress_token: Option<Value>,
        client_info: Option<Arc<Value>>,
        request_log_level: Option<LogLevel>,
    ) -> Self {
        Self {
            session,
            flags,
            id,
            tool,
            revision,
            progress_token,
            client_info,
            request_log_level,
            last_progress: Arc::new(Mutex::new(None)),
        }
    }

    /// The JSON-RPC id of the request, with its JSON type.
    #[must_use]
    pub fn request_id(&self) -> &RequestId {
        &self.id
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
        let mut hooks = lock(&self.flags.hooks);
        if self.flags.is_cancelled() {
            drop(hooks);
            hook();
        } else {
            hooks.push(Box::new(hook));
        }
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
            if self.revision.has_annotations() {
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
            self.session.log_level()
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
            crate::server::log_line(&format!(
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
                self.session.write_frame(frame);
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
