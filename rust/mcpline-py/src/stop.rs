//! Stopping a running sync tool when its time limit passes or the client cancels it: the tool's
//! thread raises `mcpline.Cancelled`, so its `finally` blocks run.
//!
//! The core calls the call's cancel hook on the thread that cancels (the reader, the timer),
//! which must never wait for the GIL; the hook hands the work to a short-lived thread that
//! takes the GIL and asks `mcpline._stopping.deliver` to interrupt the tool's thread: by a
//! signal when the tool runs on the main thread (which also ends a blocking `time.sleep`,
//! socket read or `subprocess.wait`), otherwise by an asynchronous exception (which Python
//! raises at the tool's next bytecode). The signal's handler calls [`raise_if_stopped`], which
//! raises only while the call that was asked to stop is still the thread's running call.

use std::cell::{Cell, RefCell};
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};
use std::thread;

use mcpline_core::CallContext;
use pyo3::prelude::*;

use crate::errors::mcpline_error;

/// One running sync call that may be told to stop.
struct Stoppable {
    /// The tool's thread, as `threading.get_ident()` names it.
    thread: u64,
    /// Still running (changed only with the GIL held, so a delivery under the GIL never reaches
    /// a call that ended).
    running: AtomicBool,
    /// Asked to stop and not yet raised.
    requested: AtomicBool,
    /// An asynchronous exception was set on the thread (cleared when the call ends first).
    sent_async: AtomicBool,
    /// The tool saw its cancellation itself (`ctx.cancelled`, `ctx.check_cancelled()`): it is
    /// not interrupted on top of that.
    observed: AtomicBool,
    /// A stop thread is between its check of `running` and the end of its delivery (which runs
    /// Python, so the GIL may pass to the tool's thread meanwhile): the call's end waits for it.
    delivering: AtomicBool,
}

thread_local! {
    /// The call running on this thread.
    static CURRENT: RefCell<Option<Arc<Stoppable>>> = const { RefCell::new(None) };
    /// This thread's `threading.get_ident()`, read once.
    static IDENT: Cell<Option<u64>> = const { Cell::new(None) };
}

/// Marks a sync call as running on this thread until dropped, and arranges that cancelling
/// it (a time limit, `notifications/cancelled`, the end of input) stops it.
pub(crate) struct Running(Arc<Stoppable>);

impl Running {
    pub(crate) fn enter(py: Python<'_>, ctx: &CallContext) -> PyResult<Self> {
        let call = Arc::new(Stoppable {
            thread: thread_ident(py)?,
            running: AtomicBool::new(true),
            requested: AtomicBool::new(false),
            sent_async: AtomicBool::new(false),
            observed: AtomicBool::new(false),
            delivering: AtomicBool::new(false),
        });
        CURRENT.with(|c| *c.borrow_mut() = Some(Arc::clone(&call)));
        let theirs = Arc::clone(&call);
        ctx.on_cancel(move || request_stop(&theirs));
        Ok(Self(call))
    }

    /// The call ended (the GIL is held): nothing may interrupt it any more.
    pub(crate) fn leave(self, py: Python<'_>) {
        self.0.running.store(false, Ordering::SeqCst);
        CURRENT.with(|c| c.borrow_mut().take());
        // A delivery that saw the call running finishes first (without the GIL it would
        // wait for), so an exception it sets is withdrawn below, never left to fire in
        // whatever this thread runs next (a pool's worker loop, the next call).
        while self.0.delivering.load(Ordering::SeqCst) {
            py.detach(thread::yield_now);
        }
        if self.0.sent_async.load(Ordering::SeqCst) {
            // The exception may not have been raised yet (the call ended first).
            let cleared = py
                .import("mcpline._stopping")
                .and_then(|m| m.call_method1("clear", (self.0.thread,)));
            if let Err(err) = cleared {
                err.print(py);
            }
        }
    }
}

/// On the cancelling thread: never waits for the GIL.
fn request_stop(call: &Arc<Stoppable>) {
    if !call.running.load(Ordering::SeqCst) || call.requested.swap(true, Ordering::SeqCst) {
        return;
    }
    let call = Arc::clone(call);
    let spawned = thread::Builder::new()
        .name("mcpline-stop".into())
        .spawn(move || {
            Python::attach(|py| {
                call.delivering.store(true, Ordering::SeqCst);
                if call.running.load(Ordering::SeqCst) && !call.observed.load(Ordering::SeqCst) {
                    let delivered = py
                        .import("mcpline._stopping")
                        .and_then(|m| m.call_method1("deliver", (call.thread,)))
                        .and_then(|how| how.extract::<String>());
                    match delivered {
                        Ok(how) => call.sent_async.store(how == "async", Ordering::SeqCst),
                        Err(err) => err.print(py),
                    }
                }
                call.delivering.store(false, Ordering::SeqCst);
            });
        });
    if let Err(e) = spawned {
        mcpline_core::log_line(&format!("cannot stop a running tool: {e}"));
    }
}

fn thread_ident(py: Python<'_>) -> PyResult<u64> {
    if let Some(ident) = IDENT.get() {
        return Ok(ident);
    }
    let ident: u64 = py.import("_thread")?.call_method0("get_ident")?.extract()?;
    IDENT.set(Some(ident));
    Ok(ident)
}

/// The call running on this thread saw its cancellation through its context: a stop that
/// was requested but not yet raised is withdrawn.
pub(crate) fn observed_here() {
    CURRENT.with(|c| {
        if let Some(call) = c.borrow().as_ref() {
            call.observed.store(true, Ordering::SeqCst);
            call.requested.store(false, Ordering::SeqCst);
        }
    });
}

/// Called by the stop signal's handler on the tool's thread: raises `mcpline.Cancelled` if
/// the call running here was asked to stop (once).
#[pyfunction]
pub(crate) fn raise_if_stopped(py: Python<'_>) -> PyResult<()> {
    let stop = CURRENT.with(|c| {
        c.borrow().as_ref().is_some_and(|call| {
            call.running.load(Ordering::SeqCst) && call.requested.swap(false, Ordering::SeqCst)
        })
    });
    if stop {
        return Err(mcpline_error(
            py,
            "Cancelled",
            "the call was cancelled".into(),
        ));
    }
    Ok(())
}
