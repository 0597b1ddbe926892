//! The protocol a client sees: JSON-RPC over newline-delimited stdio, both eras of MCP
//! revisions, and the tool methods. Each test serves the test server on a thread of its own
//! ([`support::Harness`]).

#[path = "../support/mod.rs"]
mod support;

/// What must hold for any input stream (shared with the fuzz target, which also uses the
/// write-level checks that the harness does itself here).
#[allow(dead_code)]
#[path = "../support/invariants.rs"]
mod invariants;

// JSON-RPC on the wire.
mod arbitrary_input;
mod batches;
mod framing;
mod fuzz_corpus;
mod ids;
mod notifications;
mod parse_errors;

// The two eras: the `initialize` handshake, and stateless requests.
mod initialize;
mod stateless;

// Streamable HTTP.
mod http;

// Tools.
mod progress;
mod tools_call;
mod tools_list;
