//! A Python tool: its description read from Python, and the core `ToolHandler` that calls it.

use std::sync::Arc;

use mcpline_core::{CallContext, ToolHandler, ToolHints, ToolOutput, ToolSpec};
use pyo3::exceptions::{PyKeyboardInterrupt, PySystemExit};
use pyo3::prelude::*;
use pyo3::types::PyString;
use serde_json::Value;

use crate::context::PyContext;
use crate::convert::{Kinds, arguments_to_kwargs, parse_output, py_to_json, seconds, to_output};
use crate::interrupt::Interrupt;
use crate::streams::flush_python_streams;

/// Whether `name` follows the tool-name rule (1-64 characters of `A-Z a-z 0-9 _ - .`).
#[pyfunction]
pub(crate) fn is_valid_tool_name(name: &Bound<'_, PyString>) -> bool {
    name.to_str().is_ok_and(mcpline_core::is_valid_tool_name)
}

/// What `mcpline._tool.describe` read from the callable (a `ToolShape`, read by attribute).
#[derive(FromPyObject)]
pub(crate) struct ToolShape<'py> {
    name: String,
    description: Option<String>,
    input_schema: Bound<'py, PyAny>,
    output_schema: Option<Bound<'py, PyAny>>,
    wraps_output: bool,
    context_param: Option<Py<PyString>>,
}

/// The options of `@server.tool(...)` (a `mcpline._tool.ToolOptions`, read by attribute; its
/// `name` and `description` are already part of the shape).
#[derive(FromPyObject)]
pub(crate) struct ToolOptions {
    title: Option<String>,
    read_only: Option<bool>,
    destructive: Option<bool>,
    idempotent: Option<bool>,
    open_world: Option<bool>,
    strict: bool,
    output: Option<String>,
    timeout: Option<f64>,
}

/// A Python callable as a core `ToolHandler`.
pub(crate) struct PyTool {
    func: Py<PyAny>,
    context_param: Option<Py<PyString>>,
    /// For `async def` tools: the server's runner (`runner.run(coroutine, ctx)`).
    runner: Option<Py<PyAny>>,
    wraps_output: bool,
    /// Top-level parameters whose schema type is `integer`.
    integer_params: Vec<String>,
    kinds: Arc<Kinds>,
    interrupt: Arc<Interrupt>,
}

impl PyTool {
    /// The core's spec of the tool `func` and the handler that calls it.
    pub(crate) fn define(
        py: Python<'_>,
        func: Py<PyAny>,
        shape: ToolShape<'_>,
        options: ToolOptions,
        runner: Option<Py<PyAny>>,
        kinds: Arc<Kinds>,
        interrupt: Arc<Interrupt>,
    ) -> PyResult<(ToolSpec, Self)> {
        let mut spec = ToolSpec::new(shape.name, py_to_json(&shape.input_schema)?);
        spec.description = shape.description;
        spec.title = options.title;
        spec.output_schema = shape.output_schema.as_ref().map(py_to_json).transpose()?;
        spec.hints = ToolHints {
            read_only: options.read_only,
            destructive: options.destructive,
            idempotent: options.idempotent,
            open_world: options.open_world,
        };
        spec.strict = options.strict;
        spec.output = options
            .output
            .as_deref()
            .map(|o| parse_output(py, o))
            .transpose()?;
        spec.timeout = options.timeout.map(|t| seconds(t, "timeout")).transpose()?;
        let handler = Self {
            func,
            context_param: shape.context_param,
            runner,
            wraps_output: shape.wraps_output,
            integer_params: integer_params(&spec.input_schema),
            kinds,
            interrupt,
        };
        Ok((spec, handler))
    }

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

/// Top-level properties declared `"type": "integer"` (alone or with `"null"`).
fn integer_params(schema: &Value) -> Vec<String> {
    let Some(props) = schema.get("properties").and_then(Value::as_object) else {
        return Vec::new();
    };
    props
        .iter()
        .filter(|(_, s)| match s.get("type") {
            Some(Value::String(t)) => t == "integer",
            Some(Value::Array(ts)) => ts.iter().any(|t| t == "integer"),
            _ => false,
        })
        .map(|(k, _)| k.clone())
        .collect()
}
