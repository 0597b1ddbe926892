//! Running one tool call: capture bracketing, the time limit and the panic guard.

use std::panic::{AssertUnwindSafe, catch_unwind};
use std::sync::{Arc, Condvar, Mutex, PoisonError};
use std::thread;
use std::time::{Duration, Instant};

use serde_json::Value;

use crate::capture::{self, Capture};
use crate::config::ServerConfig;
use crate::context::CallContext;
use crate::flags::CallFlags;
use crate::log::log_line;
use crate::registry::RegisteredTool;
use crate::sync::lock;
use crate::tool::{Content, Done, OutputMode, ToolOutput};

/// What is set up around one call: its capture (per its output mode) and its time limit.
struct Bracket {
    capture: Option<Capture>,
    timer: Option<Timer>,
    mode: OutputMode,
}

impl Bracket {
    fn open(
        tool: &RegisteredTool,
        ctx: &CallContext,
        config: &ServerConfig,
        early: Option<EarlyAnswer>,
    ) -> Self {
        let mode = tool.spec.output.unwrap_or(config.output);
        let capture = if mode != OutputMode::Off && config.capture {
            tool.handler.flush_output();
            let label = Arc::from(format!("{} #{}", tool.spec.name, ctx.id));
            match Capture::begin_call(ctx.member, label) {
                Ok(c) => Some(c),
                Err(e) => {
                    log_line(&format!("tool {:?} runs uncaptured: {e}", tool.spec.name));
                    None
                }
            }
        } else {
            // An uncaptured tool writes to the real stdout and stderr.
            let _ = capture::settle();
            None
        };
        let timer = tool.spec.timeout.map(|limit| {
            Timer::start(limit, Arc::clone(&ctx.flags), Arc::clone(&tool.name), early)
        });
        Self {
            capture,
            timer,
            mode,
        }
    }

    /// Flushes what the tool's language buffers hold into the capture, before it ends.
    fn flush(&self, tool: &RegisteredTool) {
        if self.capture.is_some() {
            tool.handler.flush_output();
        }
    }

    /// The call returned `output` (and the caller flushed the tool's language-level output,
    /// see [`Bracket::flush`]): stops the timer, ends the capture, and shapes the output (a
    /// passed time limit, the attached tail of what the tool printed).
    fn close(
        self,
        tool: &RegisteredTool,
        ctx: &CallContext,
        attach_limit: usize,
        mut output: ToolOutput,
    ) -> ToolOutput {
        drop(self.timer);
        if ctx.flags.timed_out() {
            let secs = tool.spec.timeout.map_or(0.0, |d| d.as_secs_f64());
            output = ToolOutput::error(format!(
                "Tool {:?} timed out after {secs} s and was cancelled",
                tool.spec.name
            ));
        }
        if !output.is_error {
            if let Some(results) = &tool.results {
                if let Err(problems) = results.check(output.structured.as_ref()) {
                    output = mismatched_result(tool, &problems);
                }
            }
        }
        let Some(capture) = self.capture else {
            return output;
        };
        match capture.finish() {
            Ok(captured) if !captured.is_empty() => {
                let label = format!("[{} #{}] ", tool.spec.name, ctx.id);
                // The real stderr, also while calls still running keep fd 2 on their capture.
                let copied = match capture::real_stderr() {
                    Ok(Some(mut err)) => captured.copy_labelled(&label, &mut err),
                    Ok(None) => Ok(()),
                    Err(e) => Err(e),
                };
                if let Err(e) = copied {
                    log_line(&format!("could not copy captured output to stderr: {e}"));
                }
                if self.mode == OutputMode::Result || output.is_error {
                    let tail = captured.tail_text(attach_limit);
                    output
                        .content
                        .push(Content::Text(format!("Output of the tool run:\n{tail}")));
                }
            }
            Ok(_) => {}
            Err(e) => log_line(&format!("capture of tool {:?} failed: {e}", tool.spec.name)),
        }
        output
    }
}

/// The error result (and log line) for a result that breaks the tool's declared contract.
fn mismatched_result(tool: &RegisteredTool, problems: &str) -> ToolOutput {
    let declared = tool
        .spec
        .output_type
        .as_deref()
        .map_or_else(|| "outputSchema".to_owned(), |t| format!("return type {t}"));
    let text = format!(
        "Tool {:?} returned a result that does not match its declared {declared}:\n{problems}",
        tool.spec.name
    );
    log_line(&text);
    ToolOutput::error(text)
}

/// Runs `tool` with validated `arguments`: whatever it prints is captured (per its output mode),
/// a panic becomes an error result, and a passed time limit cancels it (`early` answers the call
/// if the tool does not end soon after).
pub(crate) fn invoke(
    tool: &RegisteredTool,
    arguments: Value,
    ctx: &CallContext,
    config: &ServerConfig,
    early: Option<EarlyAnswer>,
) -> ToolOutput {
    let (mut arguments, mut early) = (Some(arguments), early);
    let mut ran = None;
    // Everything up to the capture's end runs inside the tool's runtime, entered once. The
    // end itself (and copying the output to stderr, which may block) runs outside it.
    tool.handler.enter(&mut || {
        let bracket = Bracket::open(tool, ctx, config, early.take());
        let arguments = arguments.take().unwrap_or_default();
        let forks = fork_count();
        let outcome = catch_unwind(AssertUnwindSafe(|| tool.handler.call(arguments, ctx)));
        if fork_count() != forks {
            forked_child_returned(&tool.spec.name);
        }
        bracket.flush(tool);
        ran = Some((bracket, outcome));
    });
    let Some((bracket, outcome)) = ran else {
        return ToolOutput::error("the tool's runtime did not run the call");
    };
    let output = outcome.unwrap_or_else(|panic| {
        ToolOutput::error(format!("the tool panicked: {}", panic_message(&*panic)))
    });
    bracket.close(tool, ctx, config.attach_limit, output)
}

/// Starts a call of a concurrent tool (see [`crate::ToolHandler::start`]) under the same
/// bracket as [`invoke`], and returns; `answer` gets the shaped output once the call ends,
/// on whichever thread ends it.
pub(crate) fn start(
    tool: Arc<RegisteredTool>,
    arguments: Value,
    ctx: CallContext,
    config: &ServerConfig,
    early: Option<EarlyAnswer>,
    answer: impl FnOnce(ToolOutput) + Send + 'static,
) {
    let bracket = Bracket::open(&tool, &ctx, config, early);
    let limit = config.attach_limit;
    let (theirs, ours) = (Arc::clone(&tool), ctx.clone());
    let done = Done::new(move |output| {
        bracket.flush(&theirs);
        answer(bracket.close(&theirs, &ours, limit, output));
    });
    let forks = fork_count();
    // A panic drops `done`, which answers the call with an error.
    let started = catch_unwind(AssertUnwindSafe(|| {
        tool.handler.start(arguments, &ctx, done);
    }));
    if fork_count() != forks {
        forked_child_returned(&tool.spec.name);
    }
    if let Err(panic) = started {
        log_line(&format!(
            "tool {:?} panicked while starting: {}",
            tool.spec.name,
            panic_message(&*panic)
        ));
    }
}

/// What a panic said.
fn panic_message(panic: &(dyn std::any::Any + Send)) -> String {
    panic
        .downcast_ref::<&str>()
        .map(|s| (*s).to_string())
        .or_else(|| panic.downcast_ref::<String>().cloned())
        .unwrap_or_else(|| "unknown panic".into())
}

/// A process the tool forked has come back out of the tool (it raised, returned or called
/// `sys.exit`): it must not go on serving the parent's requests on the parent's pipes. It says so
/// on its stderr (the parent's capture, when there is one) and exits at once, without flushing
/// the stdio buffers it copied from the parent.
fn forked_child_returned(tool: &str) -> ! {
    let line = format!(
        "[mcpline] a child process forked by tool {tool:?} (pid {}) left the tool; it exits \
         here instead of serving (end forked children with os._exit)\n",
        std::process::id()
    );
    let _ = std::io::Write::write_all(&mut std::io::stderr().lock(), line.as_bytes());
    exit_forked_child()
}

#[cfg(unix)]
use crate::sys::fork_count;

#[cfg(unix)]
fn exit_forked_child() -> ! {
    crate::sys::exit_now(1)
}

/// Processes do not fork here.
#[cfg(not(unix))]
const fn fork_count() -> u64 {
    0
}

#[cfg(not(unix))]
fn exit_forked_child() -> ! {
    unreachable!("only unix processes fork")
}

/// Answers a call from the timer thread when a timed-out tool does not end.
pub(crate) type EarlyAnswer = Box<dyn FnOnce(ToolOutput) + Send>;

/// How long a timed-out call may take to end once it was told to stop, before it is answered
/// without waiting for it (a tool stuck in code that cannot be interrupted).
const STUCK_AFTER: Duration = Duration::from_millis(100);

/// Cancels a call when its time limit passes (which stops a tool that can be interrupted);
/// answers it itself if the tool has not ended soon after.
struct Timer {
    stop: Arc<(Mutex<bool>, Condvar)>,
}

impl Timer {
    fn start(
        limit: Duration,
        flags: Arc<CallFlags>,
        tool: Arc<str>,
        early: Option<EarlyAnswer>,
    ) -> Self {
        let stop = Arc::new((Mutex::new(false), Condvar::new()));
        let theirs = Arc::clone(&stop);
        let spawned = thread::Builder::new()
            .name("mcpline-timeout".into())
            .spawn(move || {
                let (m, cv) = &*theirs;
                let deadline = Instant::now() + limit;
                if wait_until(m, cv, deadline) {
                    return;
                }
                flags.time_out();
                if wait_until(m, cv, Instant::now() + STUCK_AFTER) {
                    return;
                }
                if let Some(answer) = early {
                    let text = format!(
                        "Tool {tool:?} timed out after {} s and was cancelled; it is still \
                         running in code that cannot be interrupted, and its result will be \
                         discarded",
                        limit.as_secs_f64()
                    );
                    log_line(&text);
                    answer(ToolOutput::error(text));
                }
            });
        if let Err(e) = spawned {
            log_line(&format!("cannot start a timeout timer: {e}"));
        }
        Self { stop }
    }
}

/// Waits until the flag is set (true) or `deadline` passes (false).
fn wait_until(m: &Mutex<bool>, cv: &Condvar, deadline: Instant) -> bool {
    let mut stopped = lock(m);
    while !*stopped {
        let now = Instant::now();
        if now >= deadline {
            return false;
        }
        stopped = cv
            .wait_timeout(stopped, deadline - now)
            .unwrap_or_else(PoisonError::into_inner)
            .0;
    }
    true
}

impl Drop for Timer {
    fn drop(&mut self) {
        *lock(&self.stop.0) = true;
        self.stop.1.notify_all();
    }
}
