//! The public face of the core: [`Server`], a set of tools with an identity and a configuration,
//! served over any [`Transport`] or the process's protected stdio.

use std::sync::Arc;

use crate::capture::ProtectedStdio;
use crate::config::{
    ExitHook, ServeEnd, ServerConfig, ServerInfo, StdioEdge, StdioHook, StopCheck,
};
use crate::error::ServerError;
use crate::prompt::PromptSpec;
use crate::queue::JobQueue;
use crate::registry::Registry;
use crate::resource::ResourceSpec;
use crate::session::{Handoff, Job, PeerState, Session};
use crate::tool::{ToolHandler, ToolSpec};
use crate::transport::{StdioTransport, Transport, WakeableInput};

/// An MCP server: tools plus identity and configuration.
#[derive(Clone)]
pub struct Server {
    info: ServerInfo,
    config: ServerConfig,
    registry: Registry,
    stop_check: Option<StopCheck>,
    stdio_hook: Option<StdioHook>,
    exit_hook: Option<ExitHook>,
}

impl Server {
    /// A server with no tools and the default configuration.
    #[must_use]
    pub fn new(info: ServerInfo) -> Self {
        Self {
            info,
            config: ServerConfig::default(),
            registry: Registry::default(),
            stop_check: None,
            stdio_hook: None,
            exit_hook: None,
        }
    }

    /// Installs a check the worker runs every [`STOP_POLL`] while idle and after each call; when
    /// it returns true the server stops: calls still queued are answered with an error and
    /// [`Server::serve`] returns [`ServeEnd::Interrupted`]. It is not run while a call executes
    /// (the call is on the worker thread; a tool observes interruption itself, as a Python tool
    /// sees `KeyboardInterrupt`). The Python binding uses it to react to signals.
    ///
    /// [`STOP_POLL`]: crate::STOP_POLL
    pub fn set_stop_check(&mut self, check: StopCheck) {
        self.stop_check = Some(check);
    }

    /// Installs what [`Server::serve_stdio`] runs right after the protocol stdout is put aside
    /// ([`StdioEdge::Protected`]) and right before it comes back ([`StdioEdge::Restoring`]). The
    /// Python binding flushes `sys.stdout` there: text buffered before serving goes to stderr
    /// rather than ahead of the first response, and text buffered while serving (a tool that
    /// runs uncaptured) never follows the last one.
    pub fn set_stdio_hook(&mut self, hook: StdioHook) {
        self.stdio_hook = Some(hook);
    }

    /// Installs what runs before [`Server::serve_stdio`] ends the process itself (the parent
    /// went away, or a tool still ran after the end-of-input grace), for at most
    /// [`EXIT_HOOK_PATIENCE`]. The Python binding exits the server's lifespan there.
    ///
    /// [`EXIT_HOOK_PATIENCE`]: crate::EXIT_HOOK_PATIENCE
    pub fn set_exit_hook(&mut self, hook: ExitHook) {
        self.exit_hook = Some(hook);
    }

    /// The configuration, for adjusting before serving.
    pub fn config_mut(&mut self) -> &mut ServerConfig {
        &mut self.config
    }

    /// The identity, for adjusting before serving.
    pub fn info_mut(&mut self) -> &mut ServerInfo {
        &mut self.info
    }

    /// Registers a tool.
    ///
    /// # Errors
    /// An invalid or duplicate name, or an input schema that cannot be compiled.
    pub fn add_tool(
        &mut self,
        spec: ToolSpec,
        handler: Arc<dyn ToolHandler>,
    ) -> Result<(), ServerError> {
        self.registry.add(spec, handler)
    }

    /// Registers a prompt: `handler` makes its messages (as `{"messages": [{"role", "content"}]}`
    /// structured output) from the arguments `runner` declares; `runner`'s name is the prompt's,
    /// its options (output mode, time limit) apply to `prompts/get`.
    ///
    /// # Errors
    /// An invalid or duplicate name, or an input schema that cannot be compiled.
    pub fn add_prompt(
        &mut self,
        spec: PromptSpec,
        runner: ToolSpec,
        handler: Arc<dyn ToolHandler>,
    ) -> Result<(), ServerError> {
        self.registry.add_prompt(spec, runner, handler)
    }

    /// Registers a resource or a resource template that `handler` reads (its output carries
    /// `{"contents": [...]}` as structured data). `runner` declares the handler's arguments: none
    /// for a fixed resource, exactly the template's variables for a template.
    ///
    /// # Errors
    /// A URI already registered, parameters that are not the template's variables, or an input
    /// schema that cannot be compiled.
    pub fn add_resource(
        &mut self,
        spec: ResourceSpec,
        runner: ToolSpec,
        handler: Arc<dyn ToolHandler>,
    ) -> Result<(), ServerError> {
        self.registry.add_resource(spec, runner, handler)
    }

    /// Sets the completer of `completion/complete`: `handler` gets the request's `ref`,
    /// `argument` and `context` (as `runner` declares them) and makes `{"values": [...]}`, or
    /// `{"values": null}` to send the values the argument's declared type lists.
    ///
    /// # Errors
    /// An input schema that cannot be compiled.
    pub fn set_completer(
        &mut self,
        runner: ToolSpec,
        handler: Arc<dyn ToolHandler>,
    ) -> Result<(), ServerError> {
        self.registry.set_completer(runner, handler)
    }

    /// Keeps only the tools named in `keep` (the CLI's `--allow`).
    pub fn retain_tools(&mut self, keep: &[String]) {
        self.registry.retain(keep);
    }

    /// Names of the registered tools, sorted.
    #[must_use]
    pub fn tool_names(&self) -> Vec<String> {
        self.registry.names().map(str::to_owned).collect()
    }

    /// Serves `transport` until end of input (or a dead output channel). Tool calls run on the
    /// calling thread; a reader thread answers everything else at once.
    pub fn serve(&self, transport: Arc<dyn Transport>) -> ServeEnd {
        self.run_session(transport, None)
    }

    /// What the server offers (for the HTTP endpoint's header checks).
    pub(crate) fn registry(&self) -> &Registry {
        &self.registry
    }

    /// A session answering one HTTP request into `sink`, with the client's `peer` state.
    pub(crate) fn exchange_session(
        &self,
        sink: Arc<dyn Transport>,
        peer: PeerState,
        gate: &Arc<JobQueue<Job>>,
    ) -> Arc<Session> {
        let session = Session::new(
            self.info.clone(),
            self.config.clone(),
            self.registry.clone(),
            None,
            None,
            sink,
            None,
            peer,
        );
        session.share_gate(Arc::clone(gate));
        session
    }

    fn run_session(&self, transport: Arc<dyn Transport>, handoff: Option<Handoff>) -> ServeEnd {
        let session = Session::new(
            self.info.clone(),
            self.config.clone(),
            self.registry.clone(),
            self.stop_check.clone(),
            self.exit_hook.clone(),
            transport,
            handoff,
            PeerState::new(),
        );
        session.run()
    }

    /// Serves the process's stdin/stdout with the standard descriptors protected (fd 1 goes to
    /// the real stderr, fd 0 reads the null device) until end of input.
    ///
    /// While no call runs, the calling thread reads the next request itself (where the platform
    /// lets another thread interrupt that wait: unix), so a lone request is read, run and
    /// answered on one thread.
    ///
    /// # Errors
    /// The descriptors could not be protected.
    pub fn serve_stdio(&self) -> Result<ServeEnd, ServerError> {
        let mut protected = ProtectedStdio::install()?;
        if let Some(hook) = &self.stdio_hook {
            hook(StdioEdge::Protected);
        }
        let (input, output) = protected.take_streams();
        let transport = Arc::new(StdioTransport::new(
            input,
            output,
            self.config.max_line_bytes,
        ));
        let mut server = self.clone();
        server.config.exit_on_hang = true;
        server.config.watch_parent = true;
        let handoff = Handoff::new(Arc::clone(&transport) as Arc<dyn WakeableInput>);
        let end = server.run_session(transport, handoff);
        if let Some(hook) = &self.stdio_hook {
            hook(StdioEdge::Restoring);
        }
        drop(protected);
        Ok(end)
    }
}

/// Serving over real descriptors with the worker reading while idle: every way a turn can pass
/// between the worker and the reader thread keeps the protocol's promises.
#[cfg(all(test, unix))]
mod handoff_tests {
    use std::fs::File;
    use std::io::{BufRead, BufReader, Write};
    use std::os::fd::OwnedFd;
    use std::os::unix::net::UnixStream;
    use std::sync::Arc;
    use std::sync::atomic::{AtomicBool, Ordering};
    use std::thread;
    use std::time::{Duration, Instant};

    use serde_json::{Value, json};

    use super::*;
    use crate::tool::{FnTool, OutputMode, ToolOutput};

    struct Client {
        input: UnixStream,
        output: BufReader<UnixStream>,
        serving: thread::JoinHandle<ServeEnd>,
    }

    impl Client {
        fn send(&mut self, frame: &Value) {
            let mut line = serde_json::to_vec(frame).unwrap();
            line.push(b'\n');
            self.input.write_all(&line).unwrap();
        }

        fn recv(&mut self) -> Value {
            let mut line = String::new();
            assert!(
                self.output.read_line(&mut line).unwrap() > 0,
                "server closed"
            );
            serde_json::from_str(&line).unwrap()
        }

        fn call(&mut self, id: u64, tool: &str) -> Value {
            json!({"jsonrpc": "2.0", "id": id, "method": "tools/call",
                   "params": {"name": tool, "arguments": {}}})
        }

        fn close(self) -> ServeEnd {
            drop(self.input);
            self.serving.join().unwrap()
        }
    }

    fn serve(stop: Option<StopCheck>) -> Client {
        let mut server = Server::new(ServerInfo::new("t", "1"));
        server.config_mut().output = OutputMode::Off;
        if let Some(check) = stop {
            server.set_stop_check(check);
        }
        let schema = json!({"type": "object"});
        server
            .add_tool(
                ToolSpec::new("quick", schema.clone()),
                Arc::new(FnTool(|_: Value, _: &crate::CallContext| {
                    ToolOutput::text("done")
                })),
            )
            .unwrap();
        server
            .add_tool(
                ToolSpec::new("slow", schema),
                Arc::new(FnTool(|_: Value, ctx: &crate::CallContext| {
                    let until = Instant::now() + Duration::from_secs(5);
                    while !ctx.is_cancelled() && Instant::now() < until {
                        thread::sleep(Duration::from_millis(5));
                    }
                    ToolOutput::text("slept")
                })),
            )
            .unwrap();
        let (client_in, server_in) = UnixStream::pair().unwrap();
        let (server_out, client_out) = UnixStream::pair().unwrap();
        let transport = Arc::new(StdioTransport::new(
            File::from(OwnedFd::from(server_in)),
            File::from(OwnedFd::from(server_out)),
            1 << 20,
        ));
        let handoff = Handoff::new(Arc::clone(&transport) as Arc<dyn WakeableInput>);
        assert!(handoff.is_some(), "unix inputs can be handed off");
        let serving = thread::spawn(move || server.run_session(transport, handoff));
        let mut client = Client {
            input: client_in,
            output: BufReader::new(client_out),
            serving,
        };
        client.send(&json!({"jsonrpc": "2.0", "id": 0, "method": "initialize",
            "params": {"protocolVersion": "2025-06-18", "capabilities": {},
                       "clientInfo": {"name": "c", "version": "1"}}}));
        assert_eq!(client.recv()["id"], 0);
        client
    }

    #[test]
    fn lockstep_requests_are_each_answered_once_in_order() {
        let mut client = serve(None);
        for id in 1..=300 {
            let frame = if id % 3 == 0 {
                json!({"jsonrpc": "2.0", "id": id, "method": "ping"})
            } else {
                client.call(id, "quick")
            };
            client.send(&frame);
            assert_eq!(client.recv()["id"], id);
        }
        assert_eq!(client.close(), ServeEnd::EndOfInput);
    }

    #[test]
    fn pings_and_cancellation_are_read_while_a_call_runs() {
        let mut client = serve(None);
        let slow = client.call(1, "slow");
        client.send(&slow);
        thread::sleep(Duration::from_millis(50));
        client.send(&json!({"jsonrpc": "2.0", "id": 2, "method": "ping"}));
        assert_eq!(client.recv()["id"], 2, "ping answered before the slow call");
        let started = Instant::now();
        client.send(
            &json!({"jsonrpc": "2.0", "method": "notifications/cancelled",
                            "params": {"requestId": 1}}),
        );
        let quick = client.call(3, "quick");
        client.send(&quick);
        assert_eq!(
            client.recv()["id"],
            3,
            "the cancelled call is never answered"
        );
        assert!(started.elapsed() < Duration::from_secs(4));
        assert_eq!(client.close(), ServeEnd::EndOfInput);
    }

    #[test]
    fn a_pipelined_burst_is_answered_in_order() {
        let mut client = serve(None);
        let burst: Vec<u8> = (1..=3000)
            .flat_map(|id| {
                let mut line = serde_json::to_vec(&client.call(id, "quick")).unwrap();
                line.push(b'\n');
                line
            })
            .collect();
        let mut writer = client.input.try_clone().unwrap();
        let feeding = thread::spawn(move || writer.write_all(&burst).unwrap());
        for id in 1..=3000 {
            assert_eq!(client.recv()["id"], id);
        }
        feeding.join().unwrap();
        assert_eq!(client.close(), ServeEnd::EndOfInput);
    }

    #[test]
    fn end_of_input_while_the_worker_waits_for_a_request_ends_the_serve() {
        let mut client = serve(None);
        let quick = client.call(1, "quick");
        client.send(&quick);
        assert_eq!(client.recv()["id"], 1);
        thread::sleep(Duration::from_millis(50));
        let started = Instant::now();
        assert_eq!(client.close(), ServeEnd::EndOfInput);
        assert!(started.elapsed() < Duration::from_secs(1));
    }

    #[test]
    fn the_stop_check_runs_while_the_worker_waits_for_a_request() {
        let stop = Arc::new(AtomicBool::new(false));
        let check: StopCheck = {
            let stop = Arc::clone(&stop);
            Arc::new(move || stop.load(Ordering::SeqCst))
        };
        let mut client = serve(Some(check));
        let quick = client.call(1, "quick");
        client.send(&quick);
        assert_eq!(client.recv()["id"], 1);
        thread::sleep(Duration::from_millis(50));
        stop.store(true, Ordering::SeqCst);
        let started = Instant::now();
        let serving = client.serving;
        assert_eq!(serving.join().unwrap(), ServeEnd::Interrupted);
        assert!(started.elapsed() < Duration::from_secs(1));
    }

    #[test]
    fn a_closed_output_ends_the_serve_while_the_worker_waits_for_a_request() {
        let mut client = serve(None);
        let quick = client.call(1, "quick");
        client.send(&quick);
        assert_eq!(client.recv()["id"], 1);
        let Client {
            mut input,
            output,
            serving,
        } = client;
        drop(output);
        // The next answer finds the output closed; the worker waiting for input must notice.
        input
            .write_all(b"{\"jsonrpc\": \"2.0\", \"id\": 2, \"method\": \"ping\"}\n")
            .unwrap();
        let started = Instant::now();
        assert_eq!(serving.join().unwrap(), ServeEnd::OutputClosed);
        assert!(started.elapsed() < Duration::from_secs(2));
    }
}
