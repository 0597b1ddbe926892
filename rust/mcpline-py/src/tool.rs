//! A Python callable as a core `ToolHandler`.

use std::sync::Arc;

use mcpline_core::{CallContext, ToolHandler, ToolOutput};
use pyo3::exceptions::{PyKeyboardInterrupt, PySystemExit};
use pyo3::prelude::*;
use pyo3::types::PyString;
use serde_json::Value;

use crate::context::PyContext;
use crate::convert::{Kinds, arguments_to_kwargs, to_output};
use crate::interrupt::Interrupt;
use crate::streams::flush_python_streams;

pub(crate) struct PyTool {
    pub(crate) func: Py<PyAny>,
    pub(crate) context_param: Option<Py<PyString>>,
    /// For `async def` tools: the server's runner (`runner.run(coroutine, ctx)`).
    pub(crate) runner: Option<Py<PyAny>>,
    pub(crate) wraps_output: bool,
    /// Top-level parameters whose schema type is `integer`.
    pub(crate) integer_params: Vec<String>,
    pub(crate) kinds: Arc<Kinds>,
    pub(crate) interrupt: Arc<Interrupt>,
}

impl PyTool {
    fn run(&self, py: Python<'_>, arguments: &Value, ctx: &CallContext) -> PyResult<ToolOutput> {
        let kwargs = arguments_to_kwargs(py, arguments, &self.integer_params)?;
        let needs_ctx = self.context_param.is_some() || self.runner.is_some();
        let py_ctx = if needs_ctx {
            Some(Bound::new(py, PyContext { inner: ctx.clone() })?)
        } else {
            None
        };
        if let (Some(name), Some(c)) = (&self.context_param, &py_ctx) {
            kwargs.set_item(name.bind(py), c)?;
        }
        let mut value = self.func.bind(py).call((), Some(&kwargs))?;
        if let (Some(runner), Some(c)) = (&self.runner, &py_ctx) {
            value = runner.bind(py).call_method1("run", (value, c))?;
        }
        to_output(py, &value, self.wraps_output, &self.kinds)
    }

    fn explain(&self, py: Python<'_>, err: &PyErr) -> ToolOutput {
        let kinds = &self.kinds;
        let value = err.value(py);
        if err.is_instance(py, kinds.tool_error.bind(py)) {
            return ToolOutput::error(value.str().map(|s| s.to_string()).unwrap_or_default());
        }
        if err.is_instance(py, kinds.cancelled.bind(py))
            || err.get_type(py).name().is_ok_and(|n| n == "CancelledError")
        {
            return ToolOutput::error("the call was cancelled");
        }
        if err.is_instance_of::<PyKeyboardInterrupt>(py) {
            self.interrupt.set(err.clone_ref(py));
            return ToolOutput::error(
                "KeyboardInterrupt: the server was interrupted while the tool ran",
            );
        }
        let type_name = err
            .get_type(py)
            .name()
            .map_or_else(|_| "Exception".to_string(), |n| n.to_string());
        let message = value.str().map(|s| s.to_string()).unwrap_or_default();
        if err.is_instance_of::<PySystemExit>(py) {
            return ToolOutput::error(format!(
                "SystemExit: the tool called sys.exit({message}); the server keeps serving"
            ));
        }
        // The traceback goes to stderr: captured with the call's output when capture is on.
        err.print(py);
        if message.is_empty() {
            ToolOutput::error(type_name)
        } else {
            ToolOutput::error(format!("{type_name}: {message}"))
        }
    }
}

impl ToolHandler for PyTool {
    fn call(&self, arguments: Value, ctx: &CallContext) -> ToolOutput {
        Python::attach(|py| match self.run(py, &arguments, ctx) {
            Ok(output) => output,
            Err(err) => self.explain(py, &err),
        })
    }

    fn flush_output(&self) {
        Python::attach(flush_python_streams);
    }
}
