//! A [`Server`] with a handful of test tools, served on a thread over the in-memory transport,
//! plus a small client with timeouts.

use std::io::{self, Read, Write};
use std::sync::mpsc::{self, Receiver, RecvTimeoutError, Sender};
use std::sync::{Arc, Mutex};
use std::thread::{self, JoinHandle};
use std::time::{Duration, Instant};

use mcpline_core::{
    CallContext, FnTool, MemoryClient, MemoryTransport, ServeEnd, Server, ServerInfo,
    StdioTransport, ToolOutput, ToolSpec, Transport, lock, memory_pair, memory_pair_with_cap,
};
use serde_json::{Value, json};

/// How long `recv` waits before declaring the server stuck.
pub const RECV_TIMEOUT: Duration = Duration::from_secs(10);

/// The four handshake-era revisions, oldest first.
pub const HANDSHAKE_REVS: [&str; 4] = ["2024-11-05", "2025-03-26", "2025-06-18", "2025-11-25"];

/// The stateless revision.
pub const MODERN_REV: &str = "2026-07-28";

/// What the test tools did, in order (e.g. `"sleepy:start:7"`, `"sleepy:cancelled:7"`).
pub type Events = Arc<Mutex<Vec<String>>>;

/// A running server and the client end of its connection.
pub struct Harness {
    conn: Conn,
    events: Events,
    done: Receiver<ServeEnd>,
    thread: Option<JoinHandle<()>>,
}

/// The client end: the in-memory pair (one line per message each way), or a byte stream through
/// the real [`StdioTransport`] framing (arbitrary chunks in, one `write` call observed per
/// outgoing chunk).
enum Conn {
    Memory(MemoryClient),
    Stream {
        input: Mutex<Option<Sender<Vec<u8>>>>,
        writes: Mutex<Receiver<Vec<u8>>>,
    },
}

/// A reader fed with chunks through a channel; end of input when the sender is dropped.
pub struct ChunkReader {
    chunks: Receiver<Vec<u8>>,
    current: Vec<u8>,
    pos: usize,
}

impl Read for ChunkReader {
    fn read(&mut self, buf: &mut [u8]) -> io::Result<usize> {
        while self.pos == self.current.len() {
            match self.chunks.recv() {
                Ok(chunk) => {
                    self.current = chunk;
                    self.pos = 0;
                }
                Err(_) => return Ok(0),
            }
        }
        let n = buf.len().min(self.current.len() - self.pos);
        buf[..n].copy_from_slice(&self.current[self.pos..self.pos + n]);
        self.pos += n;
        Ok(n)
    }
}

/// A writer that reports every `write` call as one message.
pub struct WriteLog {
    writes: Sender<Vec<u8>>,
}

impl Write for WriteLog {
    fn write(&mut self, buf: &[u8]) -> io::Result<usize> {
        self.writes
            .send(buf.to_vec())
            .map_err(|_| io::Error::from(io::ErrorKind::BrokenPipe))?;
        Ok(buf.len())
    }

    fn flush(&mut self) -> io::Result<()> {
        Ok(())
    }
}

/// Records one tool event.
fn record(events: &Events, event: String) {
    lock(events).push(event);
}

/// A server named "test-server" with the standard test tools and capture turned off.
pub fn test_server(events: &Events) -> Server {
    let mut server = Server::new(ServerInfo::new("test-server", "9.9.9"));
    server.config_mut().capture = false;
    add_standard_tools(&mut server, events);
    server
}

/// Registers `add`, `echo`, `fail`, `sleepy`, `panics` and `progress`.
pub fn add_standard_tools(server: &mut Server, events: &Events) {
    let mut add = ToolSpec::new(
        "add",
        json!({
            "type": "object",
            "properties": {"a": {"type": "integer"}, "b": {"type": "integer"}},
            "required": ["a", "b"],
            "additionalProperties": false
        }),
    )
    .description("Add two integers.");
    add.title = Some("Adder".into());
    add.output_schema = Some(json!({
        "type": "object",
        "properties": {"result": {"type": "integer"}},
        "required": ["result"]
    }));
    add.hints.read_only = Some(true);
    add.hints.idempotent = Some(true);
    let ev = Arc::clone(events);
    server
        .add_tool(
            add,
            Arc::new(FnTool(move |args: Value, ctx: &CallContext| {
                record(&ev, format!("add:{}", ctx.request_id()));
                let a = args["a"].as_i64().unwrap_or_default();
                let b = args["b"].as_i64().unwrap_or_default();
                ToolOutput::structured(json!({"result": a + b}))
            })),
        )
        .expect("register add");

    let echo = ToolSpec::new(
        "echo",
        json!({
            "type": "object",
            "properties": {"text": {"type": "string"}},
            "required": ["text"],
            "additionalProperties": false
        }),
    )
    .description("Return the text unchanged.");
    let ev = Arc::clone(events);
    server
        .add_tool(
            echo,
            Arc::new(FnTool(move |args: Value, ctx: &CallContext| {
                record(&ev, format!("echo:{}", ctx.request_id()));
                ToolOutput::text(args["text"].as_str().unwrap_or_default())
            })),
        )
        .expect("register echo");

    let fail = ToolSpec::new("fail", json!({"type": "object"})).description("Always fails.");
    server
        .add_tool(
            fail,
            Arc::new(FnTool(|_args: Value, _ctx: &CallContext| {
                ToolOutput::error("fail: it failed on purpose")
            })),
        )
        .expect("register fail");

    let sleepy_spec = ToolSpec::new(
        "sleepy",
        json!({
            "type": "object",
            "properties": {"ms": {"type": "integer", "minimum": 0}},
            "required": ["ms"],
            "additionalProperties": false
        }),
    )
    .description("Sleep in 10 ms steps, stopping early when cancelled.");
    let ev = Arc::clone(events);
    server
        .add_tool(
            sleepy_spec,
            Arc::new(FnTool(move |args: Value, ctx: &CallContext| {
                sleepy(&ev, &args, ctx)
            })),
        )
        .expect("register sleepy");

    let panics = ToolSpec::new("panics", json!({"type": "object"})).description("Panics.");
    server
        .add_tool(
            panics,
            Arc::new(FnTool(|_args: Value, _ctx: &CallContext| -> ToolOutput {
                panic!("kaboom from the panics tool")
            })),
        )
        .expect("register panics");

    let progress =
        ToolSpec::new("progress", json!({"type": "object"})).description("Reports progress.");
    server
        .add_tool(
            progress,
            Arc::new(FnTool(|_args: Value, ctx: &CallContext| {
                let mut sent = 0;
                for step in 1..=3_u8 {
                    let message = format!("step {step} of 3");
                    if ctx.progress(f64::from(step), Some(3.0), Some(&message)) {
                        sent += 1;
                    }
                }
                ToolOutput::text(format!("sent {sent} progress notifications"))
            })),
        )
        .expect("register progress");
}

/// Sleeps `args.ms` milliseconds in 10 ms steps (reporting progress after each); returns an
/// error result when cancelled.
pub fn sleepy(events: &Events, args: &Value, ctx: &CallContext) -> ToolOutput {
    let id = ctx.request_id().to_string();
    record(events, format!("sleepy:start:{id}"));
    let ms = args["ms"].as_u64().unwrap_or_default();
    let deadline = Instant::now() + Duration::from_millis(ms);
    let mut steps = 0_u32;
    while Instant::now() < deadline {
        if ctx.is_cancelled() {
            record(events, format!("sleepy:cancelled:{id}"));
            return ToolOutput::error(format!("sleepy {id} was cancelled"));
        }
        thread::sleep(Duration::from_millis(10));
        steps += 1;
        // Sent only when the request carried a progress token.
        ctx.progress(f64::from(steps), None, None);
    }
    record(events, format!("sleepy:done:{id}"));
    ToolOutput::text(format!("slept {ms} ms"))
}

/// The standard test server after the 2025-11-25 handshake.
#[track_caller]
pub fn ready() -> Harness {
    let h = Harness::start();
    h.initialize("2025-11-25");
    h
}

impl Harness {
    /// The standard test server on the default line cap.
    pub fn start() -> Self {
        Self::start_with(|_| {})
    }

    /// The standard test server, adjusted by `configure` before serving.
    pub fn start_with(configure: impl FnOnce(&mut Server)) -> Self {
        let events = Events::default();
        let mut server = test_server(&events);
        configure(&mut server);
        Self::serve(server, memory_pair(), events)
    }

    /// The standard test server with an inbound line cap of `cap` bytes.
    pub fn start_with_cap(cap: usize) -> Self {
        let events = Events::default();
        let mut server = test_server(&events);
        server.config_mut().max_line_bytes = cap;
        Self::serve(server, memory_pair_with_cap(cap), events)
    }

    /// Serves an arbitrary server (built by the test) on the default line cap.
    pub fn start_server(server: Server) -> Self {
        Self::serve(server, memory_pair(), Events::default())
    }

    /// The standard test server behind the real byte-stream framing ([`StdioTransport`]) with
    /// an inbound line cap of `cap` bytes.
    pub fn start_stream(cap: usize) -> Self {
        let events = Events::default();
        let mut server = test_server(&events);
        server.config_mut().max_line_bytes = cap;
        let (input, chunks) = mpsc::channel();
        let (writes_tx, writes) = mpsc::channel();
        let reader = ChunkReader {
            chunks,
            current: Vec::new(),
            pos: 0,
        };
        let transport = StdioTransport::new(reader, WriteLog { writes: writes_tx }, cap);
        let conn = Conn::Stream {
            input: Mutex::new(Some(input)),
            writes: Mutex::new(writes),
        };
        Self::serve_transport(server, Arc::new(transport), conn, events)
    }

    fn serve(server: Server, pair: (MemoryTransport, MemoryClient), events: Events) -> Self {
        let (transport, client) = pair;
        Self::serve_transport(server, Arc::new(transport), Conn::Memory(client), events)
    }

    fn serve_transport(
        server: Server,
        transport: Arc<dyn Transport>,
        conn: Conn,
        events: Events,
    ) -> Self {
        let (tx, done) = mpsc::channel();
        let thread = thread::Builder::new()
            .name("test-serve".into())
            .spawn(move || {
                let end = server.serve(transport);
                let _ = tx.send(end);
            })
            .expect("spawn the serve thread");
        Self {
            conn,
            events,
            done,
            thread: Some(thread),
        }
    }

    /// Sends one JSON frame as a line.
    pub fn send(&self, frame: &Value) {
        self.send_raw(frame.to_string());
    }

    /// Sends raw bytes as one line (the stream connection appends the newline).
    pub fn send_raw(&self, bytes: impl Into<Vec<u8>>) {
        match &self.conn {
            Conn::Memory(client) => {
                client
                    .send(bytes)
                    .expect("the server stopped reading its input");
            }
            Conn::Stream { .. } => {
                let mut line = bytes.into();
                line.push(b'\n');
                self.send_bytes(line);
            }
        }
    }

    /// Stream connection only: sends raw bytes as they are (no framing added).
    pub fn send_bytes(&self, bytes: impl Into<Vec<u8>>) {
        let Conn::Stream { input, .. } = &self.conn else {
            panic!("send_bytes needs a stream connection (Harness::start_stream)");
        };
        let sent = lock(input)
            .as_ref()
            .is_some_and(|tx| tx.send(bytes.into()).is_ok());
        assert!(sent, "the server stopped reading its input");
    }

    /// The next frame, within [`RECV_TIMEOUT`]; panics with a clear message otherwise.
    #[track_caller]
    pub fn recv(&self) -> Value {
        self.recv_within(RECV_TIMEOUT)
    }

    /// The next frame within `timeout`; panics with a clear message otherwise.
    #[track_caller]
    pub fn recv_within(&self, timeout: Duration) -> Value {
        match self.try_recv(timeout) {
            Some(frame) => frame,
            None => panic!(
                "no frame from the server within {timeout:?} (it is stuck, finished, or never \
                 answered)"
            ),
        }
    }

    /// The next frame, or `None` when nothing arrives within `timeout`. Checks that the line is
    /// one compact JSON value (and, on a stream, that it came in one `write` ending in `\n`).
    #[track_caller]
    pub fn try_recv(&self, timeout: Duration) -> Option<Value> {
        let line = match &self.conn {
            Conn::Memory(client) => client.recv_timeout(timeout)?,
            Conn::Stream { writes, .. } => {
                let mut write = lock(writes).recv_timeout(timeout).ok()?;
                assert_eq!(
                    write.pop(),
                    Some(b'\n'),
                    "each outgoing message must be one write ending in a newline: {:?}",
                    String::from_utf8_lossy(&write)
                );
                write
            }
        };
        assert!(
            !line.contains(&b'\n') && !line.contains(&b'\r'),
            "an outgoing frame contains a line break: {:?}",
            String::from_utf8_lossy(&line)
        );
        let value: Value = serde_json::from_slice(&line).unwrap_or_else(|e| {
            panic!(
                "the server wrote a line that is not JSON ({e}): {:?}",
                String::from_utf8_lossy(&line)
            )
        });
        Some(value)
    }

    /// Asserts that the server writes nothing for `d`.
    #[track_caller]
    pub fn expect_silence(&self, d: Duration) {
        if let Some(frame) = self.try_recv(d) {
            panic!("expected silence for {d:?}, but the server wrote {frame}");
        }
    }

    /// Sends a request and returns the next frame (which must be its response).
    #[track_caller]
    pub fn request(&self, id: impl Into<Value>, method: &str, params: Value) -> Value {
        let id = id.into();
        self.send(&req(id.clone(), method, params));
        let response = self.recv();
        assert_eq!(
            response["id"], id,
            "expected the response to {method} #{id}, got {response}"
        );
        response
    }

    /// Runs the handshake for `rev` (initialize + notifications/initialized); returns the result.
    #[track_caller]
    pub fn initialize(&self, rev: &str) -> Value {
        let response = self.request("init", "initialize", init_params(rev));
        assert!(
            response.get("error").is_none(),
            "initialize failed: {response}"
        );
        self.send(&notif("notifications/initialized", json!({})));
        response["result"].clone()
    }

    /// Calls a tool and returns its response frame (the next frame must be it).
    #[track_caller]
    pub fn call(&self, id: impl Into<Value>, tool: &str, args: Value) -> Value {
        self.request(id, "tools/call", json!({"name": tool, "arguments": args}))
    }

    /// Frames until one answers `id` (a response with that id); returns (others, response).
    #[track_caller]
    pub fn recv_until_response(&self, id: &Value) -> (Vec<Value>, Value) {
        let mut others = Vec::new();
        loop {
            let frame = self.recv();
            if frame.get("method").is_none() && frame.get("id") == Some(id) {
                return (others, frame);
            }
            others.push(frame);
        }
    }

    /// Frames until `d` passes without one.
    pub fn collect_until_silence(&self, d: Duration) -> Vec<Value> {
        let mut frames = Vec::new();
        while let Some(frame) = self.try_recv(d) {
            frames.push(frame);
        }
        frames
    }

    /// Waits (up to [`RECV_TIMEOUT`]) until a tool has recorded `event`.
    #[track_caller]
    pub fn wait_for_event(&self, event: &str) {
        let deadline = Instant::now() + RECV_TIMEOUT;
        while !self.events().iter().any(|e| e == event) {
            assert!(
                Instant::now() < deadline,
                "no {event:?} event; events: {:?}",
                self.events()
            );
            thread::sleep(Duration::from_millis(2));
        }
    }

    /// What the tools recorded so far.
    pub fn events(&self) -> Vec<String> {
        lock(&self.events).clone()
    }

    /// Signals end of input.
    pub fn close(&self) {
        match &self.conn {
            Conn::Memory(client) => client.close(),
            Conn::Stream { input, .. } => drop(lock(input).take()),
        }
    }

    /// Waits (up to `timeout`) for `serve` to return; panics if it does not, or if it panicked.
    #[track_caller]
    pub fn wait_end(&mut self, timeout: Duration) -> ServeEnd {
        let end = match self.done.recv_timeout(timeout) {
            Ok(end) => end,
            Err(RecvTimeoutError::Timeout) => panic!("serve() did not return within {timeout:?}"),
            Err(RecvTimeoutError::Disconnected) => panic!("the serve thread panicked"),
        };
        if let Some(thread) = self.thread.take() {
            thread.join().expect("the serve thread panicked");
        }
        end
    }

    /// Closes the input and waits for `serve` to return.
    #[track_caller]
    pub fn finish(mut self) -> ServeEnd {
        self.close();
        self.wait_end(RECV_TIMEOUT)
    }
}

impl Drop for Harness {
    fn drop(&mut self) {
        // End of input lets the server thread finish on its own; never block a failing test.
        self.close();
    }
}

/// A request frame.
pub fn req(id: impl Into<Value>, method: &str, params: Value) -> Value {
    json!({"jsonrpc": "2.0", "id": id.into(), "method": method, "params": params})
}

/// A notification frame.
pub fn notif(method: &str, params: Value) -> Value {
    json!({"jsonrpc": "2.0", "method": method, "params": params})
}

/// A `tools/call` request frame.
pub fn call_req(id: impl Into<Value>, tool: &str, args: Value) -> Value {
    req(id, "tools/call", json!({"name": tool, "arguments": args}))
}

/// A `notifications/cancelled` frame for `id`.
pub fn cancel(id: impl Into<Value>) -> Value {
    notif(
        "notifications/cancelled",
        json!({"requestId": id.into(), "reason": "test"}),
    )
}

/// `initialize` params for `rev`.
pub fn init_params(rev: &str) -> Value {
    json!({
        "protocolVersion": rev,
        "capabilities": {},
        "clientInfo": {"name": "integration-tests", "version": "0.0.1"}
    })
}

/// The 2026-07-28 `_meta` envelope.
pub fn modern_meta() -> Value {
    json!({
        "io.modelcontextprotocol/protocolVersion": MODERN_REV,
        "io.modelcontextprotocol/clientCapabilities": {},
        "io.modelcontextprotocol/clientInfo": {"name": "integration-tests", "version": "0.0.1"}
    })
}

/// `params` with the modern envelope added.
pub fn modern(params: Value) -> Value {
    let mut params = params;
    params["_meta"] = modern_meta();
    params
}

/// The error code of a response frame (panics if it is not an error).
#[track_caller]
pub fn error_code(frame: &Value) -> i64 {
    frame["error"]["code"]
        .as_i64()
        .unwrap_or_else(|| panic!("expected an error response, got {frame}"))
}

/// The result of a response frame (panics if it is an error).
#[track_caller]
pub fn result(frame: &Value) -> &Value {
    assert!(
        frame.get("error").is_none(),
        "expected a result, got {frame}"
    );
    frame
        .get("result")
        .unwrap_or_else(|| panic!("no result in {frame}"))
}

/// The concatenated text blocks of a tool result.
#[track_caller]
pub fn text_of(result: &Value) -> String {
    result["content"]
        .as_array()
        .unwrap_or_else(|| panic!("a tool result without content: {result}"))
        .iter()
        .filter(|block| block["type"] == "text")
        .filter_map(|block| block["text"].as_str())
        .collect::<Vec<_>>()
        .join("\n")
}

/// Asserts an error frame: `code`, the given `id` (or no `id` key when `None`), a string message.
#[track_caller]
pub fn assert_error(frame: &Value, code: i64, id: Option<&Value>) {
    assert_eq!(error_code(frame), code, "wrong error code in {frame}");
    assert!(
        frame["error"]["message"].is_string(),
        "error without a message: {frame}"
    );
    assert_eq!(
        frame["jsonrpc"], "2.0",
        "frame without jsonrpc 2.0: {frame}"
    );
    assert!(
        frame.get("result").is_none(),
        "a frame with both result and error: {frame}"
    );
    match id {
        Some(id) => assert_eq!(frame.get("id"), Some(id), "wrong id in {frame}"),
        None => assert!(
            frame.get("id").is_none(),
            "expected no id key at all in {frame}"
        ),
    }
}

/// The names of the tools in a `tools/list` result.
pub fn tool_names(result: &Value) -> Vec<String> {
    result["tools"]
        .as_array()
        .map(|tools| {
            tools
                .iter()
                .filter_map(|t| t["name"].as_str().map(String::from))
                .collect()
        })
        .unwrap_or_default()
}

/// The descriptor of `name` in a `tools/list` result.
#[track_caller]
pub fn tool<'a>(result: &'a Value, name: &str) -> &'a Value {
    result["tools"]
        .as_array()
        .and_then(|tools| tools.iter().find(|t| t["name"] == name))
        .unwrap_or_else(|| panic!("no tool {name:?} in {result}"))
}
