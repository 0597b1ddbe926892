//! The capture cell as a Python object (`mcpline.capture()` builds on it).

use std::sync::Mutex;

use mcpline_core::{Capture, CaptureError, Window, lock, settle};
use pyo3::prelude::*;

use crate::errors::capture_error;
use crate::streams::flush_python_streams;

/// What `begin` started: a capture of its own, or a window onto the capture already running
/// (the tool's, when `mcpline.capture()` is used inside a tool).
enum Active {
    Capture(Capture),
    Window(Window),
}

/// One active capture of fds 1 and 2 (see `mcpline.capture`).
#[pyclass(frozen, module = "mcpline._core", name = "CaptureCell")]
pub(crate) struct PyCaptureCell {
    active: Mutex<Option<Active>>,
}

#[pymethods]
impl PyCaptureCell {
    /// Flushes Python's streams and starts capturing fds 1 and 2 into a private temporary file,
    /// or, while a capture is already active, opens a window onto it.
    #[staticmethod]
    fn begin(py: Python<'_>) -> PyResult<Self> {
        flush_python_streams(py);
        let active = match Capture::begin() {
            Ok(capture) => Active::Capture(capture),
            Err(CaptureError::AlreadyActive) => match Window::open() {
                Ok(Some(window)) => Active::Window(window),
                // The other capture ended in between: capture afresh.
                Ok(None) => Active::Capture(Capture::begin().map_err(|e| capture_error(py, e))?),
                Err(e) => return Err(capture_error(py, e)),
            },
            Err(e) => return Err(capture_error(py, e)),
        };
        Ok(Self {
            active: Mutex::new(Some(active)),
        })
    }

    /// Whether this is a window onto a capture that was already active.
    #[getter]
    fn is_window(&self) -> bool {
        matches!(*lock(&self.active), Some(Active::Window(_)))
    }

    /// Flushes, restores fds 1 and 2, and returns ``(text, total_bytes)``: the captured text
    /// (its last ``limit`` bytes when given, with a truncation marker) and the byte count.
    #[pyo3(signature = (limit=None))]
    fn finish(&self, py: Python<'_>, limit: Option<usize>) -> PyResult<(String, u64)> {
        flush_python_streams(py);
        let active = lock(&self.active)
            .take()
            .ok_or_else(|| capture_error(py, "this capture has already finished"))?;
        let capture = match active {
            Active::Capture(capture) => capture,
            Active::Window(window) => {
                return window
                    .close(limit.unwrap_or(usize::MAX))
                    .map_err(|e| capture_error(py, e));
            }
        };
        let captured = capture.finish().map_err(|e| capture_error(py, e))?;
        // A quiet capture inside a server may leave fds 1 and 2 parked for the server's next
        // call; code after the `with` block writes to the real streams.
        settle().map_err(|e| capture_error(py, e))?;
        let text = captured.tail_text(limit.unwrap_or(usize::MAX));
        Ok((text, captured.len()))
    }
}

/// Tells the capture cell that a child process is about to start (``mcpline._spawns`` calls it
/// from an audit hook): a running capture's fds 1 and 2 move to a pipe first. Without the GIL,
/// since that waits for the cell's lock.
#[pyfunction]
pub(crate) fn note_spawn(py: Python<'_>) {
    py.detach(mcpline_core::note_spawn);
}

/// Tells the capture cell that this process is about to open fd 1 or 2 anew with truncation
/// (``open("/dev/stderr", "w")``; ``mcpline._spawns`` calls it from an audit hook): a running
/// capture's fds 1 and 2 move to a pipe first, which the open cannot empty.
#[pyfunction]
pub(crate) fn note_truncating_open(py: Python<'_>) {
    py.detach(mcpline_core::note_truncating_open);
}

/// Writes ``data`` to the process's real stderr, also while a capture holds fd 2 (a log line
/// written outside any call never lands in a running call's output).
#[pyfunction]
pub(crate) fn write_real_stderr(py: Python<'_>, data: &[u8]) -> PyResult<()> {
    py.detach(|| mcpline_core::write_real_stderr(data))
        .map_err(|e| pyo3::exceptions::PyOSError::new_err(e.to_string()))
}
