//! A Python tool: its description read from Python, and the core `ToolHandler` that calls it.

use std::sync::{Arc, Mutex, mpsc};

use mcpline_core::{CallContext, Done, ToolHandler, ToolHints, ToolOutput, ToolSpec, lock};
use pyo3::exceptions::{PyKeyboardInterrupt, PySystemExit};
use pyo3::intern;
use pyo3::prelude::*;
use pyo3::types::PyString;
use serde_json::Value;

use crate::context::{Lifespan, PyContext};
use crate::convert::{
    Kinds, ResultShape, arguments_to_kwargs, parse_output, py_to_json, seconds, to_output,
};
use crate::interrupt::Interrupt;
use crate::stop::Running;
use crate::streams::{as_current_call, flush_python_streams};

/// Whether `name` follows the tool-name rule (1-64 characters of `A-Z a-z 0-9 _ - .`).
#[pyfunction]
pub(crate) fn is_valid_tool_name(name: &Bound<'_, PyString>) -> bool {
    name.to_str().is_ok_and(mcpline_core::is_valid_tool_name)
}

/// Why `schema` cannot be a tool's `inputSchema` (the core's validator refuses it), or `None`.
#[pyfunction]
pub(crate) fn schema_problem(schema: &Bound<'_, PyAny>) -> PyResult<Option<String>> {
    let value = py_to_json(schema)?;
    Ok(mcpline_core::ArgumentValidator::new(&value, true)
        .err()
        .map(|e| e.to_string()))
}

/// What `mcpline._tool.describe` read from the callable (a `ToolShape`, read by attribute).
#[derive(FromPyObject)]
pub(crate) struct ToolShape<'py> {
    name: String,
    description: Option<String>,
    input_schema: Bound<'py, PyAny>,
    output_schema: Option<Bound<'py, PyAny>>,
    output_type: Option<String>,
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
    /// MCP `Icon` objects (JSON data).
    icons: Option<Py<PyAny>>,
}

/// A Python callable as a core `ToolHandler`.
pub(crate) struct PyTool {
    func: Py<PyAny>,
    context_param: Option<Py<PyString>>,
    /// For `async def` tools: the server's runner (`runner.start(coroutine, ctx, done)`).
    runner: Option<Py<PyAny>>,
    shape: ResultShape,
    /// Top-level parameters whose schema type is `integer`.
    integer_params: Vec<String>,
    kinds: Arc<Kinds>,
    interrupt: Arc<Interrupt>,
    lifespan: Lifespan,
}

impl PyTool {
    /// The core's spec of the tool `func` and the handler that calls it.
    #[allow(clippy::too_many_arguments)]
    pub(crate) fn define(
        py: Python<'_>,
        func: Py<PyAny>,
        shape: ToolShape<'_>,
        options: ToolOptions,
        runner: Option<Py<PyAny>>,
        kinds: Arc<Kinds>,
        interrupt: Arc<Interrupt>,
        lifespan: Lifespan,
    ) -> PyResult<(ToolSpec, Self)> {
        let mut spec = ToolSpec::new(shape.name, py_to_json(&shape.input_schema)?);
        spec.description = shape.description;
        spec.title = options.title;
        spec.output_schema = shape.output_schema.as_ref().map(py_to_json).transpose()?;
        spec.output_type = shape.output_type;
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
        spec.icons = options
            .icons
            .map(|icons| py_to_json(icons.bind(py)))
            .transpose()?;
        let handler = Self {
            func,
            context_param: shape.context_param,
            runner,
            shape: ResultShape::of(spec.output_schema.is_some(), shape.wraps_output),
            integer_params: integer_params(&spec.input_schema),
            kinds,
            interrupt,
            lifespan,
        };
        Ok((spec, handler))
    }

    fn run(&self, py: Python<'_>, arguments: &Value, ctx: &CallContext) -> PyResult<ToolOutput> {
        let kwargs = arguments_to_kwargs(py, arguments, &self.integer_params)?;
        if let Some(name) = &self.context_param {
            let lifespan = Some(Arc::clone(&self.lifespan));
            let c = Bound::new(
                py,
                PyContext {
                    inner: ctx.clone(),
                    lifespan,
                },
            )?;
            kwargs.set_item(name.bind(py), c)?;
        }
        let value = self.func.bind(py).call((), Some(&kwargs))?;
        to_output(py, &value, self.shape, &self.kinds)
    }

    /// Calls the `async def` function and hands its coroutine to the runner, which calls
    /// `completion` with the finished task.
    fn launch(
        &self,
        py: Python<'_>,
        runner: &Py<PyAny>,
        arguments: &Value,
        ctx: &CallContext,
        completion: Bound<'_, Completion>,
    ) -> PyResult<()> {
        let kwargs = arguments_to_kwargs(py, arguments, &self.integer_params)?;
        let c = Bound::new(
            py,
            PyContext {
                inner: ctx.clone(),
                lifespan: Some(Arc::clone(&self.lifespan)),
            },
        )?;
        if let Some(name) = &self.context_param {
            kwargs.set_item(name.bind(py), &c)?;
        }
        let coroutine = self.func.bind(py).call((), Some(&kwargs))?;
        runner
            .bind(py)
            .call_method1("start", (coroutine, c, completion))?;
        Ok(())
    }

    fn explain(&self, py: Python<'_>, err: &PyErr) -> ToolOutput {
        explain(py, err, &self.kinds, &self.interrupt)
    }
}

/// The tool result for an exception a tool raised (a traceback goes to stderr, which the call's
/// capture holds when capture is on).
fn explain(py: Python<'_>, err: &PyErr, kinds: &Kinds, interrupt: &Interrupt) -> ToolOutput {
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
        interrupt.set(err.clone_ref(py));
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
    report_traceback(py, err);
    if message.is_empty() {
        ToolOutput::error(type_name)
    } else {
        ToolOutput::error(format!("{type_name}: {message}"))
    }
}

/// The tool's own frames go to its stderr (captured with the call's output when capture is
/// on); the full traceback to the server's stderr.
fn report_traceback(py: Python<'_>, err: &PyErr) {
    let reported = py
        .import("mcpline._tracebacks")
        .and_then(|m| m.call_method1("report", (err.value(py), err.traceback(py))))
        .and_then(|full| full.extract::<String>());
    match reported {
        Ok(full) => {
            mcpline_core::log_line(&format!(
                "a tool raised; the full traceback:\n{}",
                full.trim_end()
            ));
        }
        Err(_) => err.print(py),
    }
}

impl ToolHandler for PyTool {
    fn call(&self, arguments: Value, ctx: &CallContext) -> ToolOutput {
        if self.runner.is_some() {
            // Outside the server's concurrent path: start the call and wait for it.
            let (send, receive) = mpsc::channel();
            self.start(
                arguments,
                ctx,
                Done::new(move |output| {
                    let _ = send.send(output);
                }),
            );
            return receive
                .recv()
                .unwrap_or_else(|_| ToolOutput::error("the call ended without a result"));
        }
        Python::attach(|py| {
            // The call's own prints include the traceback `explain` prints.
            let ran = as_current_call(py, ctx, || {
                let running = Running::enter(py, ctx)?;
                let output = match self.run(py, &arguments, ctx) {
                    Ok(output) => output,
                    Err(err) => self.explain(py, &err),
                };
                running.leave(py);
                Ok(output)
            });
            ran.unwrap_or_else(|err| self.explain(py, &err))
        })
    }

    fn flush_output(&self) {
        Python::attach(flush_python_streams);
    }

    fn enter(&self, bracketed: &mut dyn FnMut()) {
        if self.runner.is_some() {
            // An async tool's `call` waits for the event loop's thread, which needs the GIL.
            bracketed();
        } else {
            // The flushes and the call attach again inside: a count, not a second lock.
            Python::attach(|_| bracketed());
        }
    }

    fn concurrent(&self) -> bool {
        self.runner.is_some()
    }

    fn start(&self, arguments: Value, ctx: &CallContext, done: Done) {
        let Some(runner) = &self.runner else {
            done.finish(self.call(arguments, ctx));
            return;
        };
        Python::attach(|py| {
            let completion = Completion {
                done: Mutex::new(Some(done)),
                shape: self.shape,
                kinds: Arc::clone(&self.kinds),
                interrupt: Arc::clone(&self.interrupt),
            };
            let completion = match Bound::new(py, completion) {
                Ok(c) => c,
                Err(err) => {
                    err.print(py);
                    return; // the Done inside was dropped: the call is answered with an error
                }
            };
            if let Err(err) = self.launch(py, runner, &arguments, ctx, completion.clone()) {
                let output = self.explain(py, &err);
                completion.get().deliver(py, output);
            }
        });
    }
}

/// What an `async def` tool's task calls when it is done (`task.add_done_callback`): its
/// result (or exception) becomes the call's output.
#[pyclass(frozen, module = "mcpline._core")]
pub(crate) struct Completion {
    done: Mutex<Option<Done>>,
    shape: ResultShape,
    kinds: Arc<Kinds>,
    interrupt: Arc<Interrupt>,
}

impl Completion {
    /// Hands `output` to the waiting call (once), without the GIL: ending the call writes the
    /// response.
    fn deliver(&self, py: Python<'_>, output: ToolOutput) {
        let done = lock(&self.done).take();
        if let Some(done) = done {
            py.detach(|| done.finish(output));
        }
    }
}

#[pymethods]
impl Completion {
    fn __call__(&self, py: Python<'_>, task: &Bound<'_, PyAny>) {
        let cancelled = task
            .call_method0(intern!(py, "cancelled"))
            .and_then(|c| c.is_truthy())
            .unwrap_or(false);
        let output = if cancelled {
            ToolOutput::error("the call was cancelled")
        } else {
            match task.call_method0(intern!(py, "result")) {
                Ok(value) => to_output(py, &value, self.shape, &self.kinds)
                    .unwrap_or_else(|err| explain(py, &err, &self.kinds, &self.interrupt)),
                Err(err) => explain(py, &err, &self.kinds, &self.interrupt),
            }
        };
        self.deliver(py, output);
    }
}

/// Top-level properties declared `"type": "integer"` (alone, in a type list, or as one of
/// the `anyOf` members of a union such as `int | None`).
fn integer_params(schema: &Value) -> Vec<String> {
    let Some(props) = schema.get("properties").and_then(Value::as_object) else {
        return Vec::new();
    };
    props
        .iter()
        .filter(|(_, s)| allows_integer(s))
        .map(|(k, _)| k.clone())
        .collect()
}

fn allows_integer(schema: &Value) -> bool {
    match schema.get("type") {
        Some(Value::String(t)) => t == "integer",
        Some(Value::Array(ts)) => ts.iter().any(|t| t == "integer"),
        _ => schema
            .get("anyOf")
            .and_then(Value::as_array)
            .is_some_and(|members| {
                members
                    .iter()
                    .any(|m| m.get("type") == Some(&Value::from("integer")))
            }),
    }
}
