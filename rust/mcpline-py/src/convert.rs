//! Conversions between Python objects and JSON values / tool results (no JSON text in Python).

use mcpline_core::{Content, ToolOutput};
use pyo3::prelude::*;
use pyo3::types::{PyBool, PyByteArray, PyBytes, PyDict, PyFloat, PyInt, PyList, PyString, PyTuple};
use serde_json::{Map, Value};

/// A JSON value as a Python object.
pub(crate) fn json_to_py<'py>(py: Python<'py>, value: &Value) -> PyResult<Bound<'py, PyAny>> {
    pythonize::pythonize(py, value).map_err(PyErr::from)
}

/// A Python object made of dict/list/str/int/float/bool/None as a JSON value.
pub(crate) fn py_to_json(obj: &Bound<'_, PyAny>) -> PyResult<Value> {
    pythonize::depythonize::<Value>(obj).map_err(PyErr::from)
}

/// The classes of `mcpline._results` and helpers the conversions need, fetched once.
pub(crate) struct Kinds {
    pub(crate) tool_result: Py<PyAny>,
    pub(crate) image: Py<PyAny>,
    pub(crate) audio: Py<PyAny>,
    pub(crate) tool_error: Py<PyAny>,
    pub(crate) cancelled: Py<PyAny>,
    pub(crate) to_jsonable: Py<PyAny>,
}

impl Kinds {
    pub(crate) fn load(py: Python<'_>) -> PyResult<Self> {
        let results = py.import("mcpline._results")?;
        let schema = py.import("mcpline._schema")?;
        Ok(Self {
            tool_result: results.getattr("ToolResult")?.unbind(),
            image: results.getattr("Image")?.unbind(),
            audio: results.getattr("Audio")?.unbind(),
            tool_error: results.getattr("ToolError")?.unbind(),
            cancelled: results.getattr("Cancelled")?.unbind(),
            to_jsonable: schema.getattr("to_jsonable")?.unbind(),
        })
    }
}

fn is_plain_json(obj: &Bound<'_, PyAny>) -> bool {
    obj.is_instance_of::<PyBool>()
        || obj.is_instance_of::<PyInt>()
        || obj.is_instance_of::<PyFloat>()
        || obj.is_instance_of::<PyString>()
        || obj.is_instance_of::<PyList>()
        || obj.is_instance_of::<PyDict>()
        || obj.is_instance_of::<PyTuple>()
}

/// Plain JSON data from any return value (dataclasses, enums, pydantic models via `to_jsonable`).
fn jsonable(py: Python<'_>, obj: &Bound<'_, PyAny>, kinds: &Kinds) -> PyResult<Value> {
    if is_plain_json(obj) || obj.is_none() {
        if let Ok(v) = py_to_json(obj) {
            if !contains_unrepresentable(&v) {
                return Ok(v);
            }
        }
    }
    let plain = kinds.to_jsonable.call1(py, (obj,))?;
    py_to_json(plain.bind(py))
}

fn contains_unrepresentable(v: &Value) -> bool {
    match v {
        Value::Array(items) => items.iter().any(contains_unrepresentable),
        Value::Object(map) => map.values().any(contains_unrepresentable),
        _ => false,
    }
}

fn sniff_image(bytes: &[u8]) -> Option<&'static str> {
    if bytes.starts_with(b"\x89PNG\r\n\x1a\n") {
        Some("image/png")
    } else if bytes.starts_with(b"\xff\xd8\xff") {
        Some("image/jpeg")
    } else if bytes.starts_with(b"GIF87a") || bytes.starts_with(b"GIF89a") {
        Some("image/gif")
    } else if bytes.len() > 12 && &bytes[..4] == b"RIFF" && &bytes[8..12] == b"WEBP" {
        Some("image/webp")
    } else {
        None
    }
}

fn bytes_block(bytes: &[u8]) -> Content {
    if let Some(mime) = sniff_image(bytes) {
        return Content::image(bytes, mime);
    }
    Content::blob(bytes, "mcpline://result/bytes", "application/octet-stream")
}

fn media(obj: &Bound<'_, PyAny>) -> PyResult<(Vec<u8>, String)> {
    let data = obj.getattr("data")?;
    let bytes = if let Ok(b) = data.cast::<PyBytes>() {
        b.as_bytes().to_vec()
    } else if let Ok(b) = data.cast::<PyByteArray>() {
        b.to_vec()
    } else {
        return Err(pyo3::exceptions::PyTypeError::new_err("Image/Audio data must be bytes"));
    };
    Ok((bytes, obj.getattr("mime_type")?.extract::<String>()?))
}

fn content_block(py: Python<'_>, item: &Bound<'_, PyAny>, kinds: &Kinds) -> PyResult<Content> {
    if let Ok(s) = item.cast::<PyString>() {
        return Ok(Content::Text(s.to_str()?.to_owned()));
    }
    if item.is_instance(kinds.image.bind(py))? {
        let (bytes, mime) = media(item)?;
        return Ok(Content::image(&bytes, mime));
    }
    if item.is_instance(kinds.audio.bind(py))? {
        let (bytes, mime) = media(item)?;
        return Ok(Content::audio(&bytes, mime));
    }
    if let Ok(b) = item.cast::<PyBytes>() {
        return Ok(bytes_block(b.as_bytes()));
    }
    if item.is_instance_of::<PyDict>() {
        let value = py_to_json(item)?;
        if value.get("type").and_then(Value::as_str).is_none() {
            return Err(pyo3::exceptions::PyTypeError::new_err(
                "a content dict needs a \"type\" (text, image, audio, resource, resource_link)",
            ));
        }
        return Ok(Content::Raw(value));
    }
    Err(pyo3::exceptions::PyTypeError::new_err(format!(
        "ToolResult content items must be str, Image, Audio, bytes or MCP content dicts, not {}",
        item.get_type().name()?
    )))
}

fn wrap(value: Value, always: bool) -> Value {
    if !always && value.is_object() {
        return value;
    }
    let mut obj = Map::new();
    obj.insert("result".into(), value);
    Value::Object(obj)
}

/// Turns a tool's return value into a result.
pub(crate) fn to_output(
    py: Python<'_>,
    obj: &Bound<'_, PyAny>,
    wraps_output: bool,
    kinds: &Kinds,
) -> PyResult<ToolOutput> {
    if obj.is_none() {
        return Ok(ToolOutput::default());
    }
    if let Ok(s) = obj.cast::<PyString>() {
        return Ok(ToolOutput::text(s.to_str()?));
    }
    if obj.is_instance(kinds.tool_result.bind(py))? {
        let mut out = ToolOutput {
            is_error: obj.getattr("is_error")?.is_truthy()?,
            ..ToolOutput::default()
        };
        for item in obj.getattr("content")?.try_iter()? {
            out.content.push(content_block(py, &item?, kinds)?);
        }
        let structured = obj.getattr("structured")?;
        if !structured.is_none() {
            out.structured = Some(wrap(jsonable(py, &structured, kinds)?, false));
        }
        return Ok(out);
    }
    if obj.is_instance(kinds.image.bind(py))?
        || obj.is_instance(kinds.audio.bind(py))?
        || obj.is_instance_of::<PyBytes>()
    {
        return Ok(ToolOutput { content: vec![content_block(py, obj, kinds)?], ..ToolOutput::default() });
    }
    if let Ok(b) = obj.cast::<PyByteArray>() {
        return Ok(ToolOutput { content: vec![bytes_block(&b.to_vec())], ..ToolOutput::default() });
    }
    let value = jsonable(py, obj, kinds)?;
    let text = value.to_string();
    Ok(ToolOutput {
        content: vec![Content::Text(text)],
        structured: Some(wrap(value, wraps_output)),
        is_error: false,
    })
}
