//! `mcpline._core.HttpEndpoint` and `Exchange`: the core's Streamable HTTP decisions, handed to
//! the ASGI application in `mcpline._http`, which only moves the bytes.

use mcpline_core::{Exchange, HttpEndpoint, HttpHeaders, HttpReply, Next};
use pyo3::prelude::*;
use pyo3::types::PyBytes;

use crate::streams::set_routing;

/// What an HTTP request is answered with: status, extra headers, a JSON body (may be empty)
/// and, while calls still run, the exchange that streams the rest.
type Reply<'py> = (
    u16,
    Vec<(&'static str, String)>,
    Bound<'py, PyBytes>,
    Option<PyExchange>,
);

fn reply(py: Python<'_>, reply: HttpReply) -> Reply<'_> {
    let HttpReply {
        status,
        headers,
        body,
        exchange,
    } = reply;
    (
        status,
        headers,
        PyBytes::new(py, &body),
        exchange.map(|inner| PyExchange { inner }),
    )
}

fn headers_of(pairs: Vec<(Vec<u8>, Vec<u8>)>) -> HttpHeaders {
    let mut headers = HttpHeaders::new();
    for (name, value) in &pairs {
        headers.push(name, value);
    }
    headers
}

/// A server's MCP endpoint over HTTP (see `Server.http_endpoint`).
#[pyclass(frozen, module = "mcpline._core", name = "HttpEndpoint")]
pub(crate) struct PyHttpEndpoint {
    pub(crate) inner: HttpEndpoint,
}

#[pymethods]
impl PyHttpEndpoint {
    /// A POST with its headers (ASGI's ``(name, value)`` byte pairs) and whole body.
    fn post<'py>(
        &self,
        py: Python<'py>,
        headers: Vec<(Vec<u8>, Vec<u8>)>,
        body: &[u8],
    ) -> Reply<'py> {
        let answer = py.detach(|| self.inner.post(&headers_of(headers), body));
        reply(py, answer)
    }

    /// A DELETE (ends a handshake-era session).
    fn delete<'py>(&self, py: Python<'py>, headers: Vec<(Vec<u8>, Vec<u8>)>) -> Reply<'py> {
        let answer = self.inner.delete(&headers_of(headers));
        reply(py, answer)
    }

    /// Any other method: 405.
    fn not_allowed<'py>(&self, py: Python<'py>) -> Reply<'py> {
        reply(py, self.inner.not_allowed())
    }

    /// Handshake-era sessions alive now.
    fn session_count(&self) -> usize {
        self.inner.session_count()
    }

    /// Whether ``print`` in a call goes through that call (set while the endpoint serves: calls
    /// of sync tools run side by side in the pool, like async ones).
    #[staticmethod]
    fn route_output(on: bool) {
        set_routing(on);
    }
}

/// One request's calls and the frames they produce.
#[pyclass(frozen, module = "mcpline._core", name = "Exchange")]
pub(crate) struct PyExchange {
    inner: Exchange,
}

#[pymethods]
impl PyExchange {
    /// Runs the calls the request queued, on this thread, without the GIL (a sync tool's whole
    /// run; an async tool's start).
    fn run(&self, py: Python<'_>) {
        py.detach(|| self.inner.run());
    }

    /// Whether calls wait for ``run()``.
    fn has_work(&self) -> bool {
        self.inner.has_work()
    }

    /// ``(0, None)`` nothing yet; ``(1, frame)`` a message, more to come; ``(3, frame)`` the
    /// last message; ``(2, None)`` over (nothing more).
    fn next<'py>(&self, py: Python<'py>) -> (u8, Option<Bound<'py, PyBytes>>) {
        match self.inner.next() {
            Next::Pending => (0, None),
            Next::Frame(bytes) => (1, Some(PyBytes::new(py, &bytes))),
            Next::Last(bytes) => (3, Some(PyBytes::new(py, &bytes))),
            Next::Done => (2, None),
        }
    }

    /// ``wake()`` is called (from any thread) when a frame is ready or the exchange may be
    /// over; typically ``loop.call_soon_threadsafe`` of an event's ``set``.
    fn set_wake(&self, wake: Py<PyAny>) {
        self.inner.set_wake(Box::new(move || {
            Python::attach(|py| {
                if let Err(err) = wake.call0(py) {
                    err.print(py);
                }
            });
        }));
    }

    /// The client went away: the calls are told to stop and nothing more is sent.
    fn abandon(&self, py: Python<'_>) {
        py.detach(|| self.inner.abandon());
    }
}
