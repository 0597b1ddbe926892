//! The input is a whole stdin stream: it goes through the framing a stdio server uses
//! (`StdioTransport`, one read of everything, then end of input) into a server with three Rust
//! tools, and the server runs until it has answered what it read. Then the invariants of
//! `rust/mcpline-core/tests/support/invariants.rs` must hold: no panic, only complete JSON
//! lines out, every request with a readable id answered exactly once, no notification answered.
//!
//! Nothing waits on a clock: the tools return at once, and end of input ends the serve.

#![no_main]

use std::io::{self, Cursor, Write};
use std::sync::{Arc, Mutex, OnceLock};
use std::thread;

use libfuzzer_sys::fuzz_target;
use mcpline_core::{
    CallContext, FnTool, ServeEnd, Server, ServerInfo, StdioTransport, ToolOutput, ToolSpec,
    Transport, lock,
};
use serde_json::{Value, json};

#[path = "../../rust/mcpline-core/tests/support/invariants.rs"]
mod invariants;

/// Records every write call on its own, so that a frame split over two writes shows.
struct WriteLog(Arc<Mutex<Vec<Vec<u8>>>>);

impl Write for WriteLog {
    fn write(&mut self, buf: &[u8]) -> io::Result<usize> {
        lock(&self.0).push(buf.to_vec());
        Ok(buf.len())
    }

    fn flush(&mut self) -> io::Result<()> {
        Ok(())
    }
}

fn tool(server: &mut Server, spec: ToolSpec, run: fn(&Value) -> ToolOutput) {
    let handler = FnTool(move |args: Value, _ctx: &CallContext| run(&args));
    server
        .add_tool(spec, Arc::new(handler))
        .expect("a valid tool");
}

/// Built once: `serve` takes `&self`, and every input gets a fresh connection.
fn server() -> &'static Server {
    static SERVER: OnceLock<Server> = OnceLock::new();
    SERVER.get_or_init(|| {
        let mut server = Server::new(ServerInfo::new("fuzz", "0.0.0"));
        // Capture swaps the process's fds 1 and 2, which libFuzzer itself writes to.
        server.config_mut().capture = false;
        server.config_mut().max_line_bytes = invariants::LINE_CAP;
        let integers = json!({
            "type": "object",
            "properties": {"a": {"type": "integer"}, "b": {"type": "integer"}},
            "required": ["a", "b"],
            "additionalProperties": false
        });
        let mut add = ToolSpec::new("add", integers).description("Add two integers.");
        add.output_schema = Some(json!({
            "type": "object",
            "properties": {"result": {"type": "integer"}},
            "required": ["result"]
        }));
        tool(&mut server, add, |args| {
            let (a, b) = (args["a"].as_i64(), args["b"].as_i64());
            // A sum beyond i64 is the tool's own error, not a panic of the fuzz target.
            match a.zip(b).and_then(|(a, b)| a.checked_add(b)) {
                Some(sum) => ToolOutput::structured(json!({"result": sum})),
                None => ToolOutput::error("add: the sum does not fit in 64 bits"),
            }
        });
        let text = json!({
            "type": "object",
            "properties": {"text": {"type": "string"}},
            "required": ["text"]
        });
        tool(&mut server, ToolSpec::new("echo", text), |args| {
            ToolOutput::text(args["text"].as_str().unwrap_or_default())
        });
        let fail = ToolSpec::new("fail", json!({"type": "object"}));
        tool(&mut server, fail, |_| ToolOutput::error("fail: on purpose"));
        server
    })
}

fuzz_target!(|data: &[u8]| {
    let writes = Arc::new(Mutex::new(Vec::new()));
    let transport = Arc::new(StdioTransport::new(
        Cursor::new(data.to_vec()),
        WriteLog(Arc::clone(&writes)),
        invariants::LINE_CAP,
    ));
    let end = server().serve(Arc::clone(&transport) as Arc<dyn Transport>);
    // `serve` returns when the last call is answered; its reader thread lets go of the
    // connection right after. Waiting for that keeps one input's threads out of the next.
    while Arc::strong_count(&transport) > 1 {
        thread::yield_now();
    }
    assert_eq!(
        end,
        ServeEnd::EndOfInput,
        "the serve must end at end of input"
    );
    let writes = std::mem::take(&mut *lock(&writes));
    if let Err(violation) = invariants::check_stream(data, invariants::LINE_CAP, &writes) {
        let output: Vec<_> = writes.iter().map(|w| String::from_utf8_lossy(w)).collect();
        panic!("{violation}\noutput: {output:#?}");
    }
});
