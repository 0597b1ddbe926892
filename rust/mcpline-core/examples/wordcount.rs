//! A Rust-only MCP server with one Rust tool: proof that the core stands alone.
//!
//! Run it and talk to it over stdio:
//!
//! ```text
//! cargo run -p mcpline-core --example wordcount
//! {"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-11-25","capabilities":{},"clientInfo":{"name":"me","version":"0"}}}
//! {"jsonrpc":"2.0","id":2,"method":"tools/call","params":{"name":"count_words","arguments":{"text":"one two three"}}}
//! ```

use std::process::ExitCode;
use std::sync::Arc;

use mcpline_core::{CallContext, FnTool, Server, ServerInfo, ToolOutput, ToolSpec};
use serde_json::{Value, json};

fn count_words(args: Value, ctx: &CallContext) -> ToolOutput {
    let text = args["text"].as_str().unwrap_or_default();
    let words = text.split_whitespace().count();
    ctx.progress(1.0, Some(1.0), Some("counted"));
    ToolOutput::structured(json!({ "words": words }))
}

fn main() -> ExitCode {
    let mut server = Server::new(ServerInfo::new("wordcount", env!("CARGO_PKG_VERSION")));
    let mut spec = ToolSpec::new(
        "count_words",
        json!({
            "type": "object",
            "properties": { "text": { "type": "string", "description": "The text to count." } },
            "required": ["text"],
            "additionalProperties": false
        }),
    )
    .description("Count the whitespace-separated words in a text.");
    spec.output_schema = Some(json!({
        "type": "object",
        "properties": { "words": { "type": "integer" } },
        "required": ["words"]
    }));
    spec.hints.read_only = Some(true);
    if let Err(e) = server.add_tool(spec, Arc::new(FnTool(count_words))) {
        let _ = std::io::Write::write_all(&mut std::io::stderr(), format!("{e}\n").as_bytes());
        return ExitCode::FAILURE;
    }
    match server.serve_stdio() {
        Ok(_) => ExitCode::SUCCESS,
        Err(e) => {
            let _ = std::io::Write::write_all(&mut std::io::stderr(), format!("{e}\n").as_bytes());
            ExitCode::FAILURE
        }
    }
}
