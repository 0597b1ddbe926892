//! # mcpline-core
//!
//! The Rust core of mcpline: a Model Context Protocol server over stdio (newline-delimited
//! JSON-RPC 2.0). It owns framing, dispatch across every protocol revision (2024-11-05 through
//! 2026-07-28), argument validation against JSON Schema 2020-12, the exactly-once response rule,
//! and the capture cell that keeps stray output off the protocol stream. Nothing here knows
//! Python: a Rust program registers [`ToolHandler`]s and calls [`Server::serve_stdio`].
//!
//! ```no_run
//! use std::sync::Arc;
//! use mcpline_core::{FnTool, Server, ServerInfo, ToolOutput, ToolSpec};
//! use serde_json::json;
//!
//! let mut server = Server::new(ServerInfo::new("hello", "1.0.0"));
//! let spec = ToolSpec::new(
//!     "greet",
//!     json!({"type": "object", "properties": {"name": {"type": "string"}}, "required": ["name"]}),
//! )
//! .description("Greet someone by name.");
//! server
//!     .add_tool(spec, Arc::new(FnTool(|args: serde_json::Value, _ctx: &mcpline_core::CallContext| {
//!         ToolOutput::text(format!("Hello, {}!", args["name"].as_str().unwrap_or("you")))
//!     })))
//!     .unwrap();
//! server.serve_stdio().unwrap();
//! ```

mod capture;
mod completion;
mod config;
mod context;
mod error;
mod flags;
mod framing;
mod http;
mod invoke;
mod json_syntax;
mod jsonrpc;
mod lifecycle;
mod log;
mod methods;
mod outbox;
mod prompt;
mod protocol;
mod queue;
mod registry;
mod resource;
mod server;
mod session;
mod sync;
mod sys;
mod tool;
mod trace;
mod transport;
mod validate;

pub use capture::{
    Capture, CaptureError, Captured, ProtectedStdio, Window, is_capturing, new_member, note_spawn,
    note_truncating_open, set_capture_cap, settle, write_attributed, write_real_stderr,
};
pub use config::{
    DEFAULT_MAX_CONCURRENCY, EXIT_HOOK_PATIENCE, ExitHook, STOP_POLL, ServeEnd, ServerConfig,
    ServerInfo, StdioEdge, StdioHook, StopCheck,
};
pub use context::CallContext;
pub use error::{ServerError, TransportError};
pub use framing::{DEFAULT_MAX_LINE, Inbound, LineReader};
pub use http::{Exchange, HttpConfig, HttpEndpoint, HttpHeaders, HttpReply, Next, Wake};
pub use jsonrpc::{ErrorCode, IntId, RequestId};
pub use log::log_line;
pub use prompt::{PromptArgument, PromptSpec};
pub use protocol::{Feature, HANDSHAKE_REVISIONS, LogLevel, Revision, STATELESS_REVISIONS};
pub use resource::ResourceSpec;
pub use server::Server;
pub use sync::lock;
pub use tool::{
    Content, Done, FnTool, OutputMode, ToolHandler, ToolHints, ToolOutput, ToolSpec,
    is_valid_tool_name,
};
pub use trace::TRACE_ENV;
pub use transport::{
    MemoryClient, MemoryTransport, StdioTransport, Transport, memory_pair, memory_pair_with_cap,
};
pub use validate::{ArgumentValidator, ResultValidator, SchemaError};
