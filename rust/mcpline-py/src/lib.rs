//! `mcpline._core`: the thin PyO3 binding of `mcpline-core` — conversion, the GIL, exceptions.

mod capture;
mod context;
mod convert;
mod errors;
mod http;
mod interrupt;
mod server;
mod stop;
mod streams;
mod tool;

use pyo3::prelude::*;

/// Rust allocations of the extension (frames, JSON values) use mimalloc; Python's own objects
/// keep CPython's allocator.
#[global_allocator]
static ALLOCATOR: mimalloc::MiMalloc = mimalloc::MiMalloc;

/// The compiled core of mcpline.
#[pymodule(gil_used = false)]
mod _core {
    #[pymodule_export]
    use crate::capture::{PyCaptureCell, note_spawn, note_truncating_open, write_real_stderr};
    #[pymodule_export]
    use crate::context::PyContext;
    #[pymodule_export]
    use crate::http::{PyExchange, PyHttpEndpoint};
    #[pymodule_export]
    use crate::server::{MemorySession, PyServer};
    #[pymodule_export]
    use crate::stop::raise_if_stopped;
    #[pymodule_export]
    use crate::tool::{is_valid_tool_name, schema_problem};

    use super::{Bound, PyModule, PyModuleMethods, PyResult};

    #[pymodule_init]
    fn init(m: &Bound<'_, PyModule>) -> PyResult<()> {
        m.add("__version__", env!("CARGO_PKG_VERSION"))?;
        m.add(
            "SUPPORTED_PROTOCOL_VERSIONS",
            mcpline_core::HANDSHAKE_REVISIONS
                .iter()
                .chain(mcpline_core::STATELESS_REVISIONS.iter())
                .map(|r| r.as_str())
                .collect::<Vec<_>>(),
        )?;
        Ok(())
    }
}
