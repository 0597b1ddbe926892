//! `mcpline._core.Server`: registration, configuration and serving.

use std::sync::mpsc::{self, Receiver};
use std::sync::{Arc, Mutex};

use mcpline_core::{
    HttpConfig, HttpEndpoint, MemoryClient, PromptArgument, PromptSpec, ResourceSpec, ServeEnd,
    Server, ServerInfo, StdioEdge, ToolSpec, lock, memory_pair, memory_pair_with_cap,
};
use pyo3::exceptions::PyValueError;
use pyo3::prelude::*;
use pyo3::types::{PyBytes, PyString};
use serde_json::Value;

use crate::context::Lifespan;
use crate::convert::{Kinds, parse_output, py_to_json, seconds};
use crate::errors::{mcpline_error, setup_error};
use crate::http::PyHttpEndpoint;
use crate::interrupt::Interrupt;
use crate::streams::{flush_python_streams, set_routing};
use crate::tool::{PyTool, ToolOptions, ToolShape};

fn end_name(end: ServeEnd) -> &'static str {
    match end {
        ServeEnd::EndOfInput => "end-of-input",
        ServeEnd::OutputClosed => "output-closed",
        ServeEnd::ReadFailed => "read-failed",
        ServeEnd::ParentGone => "parent-gone",
        ServeEnd::Interrupted => "interrupted",
    }
}

/// The Rust server behind `mcpline.Server`.
#[pyclass(frozen, module = "mcpline._core", name = "Server")]
pub(crate) struct PyServer {
    inner: Mutex<Server>,
    kinds: Mutex<Option<Arc<Kinds>>>,
    interrupt: Arc<Interrupt>,
    lifespan: Lifespan,
}

#[pymethods]
impl PyServer {
    #[new]
    #[pyo3(signature = (name, version, *, title=None, description=None, website_url=None,
                        instructions=None, icons=None))]
    fn new(
        name: String,
        version: String,
        title: Option<String>,
        description: Option<String>,
        website_url: Option<String>,
        instructions: Option<String>,
        icons: Option<&Bound<'_, PyAny>>,
    ) -> PyResult<Self> {
        let info = ServerInfo {
            name,
            version,
            title,
            description,
            website_url,
            instructions,
            icons: icons.map(py_to_json).transpose()?,
        };
        Ok(Self {
            inner: Mutex::new(Server::new(info)),
            kinds: Mutex::new(None),
            interrupt: Arc::new(Interrupt::default()),
            lifespan: Lifespan::default(),
        })
    }

    /// Sets server-wide options; ``None`` leaves an option as it is.
    #[pyo3(signature = (*, output=None, attach_limit=None, max_line_bytes=None, page_size=None,
                        eof_grace=None, queue_capacity=None, capture=None, list_ttl_ms=None,
                        max_concurrency=None, capture_cap=None))]
    #[allow(clippy::too_many_arguments)]
    fn configure(
        &self,
        py: Python<'_>,
        output: Option<&str>,
        attach_limit: Option<usize>,
        max_line_bytes: Option<usize>,
        page_size: Option<usize>,
        eof_grace: Option<f64>,
        queue_capacity: Option<usize>,
        capture: Option<bool>,
        list_ttl_ms: Option<u64>,
        max_concurrency: Option<usize>,
        capture_cap: Option<u64>,
    ) -> PyResult<()> {
        let mut server = lock(&self.inner);
        let config = server.config_mut();
        if let Some(mode) = output {
            config.output = parse_output(py, mode)?;
        }
        if let Some(v) = attach_limit {
            config.attach_limit = v;
        }
        if let Some(v) = max_line_bytes {
            if v == 0 {
                return Err(PyValueError::new_err("max_line_bytes must be positive"));
            }
            config.max_line_bytes = v;
        }
        if let Some(v) = page_size {
            if v == 0 {
                return Err(PyValueError::new_err("page_size must be positive"));
            }
            config.page_size = v;
        }
        if let Some(v) = eof_grace {
            config.eof_grace = seconds(v, "eof_grace")?;
        }
        if let Some(v) = queue_capacity {
            if v == 0 {
                return Err(PyValueError::new_err("queue_capacity must be positive"));
            }
            config.queue_capacity = v;
        }
        if let Some(v) = capture {
            config.capture = v;
        }
        if let Some(v) = list_ttl_ms {
            config.list_ttl_ms = v;
        }
        if let Some(v) = max_concurrency {
            if v == 0 {
                return Err(PyValueError::new_err("max_concurrency must be positive"));
            }
            config.max_concurrency = v;
        }
        if let Some(v) = capture_cap {
            if v < 64 * 1024 {
                return Err(PyValueError::new_err(
                    "capture_cap must be at least 65536 bytes",
                ));
            }
            config.capture_cap = v;
        }
        Ok(())
    }

    /// Registers ``func`` as a tool: ``shape`` is what ``mcpline._tool.describe`` read from it,
    /// ``options`` what the author chose; ``runner`` runs ``async def`` tools.
    #[pyo3(signature = (func, shape, options, runner=None))]
    fn add_tool(
        &self,
        py: Python<'_>,
        func: Py<PyAny>,
        shape: ToolShape<'_>,
        options: ToolOptions,
        runner: Option<Py<PyAny>>,
    ) -> PyResult<()> {
        let (spec, handler) = self.define(py, func, shape, options, runner)?;
        lock(&self.inner)
            .add_tool(spec, Arc::new(handler))
            .map_err(|e| setup_error(py, e))
    }

    /// Registers ``func`` as a prompt: ``shape`` and ``options`` as for a tool (``func`` returns
    /// a ``ToolResult`` whose structured data is ``{"messages": [...]}``), ``arguments`` its
    /// ``(name, description, required)`` in order.
    #[pyo3(signature = (func, shape, options, arguments, runner=None))]
    fn add_prompt(
        &self,
        py: Python<'_>,
        func: Py<PyAny>,
        shape: ToolShape<'_>,
        options: ToolOptions,
        arguments: Vec<(String, Option<String>, bool)>,
        runner: Option<Py<PyAny>>,
    ) -> PyResult<()> {
        let (spec, handler) = self.define(py, func, shape, options, runner)?;
        let mut prompt = PromptSpec::new(spec.name.clone());
        prompt.title.clone_from(&spec.title);
        prompt.description.clone_from(&spec.description);
        prompt.icons.clone_from(&spec.icons);
        prompt.arguments = arguments
            .into_iter()
            .map(|(name, description, required)| PromptArgument {
                name,
                description,
                required,
            })
            .collect();
        lock(&self.inner)
            .add_prompt(prompt, spec, Arc::new(handler))
            .map_err(|e| setup_error(py, e))
    }

    /// Registers ``func`` as a resource (``descriptor`` has ``uri``) or a resource template
    /// (``descriptor`` has ``uriTemplate``): ``descriptor`` is its MCP descriptor, ``shape`` and
    /// ``options`` as for a tool (``func`` returns a ``ToolResult`` whose structured data is
    /// ``{"contents": [...]}``).
    #[pyo3(signature = (func, shape, options, descriptor, runner=None))]
    fn add_resource(
        &self,
        py: Python<'_>,
        func: Py<PyAny>,
        shape: ToolShape<'_>,
        options: ToolOptions,
        descriptor: &Bound<'_, PyAny>,
        runner: Option<Py<PyAny>>,
    ) -> PyResult<()> {
        let Value::Object(descriptor) = py_to_json(descriptor)? else {
            return Err(PyValueError::new_err("a resource descriptor is a dict"));
        };
        let uri = ["uriTemplate", "uri"]
            .iter()
            .find_map(|key| descriptor.get(*key))
            .map(ToString::to_string)
            .unwrap_or_default();
        let spec = if descriptor.contains_key("uriTemplate") {
            ResourceSpec::template(descriptor)
        } else {
            ResourceSpec::fixed(descriptor)
        }
        .map_err(|why| {
            mcpline_error(
                py,
                "SetupError",
                format!("cannot register resource {uri}: {why}"),
            )
        })?;
        let (runner_spec, handler) = self.define(py, func, shape, options, runner)?;
        lock(&self.inner)
            .add_resource(spec, runner_spec, Arc::new(handler))
            .map_err(|e| setup_error(py, e))
    }

    /// Sets ``func`` as the completer of ``completion/complete`` (``shape`` and ``options`` as for
    /// a tool; ``func(ref, argument, context)`` returns a ``ToolResult`` whose structured data is
    /// ``{"values": [...] or None}``).
    #[pyo3(signature = (func, shape, options, runner=None))]
    fn set_completer(
        &self,
        py: Python<'_>,
        func: Py<PyAny>,
        shape: ToolShape<'_>,
        options: ToolOptions,
        runner: Option<Py<PyAny>>,
    ) -> PyResult<()> {
        let (spec, handler) = self.define(py, func, shape, options, runner)?;
        lock(&self.inner)
            .set_completer(spec, Arc::new(handler))
            .map_err(|e| setup_error(py, e))
    }

    /// A copy of this server exposing only the tools named in ``keep``.
    fn restricted(&self, keep: Vec<String>) -> Self {
        let mut server = lock(&self.inner).clone();
        server.retain_tools(&keep);
        Self {
            inner: Mutex::new(server),
            kinds: Mutex::new(lock(&self.kinds).clone()),
            interrupt: Arc::new(Interrupt::default()),
            // The tools it keeps share the original's: so does the copy.
            lifespan: Arc::clone(&self.lifespan),
        }
    }

    /// Sets what ``Context.lifespan`` answers (``None`` once the lifespan has exited).
    fn set_lifespan_value(&self, value: Option<Py<PyAny>>) {
        *lock(&self.lifespan) = value;
    }

    /// Names of the registered tools, sorted.
    fn tool_names(&self) -> Vec<String> {
        lock(&self.inner).tool_names()
    }

    /// Serves stdin/stdout until end of input; returns why it stopped. Re-raises a
    /// KeyboardInterrupt (or the exception a signal handler raised) that stopped it.
    ///
    /// Python's streams are flushed right after the protocol stdout is put aside and right
    /// before it comes back; `on_stdio(True)` / `on_stdio(False)` then run at those edges
    /// (an exception there is printed to stderr, not raised). `on_exit()` runs (for at most
    /// two seconds) before the server ends the process itself: the parent went away, or a tool
    /// still ran after the end-of-input grace.
    #[pyo3(signature = (on_stdio=None, on_exit=None))]
    fn run_stdio(
        &self,
        py: Python<'_>,
        on_stdio: Option<Py<PyAny>>,
        on_exit: Option<Py<PyAny>>,
    ) -> PyResult<&'static str> {
        let mut server = self.prepared();
        if let Some(callback) = on_exit {
            server.set_exit_hook(Arc::new(move || {
                Python::attach(|py| {
                    if let Err(err) = callback.call0(py) {
                        err.print(py);
                    }
                });
            }));
        }
        server.set_stdio_hook(Arc::new(move |edge| {
            Python::attach(|py| {
                flush_python_streams(py);
                if let Some(callback) = &on_stdio {
                    let protected = edge == StdioEdge::Protected;
                    // The callback answers whether prints are now routed through their calls.
                    match callback.call1(py, (protected,)) {
                        Ok(routed) => {
                            set_routing(protected && routed.is_truthy(py).unwrap_or(false))
                        }
                        Err(err) => {
                            set_routing(false);
                            err.print(py);
                        }
                    }
                }
            });
        }));
        let end = py.detach(move || server.serve_stdio());
        if let Some(err) = self.interrupt.take() {
            return Err(err);
        }
        match end {
            Ok(end) => Ok(end_name(end)),
            Err(e) => Err(setup_error(py, e)),
        }
    }

    /// The server's MCP endpoint over Streamable HTTP, with the tools registered so far.
    #[pyo3(signature = (*, allowed_origins=Vec::new(), allowed_hosts=None, session_idle=3600.0,
                        max_sessions=10_000))]
    fn http_endpoint(
        &self,
        allowed_origins: Vec<String>,
        allowed_hosts: Option<Vec<String>>,
        session_idle: f64,
        max_sessions: usize,
    ) -> PyResult<PyHttpEndpoint> {
        if max_sessions == 0 {
            return Err(PyValueError::new_err("max_sessions must be at least 1"));
        }
        let config = HttpConfig {
            allowed_origins,
            allowed_hosts,
            session_idle: seconds(session_idle, "session_idle")?,
            max_sessions,
        };
        let server = lock(&self.inner).clone();
        Ok(PyHttpEndpoint {
            inner: HttpEndpoint::new(server, config),
        })
    }

    /// Starts serving an in-memory connection on a background thread.
    #[pyo3(signature = (*, max_line_bytes=None))]
    fn connect(&self, max_line_bytes: Option<usize>) -> PyResult<MemorySession> {
        let mut server = lock(&self.inner).clone();
        let (transport, client) = match max_line_bytes {
            Some(cap) => memory_pair_with_cap(cap),
            None => memory_pair(),
        };
        server.config_mut().exit_on_hang = false;
        let (done_tx, done_rx) = mpsc::channel();
        std::thread::Builder::new()
            .name("mcpline-memory-server".into())
            .spawn(move || {
                let end = server.serve(Arc::new(transport));
                let _ = done_tx.send(end);
            })
            .map_err(|e| PyValueError::new_err(format!("cannot start the server thread: {e}")))?;
        Ok(MemorySession {
            client,
            done: Mutex::new(done_rx),
            end: Mutex::new(None),
        })
    }
}

impl PyServer {
    /// The core's spec of what runs `func` (a tool, a prompt, a resource read, the completer)
    /// and its handler, sharing this server's types, interrupt and lifespan.
    fn define(
        &self,
        py: Python<'_>,
        func: Py<PyAny>,
        shape: ToolShape<'_>,
        options: ToolOptions,
        runner: Option<Py<PyAny>>,
    ) -> PyResult<(ToolSpec, PyTool)> {
        let kinds = self.kinds(py)?;
        let interrupt = Arc::clone(&self.interrupt);
        let lifespan = Arc::clone(&self.lifespan);
        PyTool::define(py, func, shape, options, runner, kinds, interrupt, lifespan)
    }

    fn kinds(&self, py: Python<'_>) -> PyResult<Arc<Kinds>> {
        let mut slot = lock(&self.kinds);
        if let Some(k) = &*slot {
            return Ok(Arc::clone(k));
        }
        let k = Arc::new(Kinds::load(py)?);
        *slot = Some(Arc::clone(&k));
        Ok(k)
    }

    /// A copy of the server whose idle worker notices signals (KeyboardInterrupt, SIGTERM).
    fn prepared(&self) -> Server {
        let mut server = lock(&self.inner).clone();
        let interrupt = Arc::clone(&self.interrupt);
        server.set_stop_check(Arc::new(move || {
            if interrupt.is_set() {
                return true;
            }
            Python::attach(|py| match py.check_signals() {
                Ok(()) => false,
                Err(err) => {
                    interrupt.set(err);
                    true
                }
            })
        }));
        server
    }
}

/// The client end of an in-memory connection to a running server (see `mcpline.testing`).
#[pyclass(frozen, module = "mcpline._core", name = "MemorySession")]
pub(crate) struct MemorySession {
    client: MemoryClient,
    done: Mutex<Receiver<ServeEnd>>,
    end: Mutex<Option<ServeEnd>>,
}

#[pymethods]
impl MemorySession {
    /// Sends one frame (``str`` or ``bytes``, without the newline).
    fn send(&self, line: &Bound<'_, PyAny>) -> PyResult<()> {
        let bytes = if let Ok(s) = line.cast::<PyString>() {
            s.to_str()?.as_bytes().to_vec()
        } else if let Ok(b) = line.cast::<PyBytes>() {
            b.as_bytes().to_vec()
        } else {
            return Err(PyValueError::new_err("send() takes str or bytes"));
        };
        self.client
            .send(bytes)
            .map_err(|e| PyValueError::new_err(e.to_string()))
    }

    /// The next frame the server wrote, or ``None`` after ``timeout`` seconds (or when the server
    /// finished and nothing is left).
    #[pyo3(signature = (timeout=None))]
    fn recv(&self, py: Python<'_>, timeout: Option<f64>) -> PyResult<Option<String>> {
        let wait = timeout.map(|t| seconds(t, "timeout")).transpose()?;
        let line = py.detach(|| match wait {
            Some(d) => self.client.recv_timeout(d),
            None => self.client.recv(),
        });
        Ok(line.map(|l| String::from_utf8_lossy(&l).into_owned()))
    }

    /// Signals end of input to the server.
    fn close(&self) {
        self.client.close();
    }

    /// Waits for the server to stop; returns why, or ``None`` on timeout.
    #[pyo3(signature = (timeout=None))]
    fn wait(&self, py: Python<'_>, timeout: Option<f64>) -> PyResult<Option<&'static str>> {
        if let Some(end) = *lock(&self.end) {
            return Ok(Some(end_name(end)));
        }
        let wait = timeout.map(|t| seconds(t, "timeout")).transpose()?;
        let end = py.detach(|| {
            let rx = lock(&self.done);
            match wait {
                Some(d) => rx.recv_timeout(d).ok(),
                None => rx.recv().ok(),
            }
        });
        if let Some(end) = end {
            *lock(&self.end) = Some(end);
        }
        Ok(end.map(end_name))
    }
}
