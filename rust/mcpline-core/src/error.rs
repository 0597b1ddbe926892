//! The transport layer's error type.

use std::io;

/// Everything that can go wrong while moving frames in and out of the process.
///
/// Each message names the mechanism that failed and what to do about it.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum TransportError {
    /// Reading the protocol input failed for a reason other than end of input.
    #[error(
        "reading the protocol input failed: {0} (check that the client keeps the server's stdin open)"
    )]
    Read(#[source] io::Error),
    /// The client closed the protocol output; nothing more can be delivered.
    #[error("the protocol output is closed: {0} (the client went away; the server stops)")]
    OutputClosed(#[source] io::Error),
    /// Writing the protocol output failed for another reason.
    #[error(
        "writing the protocol output failed: {0} (check the pipe or file the client gave as stdout)"
    )]
    Write(#[source] io::Error),
    /// The in-memory peer hung up.
    #[error("the in-memory client was dropped (keep the client alive while the server runs)")]
    PeerGone,
}

impl TransportError {
    /// Classifies an error from a write on the protocol output.
    pub(crate) fn from_write(err: io::Error) -> Self {
        match err.kind() {
            io::ErrorKind::BrokenPipe
            | io::ErrorKind::ConnectionReset
            | io::ErrorKind::ConnectionAborted
            | io::ErrorKind::NotConnected
            | io::ErrorKind::WriteZero => TransportError::OutputClosed(err),
            _ => TransportError::Write(err),
        }
    }
}

/// Errors raised while configuring a server (registration and start-up), before any frame moves.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum ServerError {
    /// A tool name breaks the naming rule.
    #[error(
        "invalid tool name {0:?}: use 1-64 characters of A-Z a-z 0-9 _ - . (the rule MCP clients enforce)"
    )]
    InvalidToolName(String),
    /// Two tools share a name.
    #[error(
        "a tool named {0:?} is already registered (tool names must be unique; pass name=... to rename one)"
    )]
    DuplicateTool(String),
    /// Two prompts share a name, or a prompt name breaks the naming rule.
    #[error(
        "cannot register prompt {0:?}: prompt names must be unique and use 1-64 characters of \
         A-Z a-z 0-9 _ - . (pass name=... to rename one)"
    )]
    BadPromptName(String),
    /// A resource or template that cannot be served as declared.
    #[error("cannot register resource {uri:?}: {why}")]
    BadResource {
        /// Its URI or URI template.
        uri: String,
        /// What is wrong.
        why: String,
    },
    /// A tool's input schema cannot be compiled.
    #[error("the inputSchema of tool {tool:?} is not usable: {source}")]
    BadSchema {
        /// The tool.
        tool: String,
        /// Why the validator could not compile it.
        #[source]
        source: crate::validate::SchemaError,
    },
    /// A strict tool's output schema cannot be compiled.
    #[error(
        "the outputSchema of tool {tool:?} is not usable: {source} (register it with \
         strict=False to send its results unchecked)"
    )]
    BadOutputSchema {
        /// The tool.
        tool: String,
        /// Why the validator could not compile it.
        #[source]
        source: crate::validate::SchemaError,
    },
    /// The transport failed.
    #[error(transparent)]
    Transport(#[from] TransportError),
    /// Protecting the standard descriptors failed.
    #[error(transparent)]
    Capture(#[from] crate::capture::CaptureError),
}
