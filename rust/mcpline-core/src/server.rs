//! The protocol loop: one reader thread that answers everything quick at once, one worker that
//! runs tool calls in arrival order, and a single place where a request gets its one response.

use std::collections::{BTreeMap, HashMap, VecDeque};
use std::io::Write as _;
use std::panic::{AssertUnwindSafe, catch_unwind};
use std::sync::atomic::{AtomicBool, AtomicU8, Ordering};
use std::sync::{Arc, Condvar, Mutex, MutexGuard, PoisonError};
use std::thread;
use std::time::{Duration, Instant};

use serde_json::{Map, Value, json};

use crate::capture::{Capture, ProtectedStdio};
use crate::context::{CallContext, CallFlags, LogLevel};
use crate::error::{ServerError, TransportError};
use crate::framing::{DEFAULT_MAX_LINE, Inbound};
use crate::jsonrpc::{ErrorCode, IdField, RequestId, encode, error_frame, result_frame, sniff_id};
use crate::protocol::{
    HANDSHAKE_REVISIONS, META_CLIENT_CAPABILITIES, META_CLIENT_INFO, META_LOG_LEVEL,
    META_PROTOCOL_VERSION, META_SERVER_INFO, Revision, STATELESS_REVISIONS,
};
use crate::sync::lock;
use crate::tool::{Content, OutputMode, ToolHandler, ToolOutput, ToolSpec, is_valid_tool_name};
use crate::transport::{StdioTransport, Transport};
use crate::validate::ArgumentValidator;

/// Writes one line to the real stderr (the server's log), never into a tool's capture.
pub(crate) fn log_line(text: &str) {
    let mut line = String::with_capacity(text.len() + 10);
    line.push_str("[mcpline] ");
    line.push_str(text);
    line.push('\n');
    let _ = crate::capture::write_real_stderr(line.as_bytes());
}

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

    fn to_json(&self, rev: Revision) -> Value {
        let mut info = Map::new();
        info.insert("name".into(), Value::from(self.name.as_str()));
        info.insert("version".into(), Value::from(self.version.as_str()));
        if rev.has_structured_output() {
            if let Some(t) = &self.title {
                info.insert("title".into(), Value::from(t.as_str()));
            }
        }
        if rev.has_icons() {
            if let Some(d) = &self.description {
                info.insert("description".into(), Value::from(d.as_str()));
            }
            if let Some(w) = &self.website_url {
                info.insert("websiteUrl".into(), Value::from(w.as_str()));
            }
        }
        Value::Object(info)
    }
}

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
    /// How long running work may go on after end of input (default 5 s).
    pub eof_grace: Duration,
    /// `ttlMs` of 2026-07-28 list and discover results (default 0: do not cache).
    pub list_ttl_ms: u64,
    /// Default output mode of tools that do not set one.
    pub output: OutputMode,
    /// Most bytes of captured output attached to a result (the tail is kept; default 8 KiB).
    pub attach_limit: usize,
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
            eof_grace: Duration::from_secs(5),
            list_ttl_ms: 0,
            output: OutputMode::Error,
            attach_limit: 8 * 1024,
            capture: true,
            exit_on_hang: false,
            watch_parent: false,
        }
    }
}

/// A tool as the server keeps it; queued calls share it (`Arc`), never copy its schemas.
struct RegisteredTool {
    spec: ToolSpec,
    name: Arc<str>,
    validator: ArgumentValidator,
    handler: Arc<dyn ToolHandler>,
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

/// How often an idle worker runs the stop check.
pub const STOP_POLL: Duration = Duration::from_millis(100);

/// An MCP server: tools plus identity and configuration.
#[derive(Clone)]
pub struct Server {
    info: ServerInfo,
    config: ServerConfig,
    tools: BTreeMap<String, Arc<RegisteredTool>>,
    stop_check: Option<StopCheck>,
}

impl Server {
    /// A server with no tools and the default configuration.
    #[must_use]
    pub fn new(info: ServerInfo) -> Self {
        Self {
            info,
            config: ServerConfig::default(),
            tools: BTreeMap::new(),
            stop_check: None,
        }
    }

    /// Installs a check the worker runs every [`STOP_POLL`] while idle and after each call; when
    /// it returns true the server stops: calls still queued are answered with an error and
    /// [`Server::serve`] returns [`ServeEnd::Interrupted`]. It is not run while a call executes
    /// (the call is on the worker thread; a tool observes interruption itself, as a Python tool
    /// sees `KeyboardInterrupt`). The Python binding uses it to react to signals.
    pub fn set_stop_check(&mut self, check: StopCheck) {
        self.stop_check = Some(check);
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
        if !is_valid_tool_name(&spec.name) {
            return Err(ServerError::InvalidToolName(spec.name));
        }
        if self.tools.contains_key(&spec.name) {
            return Err(ServerError::DuplicateTool(spec.name));
        }
        let validator = ArgumentValidator::new(&spec.input_schema, spec.strict).map_err(|e| {
            ServerError::BadSchema {
                tool: spec.name.clone(),
                reason: e.to_string(),
            }
        })?;
        let name: Arc<str> = Arc::from(spec.name.as_str());
        self.tools.insert(
            spec.name.clone(),
            Arc::new(RegisteredTool {
                spec,
                name,
                validator,
                handler,
            }),
        );
        Ok(())
    }

    /// Keeps only the tools named in `keep` (the CLI's `--allow`).
    pub fn retain_tools(&mut self, keep: &[String]) {
        self.tools.retain(|name, _| keep.iter().any(|k| k == name));
    }

    /// Names of the registered tools, sorted.
    #[must_use]
    pub fn tool_names(&self) -> Vec<String> {
        self.tools.keys().cloned().collect()
    }

    /// Serves `transport` until end of input (or a dead output channel). Tool calls run on the
    /// calling thread; a reader thread answers everything else at once.
    pub fn serve(&self, transport: Arc<dyn Transport>) -> ServeEnd {
        let session = Session::start(self, transport);
        session.run()
    }

    /// Serves the process's stdin/stdout with the standard descriptors protected (fd 1 goes to
    /// the real stderr, fd 0 reads the null device) until end of input.
    ///
    /// # Errors
    /// The descriptors could not be protected.
    pub fn serve_stdio(&self) -> Result<ServeEnd, ServerError> {
        let mut protected = ProtectedStdio::install()?;
        let (input, output) = protected.take_streams();
        let transport = Arc::new(StdioTransport::new(
            input,
            output,
            self.config.max_line_bytes,
        ));
        let mut server = self.clone();
        server.config.exit_on_hang = true;
        server.config.watch_parent = true;
        let end = server.serve(transport);
        drop(protected);
        Ok(end)
    }
}

/// The client's handshake (legacy era).
struct Handshake {
    revision: Revision,
    client_info: Option<Arc<Value>>,
}

/// Where a tool call's response goes.
enum Route {
    Direct,
    Batch(Arc<Batch>),
}

struct Pending {
    flags: Arc<CallFlags>,
    route: Route,
}

struct Job {
    id: RequestId,
    tool: Arc<RegisteredTool>,
    arguments: Option<Value>,
    revision: Revision,
    progress_token: Option<Value>,
    client_info: Option<Arc<Value>>,
    log_level: Option<LogLevel>,
    flags: Arc<CallFlags>,
}

/// The bounded queue of tool calls, shared by the reader (push), the worker (pop) and the
/// shutdown watchdog (drain).
struct JobQueue {
    state: Mutex<QueueState>,
    changed: Condvar,
    capacity: usize,
}

struct QueueState {
    jobs: VecDeque<Job>,
    closed: bool,
    running: Option<Arc<CallFlags>>,
    idle: bool,
    /// Threads blocked on `changed` other than a full-queue pusher: wake-ups are only paid
    /// for when somebody waits.
    waiters: usize,
    /// Pushers blocked on a full queue. They wait until it has drained to the low-water mark,
    /// so a reader that outruns the tools is woken once per half a queue, not once per call.
    pushers: usize,
}

impl JobQueue {
    /// Waits on `changed` (at most `timeout`); returns the guard and whether it timed out.
    fn wait<'a>(
        &self,
        mut st: MutexGuard<'a, QueueState>,
        timeout: Option<Duration>,
    ) -> (MutexGuard<'a, QueueState>, bool) {
        st.waiters += 1;
        let (mut st, timed_out) = match timeout {
            None => (
                self.changed
                    .wait(st)
                    .unwrap_or_else(PoisonError::into_inner),
                false,
            ),
            Some(d) => {
                let (guard, result) = self
                    .changed
                    .wait_timeout(st, d)
                    .unwrap_or_else(PoisonError::into_inner);
                (guard, result.timed_out())
            }
        };
        st.waiters -= 1;
        (st, timed_out)
    }

    /// Wakes the waiters, if any, after a change made under `st`.
    fn notify(&self, st: MutexGuard<'_, QueueState>) {
        let anyone = st.waiters > 0;
        drop(st);
        if anyone {
            self.changed.notify_all();
        }
    }

    /// The queue length at or below which a blocked pusher is woken.
    const fn low_water(&self) -> usize {
        self.capacity / 2
    }

    fn push(&self, job: Job) {
        let mut st = lock(&self.state);
        if st.jobs.len() >= self.capacity {
            st.pushers += 1;
            while st.jobs.len() > self.low_water() && !st.closed {
                st = self
                    .changed
                    .wait(st)
                    .unwrap_or_else(PoisonError::into_inner);
            }
            st.pushers -= 1;
        }
        st.jobs.push_back(job);
        self.notify(st);
    }

    /// The next job, waiting at most `poll` (forever when `None`).
    fn pop(&self, poll: Option<Duration>) -> Popped {
        let mut st = lock(&self.state);
        loop {
            if let Some(job) = st.jobs.pop_front() {
                st.running = Some(job.flags.clone());
                st.idle = false;
                let wake_pusher = st.pushers > 0 && st.jobs.len() <= self.low_water();
                if wake_pusher {
                    drop(st);
                    self.changed.notify_all();
                } else {
                    self.notify(st);
                }
                return Popped::Job(Box::new(job));
            }
            let was_busy = !st.idle;
            st.running = None;
            st.idle = true;
            if was_busy && (st.waiters > 0 || st.pushers > 0) {
                self.changed.notify_all();
            }
            if st.closed {
                return Popped::Closed;
            }
            let (guard, timed_out) = self.wait(st, poll);
            st = guard;
            if timed_out && st.jobs.is_empty() && !st.closed {
                return Popped::Idle;
            }
        }
    }

    fn close(&self) {
        let mut st = lock(&self.state);
        st.closed = true;
        drop(st);
        self.changed.notify_all();
    }

    /// Whether a call is waiting in the queue.
    fn has_jobs(&self) -> bool {
        !lock(&self.state).jobs.is_empty()
    }

    /// Waits until the worker is idle with nothing queued, or `deadline` passes.
    fn wait_idle(&self, deadline: Instant) -> bool {
        let mut st = lock(&self.state);
        loop {
            if st.idle && st.jobs.is_empty() {
                return true;
            }
            let now = Instant::now();
            if now >= deadline {
                return false;
            }
            st = self.wait(st, Some(deadline - now)).0;
        }
    }
}

enum Popped {
    Job(Box<Job>),
    Closed,
    Idle,
}

/// Collects the responses of one 2025-03-26 batch and writes them as one array.
struct Batch {
    state: Mutex<(Vec<Value>, usize)>,
}

impl Batch {
    fn new() -> Self {
        // One outstanding "seal" until every member has been read.
        Self {
            state: Mutex::new((Vec::new(), 1)),
        }
    }

    fn expect(&self) {
        lock(&self.state).1 += 1;
    }

    /// Delivers one member's outcome (`None`: nothing to send for it).
    fn deliver(&self, session: &Session, frame: Option<Value>) {
        let mut st = lock(&self.state);
        if let Some(f) = frame {
            st.0.push(f);
        }
        st.1 -= 1;
        if st.1 == 0 {
            let frames = std::mem::take(&mut st.0);
            drop(st);
            if !frames.is_empty() {
                session.write_frame(&Value::Array(frames));
            }
        }
    }
}

/// What handling one request produced.
enum Reply {
    /// Nothing to send (a notification, an ignored frame).
    None,
    /// Send this now.
    Now(Value),
    /// A tool call was queued; its response comes later.
    Later,
}

/// The state of one connection.
pub(crate) struct Session {
    info: ServerInfo,
    config: ServerConfig,
    tools: BTreeMap<String, Arc<RegisteredTool>>,
    transport: Arc<dyn Transport>,
    handshake: std::sync::OnceLock<Handshake>,
    pending: Mutex<HashMap<RequestId, Pending>>,
    queue: JobQueue,
    output_closed: AtomicBool,
    /// Legacy `logging/setLevel` threshold (`u8::MAX` = not set).
    log_level: AtomicU8,
    end: Mutex<Option<ServeEnd>>,
    stop_check: Option<StopCheck>,
}

const NO_LEVEL: u8 = u8::MAX;

impl Session {
    fn start(server: &Server, transport: Arc<dyn Transport>) -> Arc<Self> {
        Arc::new(Self {
            info: server.info.clone(),
            config: server.config.clone(),
            tools: server.tools.clone(),
            transport,
            handshake: std::sync::OnceLock::new(),
            pending: Mutex::new(HashMap::new()),
            queue: JobQueue {
                state: Mutex::new(QueueState {
                    jobs: VecDeque::new(),
                    closed: false,
                    running: None,
                    idle: true,
                    waiters: 0,
                    pushers: 0,
                }),
                changed: Condvar::new(),
                capacity: server.config.queue_capacity.max(1),
            },
            output_closed: AtomicBool::new(false),
            log_level: AtomicU8::new(NO_LEVEL),
            end: Mutex::new(None),
            stop_check: server.stop_check.clone(),
        })
    }

    pub(crate) fn log_level(&self) -> Option<LogLevel> {
        LogLevel::from_u8(self.log_level.load(Ordering::Relaxed))
    }

    fn run(self: &Arc<Self>) -> ServeEnd {
        // The parent is noted before any frame is read: a parent dying right after start-up
        // must not be mistaken for the process that adopted us.
        if self.config.watch_parent {
            self.spawn_parent_watch(crate::lifecycle::ParentWatch::new());
        }
        let reader = Arc::clone(self);
        let spawned = thread::Builder::new()
            .name("mcpline-reader".into())
            .spawn(move || reader.read_loop());
        if let Err(e) = spawned {
            log_line(&format!("cannot start the reader thread: {e}"));
            return ServeEnd::ReadFailed;
        }

        loop {
            // fds 1 and 2 stay parked on an empty capture file only while another call is
            // about to take it over; nothing may be written there while the worker waits.
            if crate::capture::is_parked() && !self.queue.has_jobs() {
                let _ = Capture::unpark();
            }
            let job = match self
                .queue
                .pop(self.stop_check.is_some().then_some(STOP_POLL))
            {
                Popped::Job(job) => job,
                Popped::Closed => break,
                Popped::Idle => {
                    if self.stop_check.as_ref().is_some_and(|check| check()) {
                        self.set_end(ServeEnd::Interrupted);
                        self.queue.close();
                        self.abandon_work("interrupted");
                        break;
                    }
                    continue;
                }
            };
            if job.flags.is_cancelled() {
                continue;
            }
            self.run_job(*job);
            if self.stop_check.as_ref().is_some_and(|check| check()) {
                self.set_end(ServeEnd::Interrupted);
                self.queue.close();
                self.abandon_work("interrupted");
                break;
            }
        }
        let _ = Capture::unpark();
        lock(&self.end).unwrap_or(ServeEnd::EndOfInput)
    }

    fn set_end(&self, end: ServeEnd) {
        lock(&self.end).get_or_insert(end);
    }

    fn read_loop(self: Arc<Self>) {
        /// Closes the queue even if the reader unwinds, so the worker can never wait forever.
        struct CloseOnExit<'a>(&'a Session);
        impl Drop for CloseOnExit<'_> {
            fn drop(&mut self) {
                if thread::panicking() {
                    log_line("the reader thread failed; stopping after the queued calls");
                    self.0.set_end(ServeEnd::ReadFailed);
                }
                self.0.queue.close();
            }
        }
        let _close = CloseOnExit(&self);
        let end = loop {
            if self.output_closed.load(Ordering::SeqCst) {
                break ServeEnd::OutputClosed;
            }
            match self.transport.read_line() {
                Ok(Some(Inbound::Line(bytes))) => self.handle_line(&bytes),
                Ok(Some(Inbound::Oversized { len, head })) => {
                    let id = sniff_id(&head);
                    let msg = format!(
                        "Invalid Request: a frame of {len} bytes exceeds the {} byte line limit \
                         (raise max_line_bytes or send less)",
                        self.config.max_line_bytes
                    );
                    self.write_frame(&error_frame(
                        id.as_ref(),
                        ErrorCode::INVALID_REQUEST,
                        &msg,
                        None,
                    ));
                }
                Ok(None) => break ServeEnd::EndOfInput,
                Err(e) => {
                    log_line(&e.to_string());
                    break ServeEnd::ReadFailed;
                }
            }
        };
        self.set_end(end);
        self.queue.close();
        if end == ServeEnd::EndOfInput {
            self.shutdown_after_grace();
        }
    }

    /// After end of input: let queued work finish within the grace period, then cancel what
    /// runs, answer what waits, and (when serving stdio) leave even if a tool hangs.
    fn shutdown_after_grace(&self) {
        if self.queue.wait_idle(Instant::now() + self.config.eof_grace) {
            return;
        }
        self.abandon_work("end of input and the grace period passed");
        if self.config.exit_on_hang
            && !self
                .queue
                .wait_idle(Instant::now() + Duration::from_millis(500))
        {
            log_line("a tool is still running after end of input; exiting without it");
            let _ = std::io::stderr().flush();
            std::process::exit(0);
        }
    }

    /// Takes the queued calls out of the queue, with the flags of the running one.
    fn take_work(&self) -> (Option<Arc<CallFlags>>, VecDeque<Job>) {
        let taken = {
            let mut st = lock(&self.queue.state);
            (st.running.clone(), std::mem::take(&mut st.jobs))
        };
        self.queue.changed.notify_all();
        taken
    }

    fn abandon_work(&self, why: &str) {
        let (running, queued) = self.take_work();
        if let Some(flags) = running {
            flags.cancel();
        }
        for job in queued {
            let msg = format!("the server is shutting down ({why}); this call was not run");
            let frame = error_frame(Some(&job.id), ErrorCode::INTERNAL_ERROR, &msg, None);
            self.complete(&job.id, &job.flags, frame);
        }
    }

    fn spawn_parent_watch(self: &Arc<Self>, watch: crate::lifecycle::ParentWatch) {
        let me = Arc::clone(self);
        let spawned = thread::Builder::new()
            .name("mcpline-parent-watch".into())
            .spawn(move || {
                loop {
                    thread::sleep(Duration::from_millis(250));
                    if !watch.parent_alive() {
                        log_line("the parent process is gone; exiting");
                        me.set_end(ServeEnd::ParentGone);
                        me.abandon_work("the parent process is gone");
                        let _ = std::io::stderr().flush();
                        std::process::exit(0);
                    }
                }
            });
        if let Err(e) = spawned {
            log_line(&format!("cannot watch the parent process: {e}"));
        }
    }

    /// Writes one frame; a dead output marks the session finished.
    pub(crate) fn write_frame(&self, frame: &Value) {
        if self.output_closed.load(Ordering::Relaxed) {
            return;
        }
        match self.transport.write_line(&encode(frame)) {
            Ok(()) => {}
            Err(TransportError::OutputClosed(_) | TransportError::PeerGone) => {
                if !self.output_closed.swap(true, Ordering::SeqCst) {
                    log_line("the client closed the protocol output; stopping");
                    self.set_end(ServeEnd::OutputClosed);
                    self.queue.close();
                    self.abandon_quietly();
                }
            }
            Err(e) => log_line(&e.to_string()),
        }
    }

    /// The output is dead: cancel everything, answer nothing. Runs inside a failed write, which
    /// may hold the running call's write lock, hence the unordered cancel.
    fn abandon_quietly(&self) {
        let (running, queued) = self.take_work();
        if let Some(flags) = running {
            flags.cancel_unordered();
        }
        for job in queued {
            job.flags.cancel_unordered();
        }
    }

    /// The one place a tool call's response is released: at most once, never after a cancel,
    /// and only for the call that `flags` belongs to (an id may be reused once a call was
    /// cancelled, while the cancelled call is still winding down).
    fn complete(&self, id: &RequestId, flags: &Arc<CallFlags>, frame: Value) {
        let entry = {
            let mut pending = lock(&self.pending);
            match pending.get(id) {
                Some(p) if Arc::ptr_eq(&p.flags, flags) => pending.remove(id),
                _ => None,
            }
        };
        let Some(entry) = entry else { return };
        let send = || match &entry.route {
            Route::Direct => self.write_frame(&frame),
            Route::Batch(batch) => batch.deliver(self, Some(frame.clone())),
        };
        if entry.flags.while_open(true, send).is_none() {
            if let Route::Batch(batch) = &entry.route {
                batch.deliver(self, None);
            }
        }
    }

    fn cancel(&self, id: &RequestId) {
        let entry = lock(&self.pending).remove(id);
        if let Some(entry) = entry {
            entry.flags.cancel();
            if let Route::Batch(batch) = &entry.route {
                batch.deliver(self, None);
            }
        }
    }

    // ----- inbound -----

    fn handle_line(&self, bytes: &[u8]) {
        let value: Value = match serde_json::from_slice(bytes) {
            Ok(v) => v,
            Err(e) => {
                let why = if std::str::from_utf8(bytes).is_err() {
                    "the line is not valid UTF-8".to_string()
                } else {
                    format!("the line is not JSON ({e})")
                };
                let msg = format!("Parse error: {why}");
                self.write_frame(&error_frame(None, ErrorCode::PARSE_ERROR, &msg, None));
                return;
            }
        };
        match value {
            Value::Array(items) => self.handle_batch(items),
            Value::Object(obj) => match self.handle_message(obj, &Route::Direct) {
                Reply::Now(frame) => self.write_frame(&frame),
                Reply::None | Reply::Later => {}
            },
            _ => self.write_frame(&error_frame(
                None,
                ErrorCode::INVALID_REQUEST,
                "Invalid Request: a frame must be a JSON object",
                None,
            )),
        }
    }

    fn handle_batch(&self, items: Vec<Value>) {
        let batching = self
            .handshake
            .get()
            .is_some_and(|h| h.revision.has_batches());
        if !batching || items.is_empty() {
            let msg = if items.is_empty() {
                "Invalid Request: an empty batch"
            } else {
                "Invalid Request: JSON-RPC batches exist only in protocol revision 2025-03-26 \
                 (send one message per line)"
            };
            self.write_frame(&error_frame(None, ErrorCode::INVALID_REQUEST, msg, None));
            return;
        }
        let batch = Arc::new(Batch::new());
        for item in items {
            let reply = match item {
                Value::Object(obj) => {
                    if obj.get("method").and_then(Value::as_str) == Some("initialize") {
                        let id = match IdField::of(&obj) {
                            IdField::Valid(id) => Some(id),
                            _ => None,
                        };
                        Reply::Now(error_frame(
                            id.as_ref(),
                            ErrorCode::INVALID_REQUEST,
                            "Invalid Request: initialize must not be part of a batch",
                            None,
                        ))
                    } else {
                        batch.expect();
                        match self.handle_message(obj, &Route::Batch(Arc::clone(&batch))) {
                            Reply::Now(f) => {
                                batch.deliver(self, Some(f));
                                continue;
                            }
                            Reply::None => {
                                batch.deliver(self, None);
                                continue;
                            }
                            Reply::Later => continue,
                        }
                    }
                }
                _ => Reply::Now(error_frame(
                    None,
                    ErrorCode::INVALID_REQUEST,
                    "Invalid Request: a batch member must be a JSON object",
                    None,
                )),
            };
            if let Reply::Now(f) = reply {
                batch.expect();
                batch.deliver(self, Some(f));
            }
        }
        batch.deliver(self, None);
    }

    fn handle_message(&self, mut obj: Map<String, Value>, route: &Route) -> Reply {
        let raw_params = obj.remove("params");
        let id = IdField::of(&obj);
        let valid_id = match &id {
            IdField::Valid(id) => Some(id),
            _ => None,
        };
        let Some(method) = obj.get("method") else {
            if obj.contains_key("result") || obj.contains_key("error") {
                log_line("ignored a response from the client (this server sends no requests)");
                return Reply::None;
            }
            return Reply::Now(error_frame(
                valid_id,
                ErrorCode::PARSE_ERROR,
                "Parse error: the frame has no \"method\" and is not a response",
                None,
            ));
        };
        let Some(method) = method.as_str() else {
            return Reply::Now(error_frame(
                valid_id,
                ErrorCode::INVALID_REQUEST,
                "Invalid Request: \"method\" must be a string",
                None,
            ));
        };
        if obj.get("jsonrpc").and_then(Value::as_str) != Some("2.0") {
            return Reply::Now(error_frame(
                valid_id,
                ErrorCode::INVALID_REQUEST,
                "Invalid Request: \"jsonrpc\" must be \"2.0\"",
                None,
            ));
        }
        let id = match id {
            IdField::Absent => {
                self.handle_notification(method, raw_params.as_ref());
                return Reply::None;
            }
            IdField::Invalid => {
                return Reply::Now(error_frame(
                    None,
                    ErrorCode::INVALID_REQUEST,
                    "Invalid Request: \"id\" must be a string or an integer",
                    None,
                ));
            }
            IdField::Valid(id) => id,
        };
        let params = match raw_params {
            None | Some(Value::Null) => Map::new(),
            Some(Value::Object(p)) => p,
            Some(_) => {
                return Reply::Now(error_frame(
                    Some(&id),
                    ErrorCode::INVALID_PARAMS,
                    "Invalid params: \"params\" must be an object",
                    None,
                ));
            }
        };
        match self.handle_request(&id, method, params, route) {
            Ok(reply) => reply,
            Err((code, msg, data)) => Reply::Now(error_frame(Some(&id), code, &msg, data)),
        }
    }

    fn handle_notification(&self, method: &str, params: Option<&Value>) {
        if method == "notifications/cancelled" {
            if let Some(id) = params
                .and_then(|p| p.get("requestId"))
                .and_then(RequestId::from_value)
            {
                self.cancel(&id);
            }
        }
        // notifications/initialized and anything unknown: nothing to do.
    }

    fn handle_request(
        &self,
        id: &RequestId,
        method: &str,
        params: Map<String, Value>,
        route: &Route,
    ) -> Result<Reply, RequestError> {
        let meta = params.get("_meta").and_then(Value::as_object);
        let stateless = meta.is_some_and(|m| {
            m.contains_key(META_PROTOCOL_VERSION) || m.contains_key(META_CLIENT_CAPABILITIES)
        });
        if stateless {
            return self.handle_stateless(id, method, params, route);
        }
        let Some(handshake) = self.handshake.get() else {
            return match method {
                "initialize" => self.initialize(id, &params),
                "ping" => Ok(Reply::Now(result_frame(id, json!({})))),
                _ => Err(invalid_params(format!(
                    "Invalid params: {method:?} arrived before initialize and without the \
                     2026-07-28 envelope (params._meta with {META_PROTOCOL_VERSION} and \
                     {META_CLIENT_CAPABILITIES}); send initialize first"
                ))),
            };
        };
        let rev = handshake.revision;
        match method {
            "initialize" => Err((
                ErrorCode::INVALID_REQUEST,
                format!(
                    "Invalid Request: the session is already initialized (protocol {rev}); \
                     initialize may be sent once per process"
                ),
                None,
            )),
            "ping" => Ok(Reply::Now(result_frame(id, json!({})))),
            "tools/list" => Ok(Reply::Now(result_frame(id, self.list_tools(rev, &params)?))),
            "tools/call" => {
                self.enqueue_call(id, params, rev, handshake.client_info.clone(), None, route)
            }
            "logging/setLevel" => {
                let level = params
                    .get("level")
                    .and_then(Value::as_str)
                    .and_then(LogLevel::parse)
                    .ok_or_else(|| {
                        invalid_params(
                            "Invalid params: level must be one of debug, info, notice, warning, \
                             error, critical, alert, emergency"
                                .into(),
                        )
                    })?;
                self.log_level.store(level.to_u8(), Ordering::Relaxed);
                Ok(Reply::Now(result_frame(id, json!({}))))
            }
            _ => Err(method_not_found(method)),
        }
    }

    fn handle_stateless(
        &self,
        id: &RequestId,
        method: &str,
        params: Map<String, Value>,
        route: &Route,
    ) -> Result<Reply, RequestError> {
        let no_meta = Map::new();
        let meta = params
            .get("_meta")
            .and_then(Value::as_object)
            .unwrap_or(&no_meta);
        let Some(requested) = meta.get(META_PROTOCOL_VERSION).and_then(Value::as_str) else {
            return Err(invalid_params(format!(
                "Invalid params: params._meta must carry {META_PROTOCOL_VERSION} (a string)"
            )));
        };
        if !meta
            .get(META_CLIENT_CAPABILITIES)
            .is_some_and(Value::is_object)
        {
            return Err(invalid_params(format!(
                "Invalid params: params._meta must carry {META_CLIENT_CAPABILITIES} (an object)"
            )));
        }
        let Some(rev) = Revision::parse(requested).filter(|r| STATELESS_REVISIONS.contains(r))
        else {
            let supported: Vec<&str> = STATELESS_REVISIONS.iter().map(|r| r.as_str()).collect();
            return Err((
                ErrorCode::UNSUPPORTED_PROTOCOL_VERSION,
                "Unsupported protocol version".into(),
                Some(json!({"supported": supported, "requested": requested})),
            ));
        };
        let log_level = match meta.get(META_LOG_LEVEL) {
            None => None,
            Some(v) => Some(v.as_str().and_then(LogLevel::parse).ok_or_else(|| {
                invalid_params(format!(
                    "Invalid params: {META_LOG_LEVEL} is not a log level"
                ))
            })?),
        };
        let client_info = meta.get(META_CLIENT_INFO).cloned().map(Arc::new);
        let result = match method {
            "server/discover" => self.discover(rev),
            "tools/list" => self.list_tools(rev, &params)?,
            "tools/call" => {
                return self.enqueue_call(id, params, rev, client_info, log_level, route);
            }
            _ => return Err(method_not_found(method)),
        };
        Ok(Reply::Now(result_frame(id, self.stamp(rev, result))))
    }

    /// Adds what 2026-07-28 requires of every result.
    fn stamp(&self, rev: Revision, mut result: Value) -> Value {
        if rev.is_stateless() {
            if let Value::Object(obj) = &mut result {
                obj.insert("resultType".into(), Value::from("complete"));
                let meta = obj
                    .entry("_meta")
                    .or_insert_with(|| Value::Object(Map::new()));
                if let Value::Object(meta) = meta {
                    meta.insert(META_SERVER_INFO.into(), self.info.to_json(rev));
                }
            }
        }
        result
    }

    fn initialize(
        &self,
        id: &RequestId,
        params: &Map<String, Value>,
    ) -> Result<Reply, RequestError> {
        let Some(requested) = params.get("protocolVersion").and_then(Value::as_str) else {
            return Err(invalid_params(
                "Invalid params: initialize needs \"protocolVersion\" (a string)".into(),
            ));
        };
        let revision = Revision::parse(requested)
            .filter(|r| HANDSHAKE_REVISIONS.contains(r))
            .unwrap_or_else(Revision::newest_handshake);
        let client_info = params.get("clientInfo").cloned().map(Arc::new);
        if self
            .handshake
            .set(Handshake {
                revision,
                client_info,
            })
            .is_err()
        {
            return Err((
                ErrorCode::INVALID_REQUEST,
                "Invalid Request: the session is already initialized".into(),
                None,
            ));
        }
        let mut result = Map::new();
        result.insert("protocolVersion".into(), Value::from(revision.as_str()));
        result.insert(
            "capabilities".into(),
            json!({"logging": {}, "tools": {"listChanged": false}}),
        );
        result.insert("serverInfo".into(), self.info.to_json(revision));
        if let Some(text) = &self.info.instructions {
            result.insert("instructions".into(), Value::from(text.as_str()));
        }
        Ok(Reply::Now(result_frame(id, Value::Object(result))))
    }

    fn discover(&self, rev: Revision) -> Value {
        let supported: Vec<&str> = STATELESS_REVISIONS.iter().map(|r| r.as_str()).collect();
        let mut result = Map::new();
        result.insert("supportedVersions".into(), json!(supported));
        result.insert(
            "capabilities".into(),
            json!({"tools": {"listChanged": false}}),
        );
        if let Some(text) = &self.info.instructions {
            result.insert("instructions".into(), Value::from(text.as_str()));
        }
        result.insert("ttlMs".into(), Value::from(self.config.list_ttl_ms));
        result.insert("cacheScope".into(), Value::from("public"));
        let _ = rev;
        Value::Object(result)
    }

    fn list_tools(
        &self,
        rev: Revision,
        params: &Map<String, Value>,
    ) -> Result<Value, RequestError> {
        let start = match params.get("cursor") {
            None | Some(Value::Null) => 0,
            Some(Value::String(c)) => c
                .strip_prefix("tools:")
                .and_then(|n| n.parse::<usize>().ok())
                .filter(|&n| n > 0 && n < self.tools.len())
                .ok_or_else(|| {
                    invalid_params(format!(
                        "Invalid params: unknown cursor {c:?} (pass back a nextCursor from an \
                         earlier tools/list)"
                    ))
                })?,
            Some(_) => {
                return Err(invalid_params(
                    "Invalid params: cursor must be a string".into(),
                ));
            }
        };
        let page = self.config.page_size.max(1);
        let tools: Vec<Value> = self
            .tools
            .values()
            .skip(start)
            .take(page)
            .map(|t| t.spec.descriptor(rev))
            .collect();
        let mut result = Map::new();
        result.insert("tools".into(), Value::Array(tools));
        if start + page < self.tools.len() {
            result.insert(
                "nextCursor".into(),
                Value::from(format!("tools:{}", start + page)),
            );
        }
        if rev.is_stateless() {
            result.insert("ttlMs".into(), Value::from(self.config.list_ttl_ms));
            result.insert("cacheScope".into(), Value::from("public"));
        }
        Ok(Value::Object(result))
    }

    fn enqueue_call(
        &self,
        id: &RequestId,
        mut params: Map<String, Value>,
        revision: Revision,
        client_info: Option<Arc<Value>>,
        log_level: Option<LogLevel>,
        route: &Route,
    ) -> Result<Reply, RequestError> {
        let Some(name) = params.get("name").and_then(Value::as_str) else {
            return Err(invalid_params(
                "Invalid params: tools/call needs \"name\" (a string)".into(),
            ));
        };
        let Some(tool) = self.tools.get(name).map(Arc::clone) else {
            let known: Vec<&str> = self.tools.keys().map(String::as_str).take(20).collect();
            return Err((
                ErrorCode::METHOD_NOT_FOUND,
                format!("Unknown tool: {name:?} (available: {})", known.join(", ")),
                None,
            ));
        };
        let arguments = match params.remove("arguments") {
            None | Some(Value::Null) => None,
            Some(v @ Value::Object(_)) => Some(v),
            Some(_) => {
                return Err(invalid_params(
                    "Invalid params: \"arguments\" must be an object".into(),
                ));
            }
        };
        let progress_token = params
            .get("_meta")
            .and_then(|m| m.get("progressToken"))
            .filter(|t| t.is_string() || t.is_i64() || t.is_u64())
            .cloned();
        let flags = Arc::new(CallFlags::default());
        {
            let mut pending = lock(&self.pending);
            if pending.contains_key(id) {
                return Err((
                    ErrorCode::INVALID_REQUEST,
                    format!(
                        "Invalid Request: request id {id} is already in use by a call in progress"
                    ),
                    None,
                ));
            }
            let route = match route {
                Route::Direct => Route::Direct,
                Route::Batch(b) => Route::Batch(Arc::clone(b)),
            };
            pending.insert(
                id.clone(),
                Pending {
                    flags: Arc::clone(&flags),
                    route,
                },
            );
        }
        self.queue.push(Job {
            id: id.clone(),
            tool,
            arguments,
            revision,
            progress_token,
            client_info,
            log_level,
            flags,
        });
        Ok(Reply::Later)
    }

    // ----- the worker -----

    fn run_job(self: &Arc<Self>, job: Job) {
        let tool = &job.tool;
        let ctx = CallContext::new(
            Arc::clone(self),
            Arc::clone(&job.flags),
            job.id.clone(),
            Arc::clone(&tool.name),
            job.revision,
            job.progress_token,
            job.client_info,
            job.log_level,
        );
        let output = match tool.validator.check(&tool.spec.name, job.arguments) {
            Ok(arguments) => self.invoke(tool, arguments, &ctx),
            Err(message) => ToolOutput::error(message),
        };
        let result = self.stamp(job.revision, output.into_result(job.revision));
        self.complete(&job.id, &job.flags, result_frame(&job.id, result));
    }

    fn invoke(&self, tool: &RegisteredTool, arguments: Value, ctx: &CallContext) -> ToolOutput {
        let mode = tool.spec.output.unwrap_or(self.config.output);
        let capture = if mode != OutputMode::Off && self.config.capture {
            tool.handler.flush_output();
            match Capture::begin() {
                Ok(c) => Some(c),
                Err(e) => {
                    log_line(&format!("tool {:?} runs uncaptured: {e}", tool.spec.name));
                    None
                }
            }
        } else {
            // An uncaptured tool writes to the real stdout and stderr, not a parked file.
            let _ = Capture::unpark();
            None
        };
        let timer = tool
            .spec
            .timeout
            .map(|limit| Timer::start(limit, Arc::clone(&ctx.flags)));
        let outcome = catch_unwind(AssertUnwindSafe(|| tool.handler.call(arguments, ctx)));
        drop(timer);
        let mut output = match outcome {
            Ok(output) => output,
            Err(panic) => {
                let why = panic
                    .downcast_ref::<&str>()
                    .map(|s| (*s).to_string())
                    .or_else(|| panic.downcast_ref::<String>().cloned())
                    .unwrap_or_else(|| "unknown panic".into());
                ToolOutput::error(format!("the tool panicked: {why}"))
            }
        };
        if ctx.flags.timed_out() {
            let secs = tool.spec.timeout.map_or(0.0, |d| d.as_secs_f64());
            output = ToolOutput::error(format!(
                "Tool {:?} timed out after {secs} s and was cancelled",
                tool.spec.name
            ));
        }
        if let Some(capture) = capture {
            tool.handler.flush_output();
            // Quiet calls back to back keep fds 1 and 2 on the same empty file (no dup2).
            let finished = if self.queue.has_jobs() {
                capture.finish_or_park()
            } else {
                capture.finish()
            };
            match finished {
                Ok(captured) if !captured.is_empty() => {
                    let label = format!("[{} #{}] ", tool.spec.name, ctx.id);
                    let mut err = std::io::stderr().lock();
                    if let Err(e) = captured.copy_labelled(&label, &mut err) {
                        drop(err);
                        log_line(&format!("could not copy captured output to stderr: {e}"));
                    }
                    if mode == OutputMode::Result || output.is_error {
                        let tail = captured.tail_text(self.config.attach_limit);
                        output
                            .content
                            .push(Content::Text(format!("Output of the tool run:\n{tail}")));
                    }
                }
                Ok(_) => {}
                Err(e) => log_line(&format!("capture of tool {:?} failed: {e}", tool.spec.name)),
            }
        }
        output
    }
}

/// Cancels a call when its time limit passes.
struct Timer {
    stop: Arc<(Mutex<bool>, Condvar)>,
}

impl Timer {
    fn start(limit: Duration, flags: Arc<CallFlags>) -> Self {
        let stop = Arc::new((Mutex::new(false), Condvar::new()));
        let theirs = Arc::clone(&stop);
        let spawned = thread::Builder::new()
            .name("mcpline-timeout".into())
            .spawn(move || {
                let (m, cv) = &*theirs;
                let deadline = Instant::now() + limit;
                let mut stopped = lock(m);
                while !*stopped {
                    let now = Instant::now();
                    if now >= deadline {
                        drop(stopped);
                        flags.time_out();
                        return;
                    }
                    stopped = cv
                        .wait_timeout(stopped, deadline - now)
                        .unwrap_or_else(PoisonError::into_inner)
                        .0;
                }
            });
        if let Err(e) = spawned {
            log_line(&format!("cannot start a timeout timer: {e}"));
        }
        Self { stop }
    }
}

impl Drop for Timer {
    fn drop(&mut self) {
        *lock(&self.stop.0) = true;
        self.stop.1.notify_all();
    }
}

type RequestError = (ErrorCode, String, Option<Value>);

fn invalid_params(msg: String) -> RequestError {
    (ErrorCode::INVALID_PARAMS, msg, None)
}

fn method_not_found(method: &str) -> RequestError {
    (
        ErrorCode::METHOD_NOT_FOUND,
        format!("Method not found: {method:?}"),
        None,
    )
}
