//! Mapping core errors onto the Python exception hierarchy (`mcpline.McplineError`).

use pyo3::exceptions::PyRuntimeError;
use pyo3::prelude::*;

/// Builds an instance of the exception class `name` from `mcpline._results` (all subclasses of
/// `mcpline.McplineError`), falling back to `RuntimeError` if the module cannot be imported.
pub(crate) fn mcpline_error(py: Python<'_>, name: &str, message: String) -> PyErr {
    let class = py.import("mcpline._results").and_then(|m| m.getattr(name));
    match class.and_then(|c| c.call1((message.clone(),))) {
        Ok(instance) => PyErr::from_value(instance),
        Err(_) => PyRuntimeError::new_err(message),
    }
}

/// A configuration or registration error (bad name, bad schema, bad option).
pub(crate) fn setup_error(py: Python<'_>, err: impl std::fmt::Display) -> PyErr {
    mcpline_error(py, "SetupError", err.to_string())
}

/// A capture-cell error.
pub(crate) fn capture_error(py: Python<'_>, err: impl std::fmt::Display) -> PyErr {
    mcpline_error(py, "CaptureError", err.to_string())
}
