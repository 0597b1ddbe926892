//! Flushing Python's own buffered streams before the descriptors under them are redirected.

use pyo3::intern;
use pyo3::prelude::*;
use pyo3::sync::PyOnceLock;
use pyo3::types::PyModule;

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
