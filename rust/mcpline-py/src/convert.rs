//! Conversions between Python objects and JSON values / tool results (no JSON text in Python),
//! and of option values (seconds, output modes).

use std::time::Duration;

use mcpline_core::{Content, OutputMode, ToolOutput};
use pyo3::exceptions::PyValueError;
use pyo3::prelude::*;
use pyo3::types::{
    PyBool, PyByteArray, PyBytes, PyDict, PyFloat, PyInt, PyList, PyString, PyTuple,
};
use serde_json::{Map, Value};

use crate::errors::setup_error;

/// A JSON value as a Python object.
pub(crate) fn json_to_py<'py>(py: Python<'py>, value: &Value) -> PyResult<Bound<'py, PyAny>> {
    pythonize::pythonize(py, value).map_err(PyErr::from)
}

/// Tool arguments as keyword arguments. JSON Schema counts `1.0` as an integer, so top-level
/// parameters declared `integer` receive a Python `int` for integral numbers.
pub(crate) fn arguments_to_kwargs<'py>(
    py: Python<'py>,
    arguments: &Value,
    integer_params: &[String],
) -> PyResult<Bound<'py, PyDict>> {
    let kwargs = json_to_py(py, arguments)?.cast_into::<PyDict>()?;
    if integer_params.is_empty() {
        return Ok(kwargs);
    }
    for name in integer_params {
        if let Some(Value::Number(n)) = arguments.get(name) {
            if let (None, None, Some(f)) = (n.as_i64(), n.as_u64(), n.as_f64()) {
                if f.fract() == 0.0 {
                    let int = py.import("builtins")?.getattr("int")?.call1((f,))?;
                    kwargs.set_item(name, int)?;
                }
            }
        }
    }
    Ok(kwargs)
}

/// A Python object made of dict/list/str/int/float/bool/None as a JSON value.
pub(crate) fn py_to_json(obj: &Bound<'_, PyAny>) -> PyResult<Value> {
    pythonize::depythonize::<Value>(obj).map_err(PyErr::from)
}

/// A number of seconds as a `Duration` (`what` names the option in the error).
pub(crate) fn seconds(v: f64, what: &str) -> PyResult<Duration> {
    Duration::try_from_secs_f64(v).map_err(|_| {
        PyValueError::new_err(format!("{what} must be a non-negative number of seconds"))
    })
}

/// An `output=` option: `"error"`, `"result"` or `"off"`.
pub(crate) fn parse_output(py: Python<'_>, mode: &str) -> PyResult<OutputMode> {
    OutputMode::parse(mode).ok_or_else(|| {
        setup_error(
            py,
            format!("output must be \"error\", \"result\" or \"off\", not {mode:?}"),
        )
    })
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
        let jsonvalue = py.import("mcpline._jsonvalue")?;
        Ok(Self {
            tool_result: results.getattr("ToolResult")?.unbind(),
            image: results.getattr("Image")?.unbind(),
            audio: results.getattr("Audio")?.unbind(),
            tool_error: results.getattr("ToolError")?.unbind(),
            cancelled: results.getattr("Cancelled")?.unbind(),
            to_jsonable: jsonvalue.getattr("to_jsonable")?.unbind(),
        })
    }
}

/// Why a Python value is not JSON data (`None`: it is some other kind of object).
enum NotJson {
    Other,
    Bad(String),
}

/// Converts plain Python data (dict with str keys, list, tuple, str, int, float, bool, None) to
/// JSON, refusing what JSON cannot hold (NaN, infinities, integers beyond 64 bits).
fn plain_json(obj: &Bound<'_, PyAny>, depth: usize) -> Result<Value, NotJson> {
    if depth > 200 {
        return Err(NotJson::Bad(
            "the value is nested more than 200 levels deep".into(),
        ));
    }
    if obj.is_none() {
        return Ok(Value::Null);
    }
    if let Ok(b) = obj.cast::<PyBool>() {
        return Ok(Value::Bool(b.is_true()));
    }
    if let Ok(i) = obj.cast::<PyInt>() {
        if let Ok(v) = i.extract::<i64>() {
            return Ok(Value::from(v));
        }
        if let Ok(v) = i.extract::<u64>() {
            return Ok(Value::from(v));
        }
        return Err(NotJson::Bad(format!(
            "the integer {} does not fit in 64 bits (return it as a string)",
            i.str().map(|s| s.to_string()).unwrap_or_default()
        )));
    }
    if let Ok(f) = obj.cast::<PyFloat>() {
        let v = f.value();
        return serde_json::Number::from_f64(v)
            .map(Value::Number)
            .ok_or_else(|| NotJson::Bad(format!("{v} is not representable in JSON")));
    }
    if let Ok(s) = obj.cast::<PyString>() {
        return s
            .to_str()
            .map(|s| Value::String(s.to_owned()))
            .map_err(|e| NotJson::Bad(e.to_string()));
    }
    if let Ok(d) = obj.cast::<PyDict>() {
        let mut map = Map::new();
        for (k, v) in d.iter() {
            let Ok(key) = k.cast::<PyString>() else {
                return Err(NotJson::Other);
            };
            let key = key
                .to_str()
                .map_err(|e| NotJson::Bad(e.to_string()))?
                .to_owned();
            map.insert(key, plain_json(&v, depth + 1)?);
        }
        return Ok(Value::Object(map));
    }
    if let Ok(l) = obj.cast::<PyList>() {
        return l
            .iter()
            .map(|v| plain_json(&v, depth + 1))
            .collect::<Result<_, _>>()
            .map(Value::Array);
    }
    if let Ok(t) = obj.cast::<PyTuple>() {
        return t
            .iter()
            .map(|v| plain_json(&v, depth + 1))
            .collect::<Result<_, _>>()
            .map(Value::Array);
    }
    Err(NotJson::Other)
}

/// Plain JSON data from any return value (dataclasses, enums, pydantic models via `to_jsonable`).
fn jsonable(py: Python<'_>, obj: &Bound<'_, PyAny>, kinds: &Kinds) -> PyResult<Value> {
    match plain_json(obj, 0) {
        Ok(v) => return Ok(v),
        Err(NotJson::Bad(why)) => {
            return Err(PyValueError::new_err(format!(
                "the tool's return value is not JSON data: {why}"
            )));
        }
        Err(NotJson::Other) => {}
    }
    let plain = kinds.to_jsonable.call1(py, (obj,))?;
    match plain_json(plain.bind(py), 0) {
        Ok(v) => Ok(v),
        Err(NotJson::Bad(why)) => Err(PyValueError::new_err(format!(
            "the tool's return value is not JSON data: {why}"
        ))),
        Err(NotJson::Other) => Err(pyo3::exceptions::PyTypeError::new_err(
            "the tool's return value could not be converted to JSON data",
        )),
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
        return Err(pyo3::exceptions::PyTypeError::new_err(
            "Image/Audio data must be bytes",
        ));
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
    if let Ok(b) = item.cast::<PyByteArray>() {
        return Ok(bytes_block(&b.to_vec()));
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

/// How a tool's return value becomes a result, from its declared return type.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum ResultShape {
    /// No `outputSchema`: `None` is an empty result, a `str` is text, other data is sent as
    /// JSON text and (from 2025-06-18) `structuredContent`.
    Content,
    /// An object `outputSchema`: every value is structured, as it is.
    Object,
    /// `{"result": ...}` around a non-object type: every value, `None` and `str` too, is sent
    /// wrapped.
    Wrapped,
}

impl ResultShape {
    /// The shape for a tool with `output_schema` whose values must be wrapped (`wraps`).
    pub(crate) fn of(has_schema: bool, wraps: bool) -> Self {
        match (has_schema, wraps) {
            (false, _) => Self::Content,
            (true, false) => Self::Object,
            (true, true) => Self::Wrapped,
        }
    }

    /// `value` as `structuredContent`: wrapped as `{"result": value}` where the schema says so
    /// (and, without a schema, when it is not an object); as it is under an object schema, which
    /// the core checks it against.
    fn structure(self, value: Value) -> Value {
        match self {
            Self::Content => wrap(value, false),
            Self::Object => value,
            Self::Wrapped => wrap(value, true),
        }
    }
}

/// Turns a tool's return value into a result. Values a tool with an `outputSchema` returns
/// are always structured, so that the core can check them against it.
pub(crate) fn to_output(
    py: Python<'_>,
    obj: &Bound<'_, PyAny>,
    shape: ResultShape,
    kinds: &Kinds,
) -> PyResult<ToolOutput> {
    if obj.is_none() {
        if shape == ResultShape::Content {
            return Ok(ToolOutput::default());
        }
        return Ok(ToolOutput {
            content: vec![Content::Text("null".to_owned())],
            structured: Some(shape.structure(Value::Null)),
            is_error: false,
        });
    }
    if let Ok(s) = obj.cast::<PyString>() {
        let text = s.to_str()?;
        let mut output = ToolOutput::text(text);
        if shape != ResultShape::Content {
            output.structured = Some(shape.structure(Value::from(text)));
        }
        return Ok(output);
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
        return Ok(ToolOutput {
            content: vec![content_block(py, obj, kinds)?],
            ..ToolOutput::default()
        });
    }
    if let Ok(b) = obj.cast::<PyByteArray>() {
        return Ok(ToolOutput {
            content: vec![bytes_block(&b.to_vec())],
            ..ToolOutput::default()
        });
    }
    let value = jsonable(py, obj, kinds)?;
    let text = value.to_string();
    Ok(ToolOutput {
        content: vec![Content::Text(text)],
        structured: Some(shape.structure(value)),
        is_error: false,
    })
}
