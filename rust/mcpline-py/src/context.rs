//! `mcpline.Context`: what a Python tool sees of its call.

use std::sync::{Arc, Mutex};

use mcpline_core::{CallContext, LogLevel, RequestId, lock};
use pyo3::exceptions::PyValueError;
use pyo3::prelude::*;

use crate::convert::json_to_py;
use crate::errors::mcpline_error;

/// What the server's lifespan yielded while it is entered (`Server(lifespan=...)`), shared by
/// the server and every call's context.
pub(crate) type Lifespan = Arc<Mutex<Option<Py<PyAny>>>>;

/// The call a tool is serving. Add a parameter annotated `Context` to receive it.
#[pyclass(frozen, module = "mcpline._core", name = "Context")]
pub(crate) struct PyContext {
    pub(crate) inner: CallContext,
    pub(crate) lifespan: Option<Lifespan>,
}

#[pymethods]
impl PyContext {
    /// The JSON-RPC request id (``int`` or ``str``, as the client sent it).
    #[getter]
    fn request_id<'py>(&self, py: Python<'py>) -> PyResult<Bound<'py, PyAny>> {
        match self.inner.request_id() {
            RequestId::Str(s) => Ok(s.into_pyobject(py)?.into_any()),
            other => json_to_py(py, &other.to_value()),
        }
    }

    /// The tool's name.
    #[getter]
    fn tool_name(&self) -> &str {
        self.inner.tool_name()
    }

    /// The protocol revision of this request, e.g. ``"2025-11-25"``.
    #[getter]
    fn protocol_version(&self) -> &'static str {
        self.inner.revision().as_str()
    }

    /// The client's ``clientInfo`` (``{"name": ..., "version": ...}``) when it sent one.
    #[getter]
    fn client_info<'py>(&self, py: Python<'py>) -> PyResult<Option<Bound<'py, PyAny>>> {
        self.inner
            .client_info()
            .map(|v| json_to_py(py, v))
            .transpose()
    }

    /// What the server's lifespan yielded (``Server(lifespan=...)``), or ``None`` without one.
    #[getter]
    fn lifespan(&self, py: Python<'_>) -> Option<Py<PyAny>> {
        let slot = self.lifespan.as_ref()?;
        lock(slot).as_ref().map(|value| value.clone_ref(py))
    }

    /// True once the client cancelled the call, its timeout passed, or the server is stopping.
    #[getter]
    fn cancelled(&self) -> bool {
        let cancelled = self.inner.is_cancelled();
        if cancelled {
            crate::stop::observed_here(); // the tool handles it: no stop on top
        }
        cancelled
    }

    /// Raises ``mcpline.Cancelled`` if the call was cancelled; call it between steps of long work.
    fn check_cancelled(&self, py: Python<'_>) -> PyResult<()> {
        if self.inner.is_cancelled() {
            crate::stop::observed_here(); // the tool stops with this: no second exception
            Err(mcpline_error(
                py,
                "Cancelled",
                "the call was cancelled".into(),
            ))
        } else {
            Ok(())
        }
    }

    /// Reports progress; sent only when the client asked for it (a progress token), only while
    /// the call runs, and only when ``done`` increases. Returns whether it was sent.
    #[pyo3(signature = (done, total=None, message=None))]
    fn progress(
        &self,
        py: Python<'_>,
        done: f64,
        total: Option<f64>,
        message: Option<&str>,
    ) -> bool {
        let ctx = self.inner.clone();
        let message = message.map(str::to_owned);
        py.detach(move || ctx.progress(done, total, message.as_deref()))
    }

    /// Logs ``message`` at ``level`` (``"debug"`` … ``"emergency"``): to the client when it enabled
    /// logging at that level, otherwise to stderr. Returns whether the client was sent it.
    #[pyo3(signature = (level, message))]
    fn log(&self, py: Python<'_>, level: &str, message: &str) -> PyResult<bool> {
        let Some(level) = LogLevel::parse(level) else {
            return Err(PyValueError::new_err(format!(
                "unknown log level {level:?}: use debug, info, notice, warning, error, critical, \
                 alert or emergency"
            )));
        };
        let ctx = self.inner.clone();
        let message = message.to_owned();
        Ok(py.detach(move || ctx.log(level, &message)))
    }

    /// Registers ``callback`` to run (on another thread) when the call is cancelled.
    fn _on_cancel(&self, callback: Py<PyAny>) {
        self.inner.on_cancel(move || {
            Python::attach(|py| {
                if let Err(e) = callback.call0(py) {
                    e.print(py);
                }
            });
        });
    }

    /// Writes ``data`` to ``fd`` (1 or 2) as this call's own output (see
    /// ``CallContext::write_output``); the count written. The streams ``mcpline._streams``
    /// installs while async tools may overlap route a call's writes here.
    fn _write_output(&self, py: Python<'_>, fd: i32, data: &[u8]) -> PyResult<usize> {
        let inner = &self.inner;
        py.detach(|| inner.write_output(fd, data))
            .map_err(PyErr::from)
    }

    fn __repr__(&self) -> String {
        format!(
            "<Context tool={:?} request_id={} protocol={}>",
            self.inner.tool_name(),
            self.inner.request_id(),
            self.inner.revision()
        )
    }
}
