//! Flushing Python's own buffered streams before the descriptors under them are redirected.

use std::sync::atomic::{AtomicBool, Ordering};

use mcpline_core::CallContext;
use pyo3::intern;
use pyo3::prelude::*;
use pyo3::sync::PyOnceLock;
use pyo3::types::PyModule;

use crate::context::PyContext;

/// Flushes `sys.stdout`, `sys.stderr` and, when replaced, the interpreter's original streams
/// (any may be `None` or broken; errors are ignored).
///
/// Runs twice per captured call, so the `sys` module is looked up once per process and the
/// attribute names are interned (an import statement per call cost more than the tool).
pub(crate) fn flush_python_streams(py: Python<'_>) {
    static SYS: PyOnceLock<Py<PyModule>> = PyOnceLock::new();
    let Ok(sys) = SYS.get_or_try_init(py, || py.import("sys").map(Bound::unbind)) else {
        return;
    };
    let sys = sys.bind(py);
    let flush = intern!(py, "flush");
    let pairs = [
        (intern!(py, "stdout"), intern!(py, "__stdout__")),
        (intern!(py, "stderr"), intern!(py, "__stderr__")),
    ];
    for (name, original) in pairs {
        let current = sys.getattr(name).ok();
        if let Some(stream) = current.as_ref().filter(|s| !s.is_none()) {
            let _ = stream.call_method0(flush);
        }
        if let Ok(orig) = sys.getattr(original) {
            let same = current.as_ref().is_some_and(|c| c.is(&orig));
            if !same && !orig.is_none() {
                let _ = orig.call_method0(flush);
            }
        }
    }
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
