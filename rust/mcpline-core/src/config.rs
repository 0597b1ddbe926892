//! What a server is configured with: its identity ([`ServerInfo`]), its tunables
//! ([`ServerConfig`]) and how a serve can end ([`ServeEnd`], [`StopCheck`]).

use std::sync::Arc;
use std::time::Duration;

use serde_json::{Map, Value};

use crate::framing::DEFAULT_MAX_LINE;
use crate::protocol::{Feature, Revision};
use crate::tool::OutputMode;

/// Who the server is.
#[derive(Debug, Clone, Default)]
pub struct ServerInfo {
    /// Programmatic name.
    pub name: String,
    /// Version string.
    pub version: String,
    /// Display name (sent from 2025-06-18).
    pub title: Option<String>,
    /// One-line description (sent from 2025-11-25).
    pub description: Option<String>,
    /// Home page (sent from 2025-11-25).
    pub website_url: Option<String>,
    /// Instructions for the model, sent in `initialize` and `server/discover` results.
    pub instructions: Option<String>,
    /// Icons (an array of MCP `Icon` objects; sent from 2025-11-25).
    pub icons: Option<Value>,
}

impl ServerInfo {
    /// A server identity with a name and a version.
    #[must_use]
    pub fn new(name: impl Into<String>, version: impl Into<String>) -> Self {
        Self {
            name: name.into(),
            version: version.into(),
            ..Self::default()
        }
    }

    /// The `serverInfo` object for `rev` (fields the revision does not know are left out).
    pub(crate) fn to_json(&self, rev: Revision) -> Value {
        let mut info = Map::new();
        info.insert("name".into(), Value::from(self.name.as_str()));
        info.insert("version".into(), Value::from(self.version.as_str()));
        if rev.supports(Feature::Titles) {
            if let Some(t) = &self.title {
                info.insert("title".into(), Value::from(t.as_str()));
            }
        }
        if rev.supports(Feature::ServerDescription) {
            if let Some(d) = &self.description {
                info.insert("description".into(), Value::from(d.as_str()));
            }
            if let Some(w) = &self.website_url {
                info.insert("websiteUrl".into(), Value::from(w.as_str()));
            }
        }
        if rev.supports(Feature::Icons) {
            if let Some(icons) = &self.icons {
                info.insert("icons".into(), icons.clone());
            }
        }
        Value::Object(info)
    }
}

/// The default of [`ServerConfig::max_concurrency`]: enough for a host that fans out a batch of
/// calls, small enough that a burst cannot start thousands of tasks at once.
pub const DEFAULT_MAX_CONCURRENCY: usize = 16;

/// Tunables of one server.
#[derive(Debug, Clone)]
pub struct ServerConfig {
    /// Longest inbound line accepted, in bytes (default 64 MiB).
    pub max_line_bytes: usize,
    /// Tools per `tools/list` page (default 100).
    pub page_size: usize,
    /// Tool calls that may wait in the queue before the reader stops reading (default 1024); it
    /// reads again once the queue is down to half of this.
    pub queue_capacity: usize,
    /// Calls of concurrent (`async`) tools that may run at once (default 16); a further one
    /// waits for a running one to end, while pings, lists and cancellations are still answered.
    pub max_concurrency: usize,
    /// How long running work may go on after end of input (default 1.5 s: the official clients
    /// wait 2 s or more before they terminate a server, so its orderly shutdown comes first).
    pub eof_grace: Duration,
    /// `ttlMs` of 2026-07-28 list and discover results (default 0: do not cache).
    pub list_ttl_ms: u64,
    /// Default output mode of tools that do not set one.
    pub output: OutputMode,
    /// Most bytes of captured output attached to a result (the tail is kept; default 8 KiB).
    pub attach_limit: usize,
    /// Most bytes a running call's capture holds (default 64 MiB, at least 64 KiB): beyond it
    /// the front goes to the log while the call runs, and the attached tail says so.
    pub capture_cap: u64,
    /// Capture tool output at all (needs the process's descriptors; on by default).
    pub capture: bool,
    /// Exit the process when a tool is still running after the grace period (stdio serving).
    pub exit_on_hang: bool,
    /// Exit when the parent process goes away (stdio serving).
    pub watch_parent: bool,
}

impl Default for ServerConfig {
    fn default() -> Self {
        Self {
            max_line_bytes: DEFAULT_MAX_LINE,
            page_size: 100,
            queue_capacity: 1024,
            max_concurrency: DEFAULT_MAX_CONCURRENCY,
            eof_grace: Duration::from_millis(1500),
            list_ttl_ms: 0,
            output: OutputMode::Error,
            attach_limit: 8 * 1024,
            capture_cap: crate::capture::DEFAULT_CAP,
            capture: true,
            exit_on_hang: false,
            watch_parent: false,
        }
    }
}

/// How a serve ended.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ServeEnd {
    /// End of input; everything read was answered.
    EndOfInput,
    /// The client stopped reading our output.
    OutputClosed,
    /// Reading failed.
    ReadFailed,
    /// The parent process went away.
    ParentGone,
    /// The stop check (e.g. a signal) asked the server to stop.
    Interrupted,
}

/// A check the worker runs while idle (every [`STOP_POLL`]); returning true stops the server.
pub type StopCheck = Arc<dyn Fn() -> bool + Send + Sync>;

/// Runs before the server ends the process itself (the parent went away, or a tool still ran
/// after the end-of-input grace): the Python binding exits the server's lifespan there. It gets
/// at most [`EXIT_HOOK_PATIENCE`]; the process exits then whether it returned or not.
pub type ExitHook = Arc<dyn Fn() + Send + Sync>;

/// How long an [`ExitHook`] may run before the process exits without it.
pub const EXIT_HOOK_PATIENCE: Duration = Duration::from_secs(2);

/// Which edge of [`Server::serve_stdio`] a [`StdioHook`] runs at.
///
/// [`Server::serve_stdio`]: crate::Server::serve_stdio
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum StdioEdge {
    /// The protocol stdout has just been put aside: fd 1 writes to stderr now.
    Protected,
    /// The protocol stdout is about to come back to fd 1.
    Restoring,
}

/// Runs at both edges of serving stdio (see [`Server::set_stdio_hook`]).
///
/// [`Server::set_stdio_hook`]: crate::Server::set_stdio_hook
pub type StdioHook = Arc<dyn Fn(StdioEdge) + Send + Sync>;

/// How often an idle worker runs the stop check.
pub const STOP_POLL: Duration = Duration::from_millis(100);
