//! A KeyboardInterrupt (or the exception a signal handler raised) that stops the server.

use std::sync::Mutex;

use mcpline_core::lock;
use pyo3::PyErr;

/// The first pending exception that stops the server; `run_stdio` re-raises it. A tool that
/// was interrupted sets it; the idle server's stop check sets and reads it.
#[derive(Default)]
pub(crate) struct Interrupt(Mutex<Option<PyErr>>);

impl Interrupt {
    pub(crate) fn set(&self, err: PyErr) {
        lock(&self.0).get_or_insert(err);
    }

    pub(crate) fn is_set(&self) -> bool {
        lock(&self.0).is_some()
    }

    pub(crate) fn take(&self) -> Option<PyErr> {
        lock(&self.0).take()
    }
}
