//! One connection's life: the reader thread, the worker loop that runs tool calls in arrival
//! order, end of input with its grace period, and the parent-death watch.
//!
//! What each inbound frame means is [`dispatch`]'s job; what each quick method answers
//! is [`crate::methods`]'; running a call is [`crate::invoke`]'s; sending is [`Outbox`]'s.

mod dispatch;

use std::io::Write as _;
use std::sync::atomic::{AtomicBool, AtomicU8, Ordering};
use std::sync::{Arc, OnceLock};
use std::thread;
use std::time::{Duration, Instant};

use serde_json::Value;

use crate::capture;
use crate::completion;
use crate::config::{ExitHook, STOP_POLL, ServeEnd, ServerConfig, ServerInfo, StopCheck};
use crate::context::CallContext;
use crate::flags::CallFlags;
use crate::framing::Inbound;
use crate::invoke::{self, EarlyAnswer, invoke};
use crate::jsonrpc::{Answer, ErrorCode, RequestError, RequestId, error_frame, sniff_id};
use crate::lifecycle::{ParentWatch, run_exit_hook};
use crate::log::log_line;
use crate::methods::{self, Handshake};
use crate::outbox::{Outbox, unset_log_level};
use crate::protocol::{LogLevel, Revision};
use crate::queue::{JobQueue, Popped, Queued, ReaderTurn, Turn};
use crate::registry::{RegisteredPrompt, RegisteredResource, RegisteredTool, Registry};
use crate::sys::{Alarm, Unparked, Waker, park};
use crate::tool::ToolOutput;
use crate::transport::{Awaited, Transport, WakeableInput};

/// The label of the lines a call still running at exit had written (copied to stderr as the
/// process leaves without it).
const RUNNING_AT_EXIT: &str = "[call still running at exit] ";

/// What a job's answer is: a `tools/call` result, a `prompts/get` result made by the prompt's
/// runner, or the `resources/read` result of a URI.
#[derive(Clone)]
pub(crate) enum Work {
    Call,
    Prompt(Arc<RegisteredPrompt>),
    Read(Arc<RegisteredResource>, Arc<str>),
    /// A completion, with the values the argument's declared type offers.
    Complete(Arc<Vec<String>>),
}

/// A tool call (or a prompt's runner) waiting for the worker.
pub(crate) struct Job {
    pub(crate) id: RequestId,
    pub(crate) tool: Arc<RegisteredTool>,
    pub(crate) work: Work,
    pub(crate) arguments: Option<Value>,
    pub(crate) revision: Revision,
    pub(crate) progress_token: Option<Value>,
    pub(crate) client_info: Option<Arc<Value>>,
    pub(crate) log_level: Option<LogLevel>,
    pub(crate) flags: Arc<CallFlags>,
}

impl Queued for Job {
    fn flags(&self) -> &Arc<CallFlags> {
        &self.flags
    }
}

/// The period of the lend alarm: a call on a turn lent to the worker runs one to two periods
/// before the reader thread takes the turn back (so a ping or a cancellation waits about that
/// long to be read), and parked streams are settled within as long of the worker's wait.
const LEND: Duration = Duration::from_millis(1);

/// An input that either thread can read (see [`JobQueue::pop`]): a waker for each thread's wait
/// on it (the reader's when the worker takes the turn, both when the serve ends) and the alarm
/// that ends a lent turn.
pub(crate) struct Handoff {
    input: Arc<dyn WakeableInput>,
    reader: Waker,
    worker: Waker,
    alarm: Option<Alarm>,
    /// The worker's last request was there before it waited, or another one followed it: the
    /// client is pipelining, and the reader thread should read on while calls run.
    pipelined: AtomicBool,
}

impl Handoff {
    /// A hand-off for `input`, if this platform can interrupt a wait on it.
    pub(crate) fn new(input: Arc<dyn WakeableInput>) -> Option<Self> {
        match Waker::new().and_then(|reader| Ok((reader, Waker::new()?))) {
            Ok((reader, worker)) => Some(Self {
                input,
                reader,
                worker,
                alarm: Alarm::new().ok(),
                pipelined: AtomicBool::new(false),
            }),
            Err(e) => {
                if e.kind() != std::io::ErrorKind::Unsupported {
                    log_line(&format!("reading stays on the reader thread: {e}"));
                }
                None
            }
        }
    }
}

impl Turn for Handoff {
    fn wake_reader(&self) {
        self.reader.wake();
    }

    fn wake_worker(&self) {
        self.worker.wake();
    }

    fn can_lend(&self) -> bool {
        self.alarm.is_some() && !self.pipelined.load(Ordering::Relaxed)
    }

    fn arm(&self) {
        if let Some(alarm) = &self.alarm {
            alarm.arm(LEND);
        }
    }
}

/// What a client's session keeps from one message to the next: the handshake and the
/// `logging/setLevel` threshold. A stdio connection has one; over HTTP every exchange of a
/// session shares its one (and a stateless request gets a fresh one).
#[derive(Clone)]
pub(crate) struct PeerState {
    pub(crate) handshake: Arc<OnceLock<Handshake>>,
    pub(crate) log_level: Arc<AtomicU8>,
}

impl PeerState {
    pub(crate) fn new() -> Self {
        Self {
            handshake: Arc::new(OnceLock::new()),
            log_level: unset_log_level(),
        }
    }
}

/// The state of one connection (or of one HTTP exchange).
pub(crate) struct Session {
    pub(crate) info: ServerInfo,
    pub(crate) config: ServerConfig,
    pub(crate) registry: Registry,
    pub(crate) handshake: Arc<OnceLock<Handshake>>,
    pub(crate) queue: Arc<JobQueue<Job>>,
    pub(crate) outbox: Arc<Outbox>,
    stop_check: Option<StopCheck>,
    before_exit: Option<ExitHook>,
    transport: Arc<dyn Transport>,
    handoff: Option<Arc<Handoff>>,
    /// Where calls of concurrent tools count against `max_concurrency` when that is wider than
    /// this session (every exchange of an HTTP endpoint shares one); else `queue`.
    gate: OnceLock<Arc<JobQueue<Job>>>,
}

impl Session {
    #[allow(clippy::too_many_arguments)]
    pub(crate) fn new(
        info: ServerInfo,
        config: ServerConfig,
        registry: Registry,
        stop_check: Option<StopCheck>,
        before_exit: Option<ExitHook>,
        transport: Arc<dyn Transport>,
        handoff: Option<Handoff>,
        peer: PeerState,
    ) -> Arc<Self> {
        let queue = Arc::new(JobQueue::new(config.queue_capacity));
        let handoff = handoff.map(Arc::new);
        let on_closed = {
            let queue = Arc::clone(&queue);
            let handoff = handoff.clone();
            Box::new(move || {
                queue.abandon_quietly(ServeEnd::OutputClosed);
                // A worker waiting on the input must notice that the serve is over.
                if let Some(h) = &handoff {
                    h.reader.wake();
                    h.worker.wake();
                }
            })
        };
        let outbox = Arc::new(Outbox::new(
            Arc::clone(&transport),
            on_closed,
            peer.log_level,
        ));
        Arc::new(Self {
            info,
            config,
            registry,
            handshake: peer.handshake,
            queue,
            outbox,
            stop_check,
            before_exit,
            transport,
            handoff,
            gate: OnceLock::new(),
        })
    }

    /// Counts this session's concurrent calls in `gate` (shared with other sessions).
    pub(crate) fn share_gate(&self, gate: Arc<JobQueue<Job>>) {
        let _ = self.gate.set(gate);
    }

    fn gate(&self) -> &JobQueue<Job> {
        self.gate.get().map_or(&self.queue, |gate| gate)
    }

    /// Serves until end of input (or a dead output, a stop check, a failed read): reads on a
    /// thread of its own and runs tool calls on the calling thread.
    pub(crate) fn run(self: &Arc<Self>) -> ServeEnd {
        // The parent is noted before any frame is read: a parent dying right after start-up
        // must not be mistaken for the process that adopted us.
        if self.config.watch_parent {
            self.spawn_parent_watch(ParentWatch::new());
        }
        capture::set_capture_cap(self.config.capture_cap);
        let reader = Arc::clone(self);
        let spawned = thread::Builder::new()
            .name("mcpline-reader".into())
            .spawn(move || reader.read_loop());
        if let Err(e) = spawned {
            log_line(&format!("cannot start the reader thread: {e}"));
            return ServeEnd::ReadFailed;
        }

        let poll = self.stop_check.is_some().then_some(STOP_POLL);
        let turn = self.handoff.as_deref().map(|h| h as &dyn Turn);
        loop {
            // A quiet call may have left fds 1 and 2 parked for the next one; nothing may be
            // written there while the worker waits for work (reading the input itself, it
            // decides in `read_as_worker`).
            if self.queue.may_wait() {
                let _ = capture::settle();
            }
            let job = match self.queue.pop(poll, turn) {
                Popped::Job(job) => job,
                Popped::Read => {
                    if self.read_as_worker(poll) {
                        break;
                    }
                    continue;
                }
                Popped::Closed => break,
                Popped::Idle => {
                    if self.stop_requested() {
                        break;
                    }
                    continue;
                }
            };
            if job.flags.is_cancelled() {
                continue;
            }
            self.run_job(job);
            if self.stop_requested() {
                break;
            }
        }
        // Concurrent calls still running end within the grace period (the reader thread cancels
        // them when it passes); a task that ignores its cancellation is not waited for forever.
        let patience = self.config.eof_grace + Duration::from_secs(2);
        if !self.queue.wait_in_flight(Instant::now() + patience) {
            log_line("concurrent tool calls are still running; the serve ends without them");
        }
        let _ = capture::settle();
        if let Some(handoff) = &self.handoff {
            // Requests already read into the buffer when the serve stopped are answered too
            // (pings are, calls are refused): everything read gets its answer.
            handoff
                .input
                .drain_buffered(&mut |frame| self.handle_inbound(frame));
            handoff.reader.wake();
        }
        self.queue.end().unwrap_or(ServeEnd::EndOfInput)
    }

    /// The worker holds the reading turn: reads and handles one frame (a tool call it reads is
    /// queued, and the next `pop` runs it on this thread). True when the serve must stop.
    fn read_as_worker(&self, poll: Option<std::time::Duration>) -> bool {
        let Some(handoff) = &self.handoff else {
            return false;
        };
        // A host sending one request at a time sends the next one soon: fds 1 and 2 stay
        // parked until then, or until the alarm asks for them to be settled (what is written
        // meanwhile is reported as background output, as between pipelined calls).
        if capture::is_parked() && !self.queue.defer_settle(handoff.as_ref()) {
            let _ = capture::settle();
        }
        // A call the reader thread read and queued just before the worker took the turn must
        // run, not wait behind the worker's wait for input.
        let read = handoff.input.next_frame_or_wake(
            &handoff.worker,
            poll,
            &|| self.queue.has_jobs(),
            false,
            &mut |frame| self.handle_inbound(frame),
        );
        match read {
            Ok(Awaited::Handled { pipelined }) => {
                handoff.pipelined.store(pipelined, Ordering::Relaxed);
            }
            Ok(Awaited::Woken) => {}
            Ok(Awaited::End) => self.input_ended(ServeEnd::EndOfInput),
            Ok(Awaited::TimedOut) => return self.stop_requested(),
            Err(e) => {
                log_line(&e.to_string());
                self.input_ended(ServeEnd::ReadFailed);
            }
        }
        false
    }

    /// Runs the stop check; when it fires, stops taking work and answers what is queued.
    fn stop_requested(&self) -> bool {
        if !self.stop_check.as_ref().is_some_and(|check| check()) {
            return false;
        }
        self.queue.set_end(ServeEnd::Interrupted);
        self.queue.close();
        self.abandon_work("interrupted");
        true
    }

    fn read_loop(self: Arc<Self>) {
        /// Closes the queue even if the reader unwinds, so the worker can never wait forever.
        struct CloseOnExit<'a>(&'a Session);
        impl Drop for CloseOnExit<'_> {
            fn drop(&mut self) {
                if thread::panicking() {
                    log_line("the reader thread failed; stopping after the queued calls");
                    self.0.queue.set_end(ServeEnd::ReadFailed);
                }
                self.0.queue.close();
            }
        }
        let _close = CloseOnExit(&self);
        let end = loop {
            if self.outbox.is_closed() {
                break ServeEnd::OutputClosed;
            }
            let read = match &self.handoff {
                Some(handoff) => {
                    match self.queue.reader_turn() {
                        ReaderTurn::Read => {}
                        ReaderTurn::Parked => {
                            if park(&handoff.reader, handoff.alarm.as_ref()) == Unparked::Alarm {
                                self.queue.alarm_rang(handoff.as_ref());
                            }
                            continue;
                        }
                        // The worker read the end of the input (or the serve stopped).
                        ReaderTurn::Closed => return,
                    }
                    self.queue.reader_waiting(true);
                    let mut has_input = false;
                    let read = handoff.input.next_frame_or_wake(
                        &handoff.reader,
                        None,
                        &|| self.queue.worker_reads(),
                        true,
                        &mut |frame| {
                            if !has_input {
                                self.queue.reader_waiting(false);
                                has_input = true;
                            }
                            self.handle_inbound(frame);
                        },
                    );
                    if !has_input {
                        self.queue.reader_waiting(false);
                    }
                    match read {
                        Ok(Awaited::Handled { .. } | Awaited::Woken | Awaited::TimedOut) => {
                            continue;
                        }
                        Ok(Awaited::End) => Ok(None),
                        Err(e) => Err(e),
                    }
                }
                None => self.transport.read_line(),
            };
            match read {
                Ok(Some(frame)) => self.handle_inbound(frame),
                Ok(None) => break ServeEnd::EndOfInput,
                Err(e) => {
                    log_line(&e.to_string());
                    break ServeEnd::ReadFailed;
                }
            }
        };
        self.input_ended(end);
    }

    /// One frame from the input, whichever thread read it.
    fn handle_inbound(&self, frame: Inbound) {
        match frame {
            Inbound::Line(bytes) => {
                self.outbox.trace_in(&bytes);
                self.handle_line(&bytes);
            }
            Inbound::Oversized { len, head } => {
                self.outbox.trace_in(&head);
                let id = sniff_id(&head);
                let msg = format!(
                    "Invalid Request: a frame of {len} bytes exceeds the {} byte line limit \
                     (raise max_line_bytes or send less)",
                    self.config.max_line_bytes
                );
                self.outbox
                    .write(&RequestError::invalid_request(msg).into_frame(id.as_ref()));
            }
        }
    }

    /// Nothing more will be read: no more jobs come, and after end of input the grace period
    /// runs.
    fn input_ended(&self, end: ServeEnd) {
        self.queue.set_end(end);
        self.queue.close();
        if let Some(handoff) = &self.handoff {
            // A parked reader thread must see that the serve is over.
            handoff.reader.wake();
        }
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
            run_exit_hook(self.before_exit.as_ref());
            capture::salvage(RUNNING_AT_EXIT);
            let _ = std::io::stderr().flush();
            std::process::exit(0);
        }
    }

    /// The HTTP client of an exchange went away: its calls stop and nothing more is sent.
    pub(crate) fn abandon_exchange(&self) {
        self.queue.abandon_quietly(ServeEnd::OutputClosed);
        self.outbox.cancel_all();
    }

    /// Cancels the running call and answers every queued one with an error.
    fn abandon_work(&self, why: &str) {
        let (running, queued) = self.queue.take_work();
        for flags in running {
            flags.cancel();
        }
        for job in queued {
            self.refuse(job, why);
        }
    }

    /// Answers a call that will not run because the server is shutting down.
    fn refuse(&self, job: Job, why: &str) {
        let msg = format!("the server is shutting down ({why}); this call was not run");
        let frame = error_frame(Some(&job.id), ErrorCode::INTERNAL_ERROR, &msg, None);
        self.outbox
            .complete(&job.id, &job.flags, Answer::Frame(frame));
    }

    fn spawn_parent_watch(self: &Arc<Self>, watch: ParentWatch) {
        let me = Arc::clone(self);
        let spawned = thread::Builder::new()
            .name("mcpline-parent-watch".into())
            .spawn(move || {
                loop {
                    thread::sleep(Duration::from_millis(250));
                    if !watch.parent_alive() {
                        log_line("the parent process is gone; exiting");
                        me.queue.set_end(ServeEnd::ParentGone);
                        me.abandon_work("the parent process is gone");
                        // Fds 1 and 2 may still be parked on the last call's file (see
                        // `read_as_worker`): back first, so that the hook's output and what
                        // was written since that call reach the real stderr.
                        let _ = capture::settle();
                        run_exit_hook(me.before_exit.as_ref());
                        capture::salvage(RUNNING_AT_EXIT);
                        let _ = std::io::stderr().flush();
                        std::process::exit(0);
                    }
                }
            });
        if let Err(e) = spawned {
            log_line(&format!("cannot watch the parent process: {e}"));
        }
    }

    /// Validates a job's arguments, runs it, and releases its response. A concurrent tool's call
    /// is started (once a slot is free) and answered when it ends, on the thread that ends it.
    pub(crate) fn run_job(self: &Arc<Self>, job: Job) {
        let tool = &job.tool;
        let ctx = CallContext::new(
            Arc::clone(&self.outbox),
            Arc::clone(&job.flags),
            job.id.clone(),
            Arc::clone(&tool.name),
            job.revision,
            job.progress_token,
            job.client_info,
            job.log_level,
        );
        // With a time limit: how the timer answers a call that does not end once told to stop.
        let early = tool.spec.timeout.map(|_| {
            let me = Arc::clone(self);
            let (id, flags, revision) = (job.id.clone(), Arc::clone(&job.flags), job.revision);
            let work = job.work.clone();
            Box::new(move |output| me.answer(&id, &flags, revision, &work, output)) as EarlyAnswer
        });
        let output = match tool.validator.check(&tool.spec.name, job.arguments) {
            Ok(arguments) if tool.handler.concurrent() => {
                if !self
                    .gate()
                    .begin_concurrent(&job.flags, self.config.max_concurrency)
                {
                    return; // cancelled while it waited: no response
                }
                let me = Arc::clone(self);
                let (id, flags, revision, work) = (job.id, job.flags, job.revision, job.work);
                let tool = Arc::clone(tool);
                invoke::start(tool, arguments, ctx, &self.config, early, move |output| {
                    me.answer(&id, &flags, revision, &work, output);
                    me.gate().end_concurrent(&flags);
                });
                return;
            }
            Ok(arguments) => invoke(tool, arguments, &ctx, &self.config, early),
            Err(message) if !matches!(job.work, Work::Call) => {
                // A prompt's arguments (a template's variables) that its function's types
                // refuse: the request's fault.
                let error = RequestError::invalid_params(format!("Invalid params: {message}"));
                let frame = error.into_frame(Some(&job.id));
                self.outbox
                    .complete(&job.id, &job.flags, Answer::Frame(frame));
                return;
            }
            Err(message) => ToolOutput::error(message),
        };
        self.answer(&job.id, &job.flags, job.revision, &job.work, output);
    }

    /// Shapes a call's output for its revision and releases the response.
    fn answer(
        &self,
        id: &RequestId,
        flags: &Arc<CallFlags>,
        revision: Revision,
        work: &Work,
        output: ToolOutput,
    ) {
        let answer = match work {
            Work::Call => {
                let result = output.into_result(revision);
                Answer::Result(methods::stamp(&self.info, revision, result))
            }
            Work::Prompt(prompt) => match prompt.spec.result(output, revision) {
                Ok(result) => Answer::Result(methods::stamp(&self.info, revision, result)),
                Err(error) => Answer::Frame(error.into_frame(Some(id))),
            },
            Work::Complete(declared) => {
                match completion::from_completer(output, declared.to_vec()) {
                    Ok(result) => Answer::Result(methods::stamp(&self.info, revision, result)),
                    Err(error) => Answer::Frame(error.into_frame(Some(id))),
                }
            }
            Work::Read(resource, uri) => match resource.spec.result(uri, output) {
                Ok(mut result) => {
                    if let Value::Object(fields) = &mut result {
                        methods::cache_hints(fields, &self.config, revision);
                    }
                    Answer::Result(methods::stamp(&self.info, revision, result))
                }
                Err(error) => Answer::Frame(error.into_frame(Some(id))),
            },
        };
        self.outbox.complete(id, flags, answer);
    }
}
