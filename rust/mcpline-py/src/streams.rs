//! Flushing Python's own buffered streams before the descriptors under them are redirected.

use std::cell::RefCell;
use std::sync::atomic::{AtomicBool, Ordering};

use mcpline_core::CallContext;
use pyo3::intern;
use pyo3::prelude::*;
use pyo3::sync::PyOnceLock;
use pyo3::types::PyDict;

use crate::context::PyContext;

/// Flushes `sys.stdout`, `sys.stderr` and, when replaced, the interpreter's original streams
/// (any may be `None` or broken; errors are ignored).
///
/// Runs twice per captured call, so it is kept cheap: the streams are read from the `sys`
/// module's dictionary (what `sys.stdout` reads, without the attribute machinery), and each
/// stream's bound `flush` is kept while the same stream sits in the same place (a method lookup
/// per stream and call cost more than the flush itself).
pub(crate) fn flush_python_streams(py: Python<'_>) {
    static SYS: PyOnceLock<Py<PyDict>> = PyOnceLock::new();
    let Ok(sys) = SYS.get_or_try_init(py, || py.import("sys").map(|sys| sys.dict().unbind()))
    else {
        return;
    };
    let sys = sys.bind(py);
    let names = [
        intern!(py, "stdout"),
        intern!(py, "__stdout__"),
        intern!(py, "stderr"),
        intern!(py, "__stderr__"),
    ];
    let mut streams: [Option<Bound<'_, PyAny>>; 4] = Default::default();
    for (slot, name) in streams.iter_mut().zip(names) {
        *slot = sys.get_item(name).ok().flatten().filter(|s| !s.is_none());
    }
    for (at, stream) in streams.iter().enumerate() {
        let Some(stream) = stream else { continue };
        // An original that is also the current stream was flushed just before.
        if at % 2 == 1 && streams[at - 1].as_ref().is_some_and(|c| c.is(stream)) {
            continue;
        }
        if let Some(flush) = flusher(py, at, stream) {
            let _ = flush.call0();
        }
    }
}

/// A stream and its bound `flush`.
type Flusher = (Py<PyAny>, Py<PyAny>);

thread_local! {
    /// Per slot of [`flush_python_streams`] (stdout, its original, stderr, its original): the
    /// stream last seen there and its bound `flush`.
    static FLUSHERS: RefCell<[Option<Flusher>; 4]> = RefCell::default();
}

/// The bound `flush` of `stream`, found in slot `at` (looked up again when another stream
/// took the slot).
fn flusher<'py>(
    py: Python<'py>,
    at: usize,
    stream: &Bound<'py, PyAny>,
) -> Option<Bound<'py, PyAny>> {
    let kept = FLUSHERS
        .try_with(|cache| {
            let cache = cache.try_borrow().ok()?;
            let (seen, flush) = cache[at].as_ref()?;
            seen.is(stream).then(|| flush.clone_ref(py))
        })
        .ok()
        .flatten();
    if let Some(flush) = kept {
        return Some(flush.into_bound(py));
    }
    let flush = stream.getattr(intern!(py, "flush")).ok()?;
    // A thread that is ending (its cache already gone) or a flush that re-enters here simply
    // keeps nothing.
    let _ = FLUSHERS.try_with(|cache| {
        if let Ok(mut cache) = cache.try_borrow_mut() {
            cache[at] = Some((stream.clone().unbind(), flush.clone().unbind()));
        }
    });
    Some(flush)
}

/// Whether `sys.stdout`/`sys.stderr` route writes through calls (`mcpline._streams`, while a
/// server with async tools serves stdio).
static ROUTING: AtomicBool = AtomicBool::new(false);

/// Set at the server's stdio edges, from what `mcpline._streams.serving` answered.
pub(crate) fn set_routing(on: bool) {
    ROUTING.store(on, Ordering::Relaxed);
}

/// Runs `body` with `mcpline._runner.CURRENT_CALL` set to `ctx` while prints are routed
/// through calls (async calls may overlap this one), so that what a sync tool prints is known
/// as its own too; otherwise just runs it (one atomic load).
pub(crate) fn as_current_call<T>(
    py: Python<'_>,
    ctx: &CallContext,
    body: impl FnOnce() -> PyResult<T>,
) -> PyResult<T> {
    static CURRENT_CALL: PyOnceLock<Py<PyAny>> = PyOnceLock::new();
    if !ROUTING.load(Ordering::Relaxed) {
        return body();
    }
    let var = CURRENT_CALL
        .get_or_try_init(py, || {
            let runner = py.import("mcpline._runner")?;
            runner.getattr("CURRENT_CALL").map(Bound::unbind)
        })?
        .bind(py);
    let call = Bound::new(
        py,
        PyContext {
            inner: ctx.clone(),
            lifespan: None,
        },
    )?;
    let token = var.call_method1(intern!(py, "set"), (call,))?;
    let result = body();
    var.call_method1(intern!(py, "reset"), (token,))?;
    result
}
