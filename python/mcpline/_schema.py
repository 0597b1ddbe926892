"""Turn a Python callable into the shape of an MCP tool, and tool results into JSON data.

``describe(fn)`` reads the signature, the type hints and the docstring of ``fn`` once, at
registration, and returns a :class:`ToolShape`: the tool name, its description, a JSON Schema
(draft 2020-12) for the arguments, an optional output schema and a few facts the server needs
to call the function (which parameter receives the context, whether it is ``async``).

``to_jsonable(value)`` converts a tool's return value into plain JSON data (``dict``, ``list``,
``str``, ``int``, ``float``, ``bool``, ``None``) for ``structuredContent``.

Only the standard library is imported here. pydantic is never imported by this module: a
pydantic model is recognised by duck typing (a class with ``model_json_schema`` / an instance
with ``model_dump``), so it is only ever used when the tool author already imported it.
"""

from __future__ import annotations

import math
import sys
import types

from mcpline._results import Audio, Image, ToolResult
from mcpline._startup import (
    TYPE_CHECKING,
    Value,
    abc,
    dataclasses,
    inspect,
    loaded,
    re,
    typing,
)

if TYPE_CHECKING:
    from collections.abc import Callable
    from typing import Any

    Schema = dict[str, Any]


__all__ = ["ToolShape", "describe", "is_plain_json", "to_jsonable"]

_NAME_CHARS = frozenset("ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789_.-")
_NONE_TYPE = type(None)
_CO_VARARGS = 0x04  # code flags (the `inspect` constants of the same names)
_CO_VARKEYWORDS = 0x08
_CO_COROUTINE = 0x80
_PRIMITIVES: dict[Any, str] = {
    bool: "boolean",
    int: "integer",
    float: "number",
    str: "string",
}


class _Empty:
    """No annotation, or no default (``inspect.Parameter.empty`` without importing inspect)."""


_EMPTY: Any = _Empty


def _union_origins() -> tuple[Any, ...]:
    return (loaded("typing", "Union"), types.UnionType)


def _never_forms() -> tuple[Any, ...]:
    return (loaded("typing", "NoReturn"), loaded("typing", "Never"))


_ORIGINS = {
    "array": ((list,), ("Sequence", "MutableSequence")),
    "set": ((set, frozenset), ("Set", "MutableSet")),
    "mapping": ((dict,), ("Mapping", "MutableMapping")),
}


def _origins(kind: str) -> tuple[Any, ...]:
    """The generic origins of one kind of container: the builtins, and the `collections.abc`
    classes once that module was imported (an annotation such as `Sequence[int]` cannot exist
    before)."""
    builtins, abstract = _ORIGINS[kind]
    return (*builtins, *(loaded("collections.abc", name) for name in abstract))


def _is_plain_class(tp: Any) -> bool:
    """A class that is not a parameterised generic (``list[int]`` passes ``isinstance(type)``
    on Python 3.10)."""
    return isinstance(tp, type) and not isinstance(tp, types.GenericAlias)


def _origin(tp: Any) -> Any:
    """``typing.get_origin``, importing nothing for plain classes, ``list[int]`` or ``A | B``."""
    if _is_plain_class(tp):
        return None
    if type(tp) is types.GenericAlias:
        return tp.__origin__
    if type(tp) is types.UnionType:
        return types.UnionType
    return typing.get_origin(tp)


def _args(tp: Any) -> tuple[Any, ...]:
    """``typing.get_args``, importing nothing for ``list[int]`` or ``A | B``."""
    if type(tp) is types.GenericAlias or type(tp) is types.UnionType:
        return tuple(tp.__args__)
    return tuple(typing.get_args(tp))


def _holds_no_strings(tp: Any) -> bool:
    """Plain classes, ``list[int]``, ``A | B`` ... all the way down: nothing to resolve."""
    if _is_plain_class(tp) or tp is None:
        return True
    if type(tp) is types.GenericAlias or type(tp) is types.UnionType:
        return all(_holds_no_strings(arg) for arg in tp.__args__)
    return False


# Return types whose values the server turns into content blocks itself (text, base64 media,
# a hand-built result): they get no output schema.
_CONTENT_TYPES: tuple[type, ...] = (bytes, bytearray, memoryview, Image, Audio, ToolResult)


class ToolShape(Value):
    """Everything the server needs to list and call one tool.

    ``input_schema`` and ``output_schema`` are built afresh by each ``describe`` call;
    ``wraps_output`` says that the tool's return value must be sent as ``{"result": value}``
    because its schema is not an object schema. ``param_types`` holds the resolved annotation
    of each parameter in ``param_names`` (``object`` where there is none).
    """

    __slots__ = (
        "context_param",
        "description",
        "input_schema",
        "is_async",
        "name",
        "output_schema",
        "param_names",
        "param_types",
        "wraps_output",
    )
    name: str
    description: str | None
    input_schema: dict[str, Any]
    output_schema: dict[str, Any] | None
    wraps_output: bool
    context_param: str | None
    is_async: bool
    param_types: dict[str, Any]
    param_names: tuple[str, ...]

    def __init__(
        self,
        *,
        name: str,
        description: str | None,
        input_schema: dict[str, Any],
        output_schema: dict[str, Any] | None,
        wraps_output: bool,
        context_param: str | None,
        is_async: bool,
        param_types: dict[str, Any],
    ) -> None:
        self._init(
            name=name,
            description=description,
            input_schema=input_schema,
            output_schema=output_schema,
            wraps_output=wraps_output,
            context_param=context_param,
            is_async=is_async,
            param_types=param_types,
            param_names=tuple(param_types),
        )


def describe(
    fn: Callable[..., Any],
    *,
    name: str | None = None,
    description: str | None = None,
    context_types: tuple[type, ...] = (),
) -> ToolShape:
    """Describe ``fn`` as an MCP tool.

    ``name`` defaults to ``fn.__name__`` and must be 1-64 characters of ``[A-Za-z0-9_.-]``
    (``ValueError`` otherwise). ``description`` defaults to the docstring without its
    ``Args:``/``Returns:``/``Raises:`` sections; per-parameter descriptions come from the
    ``Args:`` section (or Sphinx ``:param x:`` fields) and from ``Annotated[T, "text"]``, which
    wins. A parameter annotated with one of ``context_types`` (possibly ``Optional``) receives
    the request context and is left out of the schema.

    Raises ``TypeError`` (naming the function, the parameter and the annotation) for
    ``*args``, ``**kwargs``, positional-only parameters and annotations that have no JSON
    Schema equivalent.
    """
    info = _Callable(fn)
    tool_name = info.name if name is None else name
    if (
        not isinstance(tool_name, str)
        or not 1 <= len(tool_name) <= 64
        or not _NAME_CHARS.issuperset(tool_name)
    ):
        raise ValueError(
            f"invalid tool name {tool_name!r}: a tool name must be 1 to 64 characters, each a "
            "letter (A-Z, a-z), a digit, '_', '.' or '-'"
        )
    label = info.label
    try:
        parameters, return_annotation = _signature(fn)
    except (TypeError, ValueError) as exc:
        raise TypeError(f"{label}: cannot read the signature: {exc}") from exc

    doc_summary, doc_params, doc_returns = _parse_docstring(info.doc)
    builder = _Builder(output=False, globalns=info.globalns)
    properties: dict[str, Schema] = {}
    param_types: dict[str, Any] = {}
    required: list[str] = []
    context_param: str | None = None

    for param in parameters:
        pname = param.name
        if param.kind == "VAR_POSITIONAL":
            raise TypeError(
                f"{label}: parameter *{pname} is not supported; MCP tools take named "
                "arguments only, declare each one explicitly"
            )
        if param.kind == "VAR_KEYWORD":
            raise TypeError(
                f"{label}: parameter **{pname} is not supported; MCP tools take a fixed set "
                "of named arguments, declare each one explicitly"
            )
        if param.kind == "POSITIONAL_ONLY":
            raise TypeError(
                f"{label}: parameter {pname!r} is positional-only (declared before '/'); MCP "
                "arguments are passed by name"
            )
        annotation = _resolve(
            param.annotation, info.globalns, label, f"parameter {pname!r}", context_types
        )
        if _is_context(annotation, context_types):
            if context_param is not None:
                raise TypeError(
                    f"{label}: parameters {context_param!r} and {pname!r} both ask for the "
                    "context; declare at most one"
                )
            context_param = pname
            continue
        try:
            schema = builder.schema(annotation)
        except _Unsupported as exc:
            raise TypeError(
                f"{label}: parameter {pname!r} has unsupported annotation {_fmt(annotation)}: {exc}"
            ) from None
        text = _annotated_description(annotation) or doc_params.get(pname)
        if text:
            schema = {**schema, "description": text}
        if param.default is _EMPTY:
            required.append(pname)
        else:
            ok, default = _try_jsonable(param.default)
            if ok:
                schema = {**schema, "default": default}
        properties[pname] = schema
        param_types[pname] = object if annotation is _EMPTY else annotation

    input_schema: Schema = {"type": "object", "properties": properties}
    if required:
        input_schema["required"] = required
    input_schema["additionalProperties"] = False
    if builder.defs:
        input_schema["$defs"] = builder.defs

    output_schema, wraps = _output_schema(return_annotation, info, label, doc_returns)
    return ToolShape(
        name=tool_name,
        description=description if description is not None else doc_summary,
        input_schema=input_schema,
        output_schema=output_schema,
        wraps_output=wraps,
        context_param=context_param,
        is_async=info.is_async,
        param_types=param_types,
    )


def is_plain_json(annotation: Any) -> bool:
    """Whether arguments for ``annotation`` arrive ready to use: JSON's own types (``str``,
    ``int``, ``float``, ``bool``, ``None``, ``list``, ``dict``, ``object``, and ``list[...]``,
    ``dict[...]`` or ``A | B`` of those) need no conversion; anything else may."""
    if _is_plain_class(annotation):
        return annotation in _JSON_CLASSES
    if annotation is None:
        return True
    if type(annotation) is types.GenericAlias:
        return annotation.__origin__ in (list, dict) and all(
            is_plain_json(arg) for arg in annotation.__args__
        )
    if type(annotation) is types.UnionType:
        return all(is_plain_json(arg) for arg in annotation.__args__)
    return False


_JSON_CLASSES = frozenset({str, int, float, bool, _NONE_TYPE, list, dict, object})


def to_jsonable(value: Any) -> Any:
    """Convert a tool's return value into plain JSON data.

    * ``str``, ``int``, ``bool``, ``None`` and finite ``float`` pass through; NaN and the
      infinities raise ``TypeError`` (not representable in JSON). Subclasses of these builtins
      become the plain builtin.
    * ``enum.Enum`` members become their ``value`` (converted in turn).
    * dataclass instances become a ``dict`` of every field (``dataclasses.fields``), converted
      recursively; pydantic models (anything whose class has ``model_dump``) become
      ``model_dump(mode="json")``.
    * mappings become ``dict``; every key must be a ``str`` (or an Enum whose value is a
      ``str``), otherwise ``TypeError``. Keys are never coerced.
    * ``list``, ``tuple`` and other sequences become ``list``; ``set`` and ``frozenset`` become a
      ``list`` sorted when the converted items are mutually orderable (for a stable output),
      in iteration order otherwise.
    * ``datetime.datetime``/``date``/``time`` become ``isoformat()`` strings;
      ``decimal.Decimal`` becomes ``str(value)`` (exact, no float rounding: ``"1.10"``,
      ``"NaN"``); ``uuid.UUID`` and ``pathlib.PurePath`` become ``str(value)``.
    * ``bytes``, ``bytearray`` and ``memoryview`` raise ``TypeError``: binary results are
      returned directly (or as ``Image``/``Audio``), not nested inside structured data.
    * anything else raises ``TypeError`` naming the type and where it was found.

    The input is never modified; containers are always copied.
    """
    try:
        return _jsonable(value)
    except _BadValue as exc:
        where = "".join(reversed(exc.path))
        message = exc.message if not where else f"{exc.message} (at value{where})"
        raise TypeError(message) from None
    except RecursionError:
        raise TypeError(
            "value is nested too deeply or contains a reference cycle; it cannot be "
            "converted to JSON"
        ) from None


# --------------------------------------------------------------------------------------------
# Callables: name, docstring, globals for resolving string annotations


class _Callable:
    __slots__ = ("doc", "globalns", "is_async", "label", "name")

    def __init__(self, fn: Any) -> None:
        inner: Any = fn
        while isinstance(inner, loaded("functools", "partial")):
            inner = inner.func
        if isinstance(inner, type):
            self.name = inner.__name__
            self.doc = inner.__doc__
            code_owner: Any = getattr(inner, "__init__", inner)
            self.is_async = False
        elif _is_plain_function(inner) or inspect.isroutine(inner):
            self.name = getattr(inner, "__name__", "")
            self.doc = getattr(inner, "__doc__", None)
            code_owner = inner
            self.is_async = _is_coroutine_function(fn)
        elif callable(inner):
            call = type(inner).__call__
            self.name = type(inner).__name__
            self.doc = getattr(call, "__doc__", None) or type(inner).__doc__
            code_owner = call
            self.is_async = _is_coroutine_function(fn) or _is_coroutine_function(call)
        else:
            raise TypeError(f"cannot describe {fn!r}: it is not callable")
        qualname = getattr(inner, "__qualname__", None) or self.name or repr(fn)
        self.label = str(qualname)
        self.globalns = _globals_of(code_owner)


def _is_plain_function(fn: Any) -> bool:
    """A ``def`` function (or lambda) that no decorator marked: nothing in its ``__dict__`` (no
    ``__wrapped__``, ``__signature__`` or coroutine mark), so its code object tells it all."""
    return type(fn) is types.FunctionType and not fn.__dict__


def _is_coroutine_function(fn: Any) -> bool:
    target = fn.__func__ if type(fn) is types.MethodType else fn
    if _is_plain_function(target):
        return bool(target.__code__.co_flags & _CO_COROUTINE)
    return inspect.iscoroutinefunction(fn)


class _Param:
    """One parameter: ``kind`` is the name of an ``inspect.Parameter`` kind."""

    __slots__ = ("annotation", "default", "kind", "name")

    def __init__(self, name: str, kind: str, default: Any, annotation: Any) -> None:
        self.name = name
        self.kind = kind
        self.default = default
        self.annotation = annotation


def _signature(fn: Any) -> tuple[list[_Param], Any]:
    """The parameters and the return annotation of ``fn``, as ``inspect.signature`` reads them.

    A plain function (or a method bound to one) is read from its code object; anything else
    (decorated, partial, builtin, callable object) goes through ``inspect.signature``.
    """
    bound = type(fn) is types.MethodType
    target = fn.__func__ if bound else fn
    if not _is_plain_function(target):
        signature = inspect.signature(fn)
        read = [
            _Param(
                p.name,
                p.kind.name,
                _EMPTY if p.default is p.empty else p.default,
                _EMPTY if p.annotation is p.empty else p.annotation,
            )
            for p in signature.parameters.values()
        ]
        returns = signature.return_annotation
        return read, _EMPTY if returns is signature.empty else returns
    code = target.__code__
    names = code.co_varnames
    positional = code.co_argcount
    keyword_only = code.co_kwonlyargcount
    annotations = target.__annotations__
    defaults = target.__defaults__ or ()
    kw_defaults = target.__kwdefaults__ or {}
    first_default = positional - len(defaults)
    params: list[_Param] = []

    def add(name: str, kind: str, default: Any = _EMPTY) -> None:
        params.append(_Param(name, kind, default, annotations.get(name, _EMPTY)))

    for index, name in enumerate(names[:positional]):
        kind = "POSITIONAL_ONLY" if index < code.co_posonlyargcount else "POSITIONAL_OR_KEYWORD"
        add(name, kind, defaults[index - first_default] if index >= first_default else _EMPTY)
    extra = positional + keyword_only
    if code.co_flags & _CO_VARARGS:
        add(names[extra], "VAR_POSITIONAL")
        extra += 1
    for name in names[positional : positional + keyword_only]:
        add(name, "KEYWORD_ONLY", kw_defaults.get(name, _EMPTY))
    if code.co_flags & _CO_VARKEYWORDS:
        add(names[extra], "VAR_KEYWORD")
    if bound:
        if not params or params[0].kind == "KEYWORD_ONLY" or params[0].kind == "VAR_KEYWORD":
            raise ValueError("invalid method signature")
        if params[0].kind != "VAR_POSITIONAL":  # `self` is absorbed by *args
            params.pop(0)
    return params, annotations.get("return", _EMPTY)


def _globals_of(obj: Any) -> dict[str, Any]:
    target = getattr(obj, "__func__", obj)
    if hasattr(target, "__wrapped__"):
        try:
            target = inspect.unwrap(target)
        except ValueError:
            pass
    globalns = getattr(target, "__globals__", None)
    if isinstance(globalns, dict):
        return globalns
    module = sys.modules.get(getattr(target, "__module__", None) or "")
    return dict(vars(module)) if module is not None else {}


_PROBE_CODE = (lambda: None).__code__
_IDENT_RE = r"[A-Za-z_][\w.]*"


def _resolve(
    annotation: Any,
    globalns: dict[str, Any],
    label: str,
    what: str,
    context_types: tuple[type, ...],
) -> Any:
    """Evaluate string annotations (and forward references nested in annotations)."""
    if annotation is _EMPTY or _holds_no_strings(annotation):
        return annotation  # nothing in it is a forward reference
    probe = types.FunctionType(_PROBE_CODE, globalns)
    probe.__annotations__ = {"x": annotation}
    try:
        return typing.get_type_hints(probe, include_extras=True)["x"]
    except Exception as exc:
        # ``ctx: Context`` where Context is only imported under TYPE_CHECKING: recognise the
        # context parameter by name rather than failing.
        if isinstance(annotation, str) and context_types:
            names = {t.rsplit(".", 1)[-1] for t in re.findall(_IDENT_RE, annotation)}
            names -= {"None", "Optional", "Annotated", "typing"}
            for ctx in context_types:
                if names == {ctx.__name__}:
                    return ctx
        raise TypeError(
            f"{label}: cannot resolve the annotation {annotation!r} of {what}: "
            f"{type(exc).__name__}: {exc}"
        ) from None


def _is_context(annotation: Any, context_types: tuple[type, ...]) -> bool:
    if not context_types:
        return False
    if _is_plain_class(annotation):
        return issubclass(annotation, context_types)
    if _origin(annotation) is loaded("typing", "Annotated"):
        annotation = _args(annotation)[0]
    if _origin(annotation) in _union_origins():
        members = [a for a in _args(annotation) if a is not _NONE_TYPE]
        if len(members) != 1:
            return False
        annotation = members[0]
    return isinstance(annotation, type) and issubclass(annotation, context_types)


def _annotated_description(annotation: Any) -> str | None:
    if _origin(annotation) is not loaded("typing", "Annotated"):
        return None
    for meta in annotation.__metadata__:
        if isinstance(meta, str):
            return meta
        text = getattr(meta, "description", None)
        if isinstance(text, str) and text:
            return text
    return None


def _fmt(annotation: Any) -> str:
    return inspect.formatannotation(annotation)


# --------------------------------------------------------------------------------------------
# Output schema


def _output_schema(
    raw: Any, info: _Callable, label: str, doc_returns: str | None
) -> tuple[Schema | None, bool]:
    if raw is _EMPTY:
        return None, False
    annotation = _resolve(raw, info.globalns, label, "the return annotation", ())
    if _has_no_output_schema(annotation):
        return None, False
    builder = _Builder(output=True, globalns=info.globalns)
    try:
        schema = builder.schema(annotation)
    except _Unsupported as exc:
        raise TypeError(
            f"{label}: unsupported return annotation {_fmt(annotation)}: {exc}"
        ) from None
    defs = builder.defs
    if _is_object_schema(schema, defs, 0):
        if schema.get("type") != "object":
            schema = {"type": "object", **schema}
        if defs:
            schema = {**schema, "$defs": defs}
        return schema, False
    if doc_returns and "description" not in schema:
        schema = {**schema, "description": doc_returns}
    wrapped: Schema = {
        "type": "object",
        "properties": {"result": schema},
        "required": ["result"],
    }
    if defs:
        wrapped["$defs"] = defs
    return wrapped, True


def _has_no_output_schema(annotation: Any) -> bool:
    """``str``, ``None``, binary/media/ToolResult, ``Any`` (or unions of only those)."""
    origin = _origin(annotation)
    if origin is loaded("typing", "Annotated"):
        return _has_no_output_schema(_args(annotation)[0])
    if origin in _union_origins():
        return all(_has_no_output_schema(a) for a in _args(annotation))
    if annotation is None or annotation is _NONE_TYPE or annotation is str:
        return True
    if annotation is object or annotation is loaded("typing", "Any"):
        return True
    if annotation is loaded("typing", "LiteralString") or annotation in _never_forms():
        return True
    return isinstance(annotation, type) and issubclass(annotation, _CONTENT_TYPES)


def _is_object_schema(schema: Schema, defs: dict[str, Schema], depth: int) -> bool:
    if depth > 32:
        return False
    if schema.get("type") == "object":
        return True
    ref = schema.get("$ref")
    if isinstance(ref, str) and ref.startswith("#/$defs/"):
        target = defs.get(ref[len("#/$defs/") :])
        return target is not None and _is_object_schema(target, defs, depth + 1)
    options = schema.get("anyOf")
    if isinstance(options, list) and options:
        return all(isinstance(o, dict) and _is_object_schema(o, defs, depth + 1) for o in options)
    return False


# --------------------------------------------------------------------------------------------
# Type -> JSON Schema


class _Unsupported(Exception):
    """An annotation has no JSON Schema equivalent (message says why)."""


def _qualifier_forms(*names: str) -> tuple[Any, ...]:
    """``typing`` (and, if already imported, ``typing_extensions``) forms with these names."""
    forms: list[Any] = []
    extensions = sys.modules.get("typing_extensions")
    for name in names or ("Required", "NotRequired", "ReadOnly"):
        for module in (sys.modules.get("typing"), extensions):
            form = getattr(module, name, None) if module is not None else None
            if form is not None and form not in forms:
                forms.append(form)
    return tuple(forms)


def _explicitly_required(hint: Any) -> bool | None:
    """True for ``Required[...]``, False for ``NotRequired[...]``, None when unmarked."""
    required, not_required = _qualifier_forms("Required"), _qualifier_forms("NotRequired")
    for _ in range(8):
        origin = typing.get_origin(hint) or getattr(hint, "__origin__", None)
        if origin in required:
            return True
        if origin in not_required:
            return False
        if origin is None or origin not in (typing.Annotated, *_qualifier_forms("ReadOnly")):
            return None
        hint = typing.get_args(hint)[0]
    return None


def _is_dataclass_class(tp: type) -> bool:
    """``dataclasses.is_dataclass`` for a class, without importing dataclasses."""
    return hasattr(tp, "__dataclass_fields__")


def _is_typeddict(tp: type) -> bool:
    return (
        issubclass(tp, dict)
        and hasattr(tp, "__required_keys__")
        and hasattr(tp, "__optional_keys__")
    )


def _is_pydantic_model(tp: type) -> bool:
    return callable(getattr(tp, "model_json_schema", None))


def _scalar_json_type(value: Any) -> str | None:
    if value is None:
        return "null"
    if isinstance(value, bool):
        return "boolean"
    if isinstance(value, int):
        return "integer"
    if isinstance(value, float):
        return "number" if math.isfinite(value) else None
    if isinstance(value, str):
        return "string"
    return None


def _enum_schema(values: list[Any]) -> Schema:
    kinds: list[str] = []
    for value in values:
        kind = _scalar_json_type(value)
        if kind is None:
            raise _Unsupported(f"value {value!r} is not a JSON string, number, boolean or null")
        if kind not in kinds:
            kinds.append(kind)
    if "integer" in kinds and "number" in kinds:
        kinds.remove("integer")
    schema: Schema = {"enum": values}
    if kinds:
        schema["type"] = kinds[0] if len(kinds) == 1 else kinds
    return schema


def _class_description(tp: type) -> str | None:
    doc = tp.__dict__.get("__doc__")
    if not isinstance(doc, str) or not doc.strip():
        return None
    if _is_dataclass_class(tp) and doc.startswith(f"{tp.__name__}("):
        return None  # the signature dataclasses writes when there is no docstring
    return _cleandoc(doc)


def _rewrite_refs(node: Any, renames: dict[str, str]) -> Any:
    if isinstance(node, dict):
        out: dict[str, Any] = {}
        for key, value in node.items():
            if key == "$ref" and isinstance(value, str) and value.startswith("#/$defs/"):
                head, sep, tail = value[len("#/$defs/") :].partition("/")
                value = f"#/$defs/{renames.get(head, head)}{sep}{tail}"
            else:
                value = _rewrite_refs(value, renames)
            out[key] = value
        return out
    if isinstance(node, list):
        return [_rewrite_refs(item, renames) for item in node]
    return node


class _Builder:
    """Builds JSON Schemas for one document; recursive types go to ``defs``."""

    def __init__(self, *, output: bool, globalns: dict[str, Any]) -> None:
        self.output = output
        # Where forward references are looked up: the tool's module, then (while describing
        # the fields of a class) that class's module and namespace.
        self._namespaces: list[tuple[dict[str, Any], dict[str, Any] | None]] = [(globalns, None)]
        self.defs: dict[str, Schema] = {}
        self._ref_names: dict[Any, str] = {}
        self._stack: list[Any] = []
        self._used_names: set[str] = set()

    def schema(self, tp: Any) -> Schema:
        if tp is _EMPTY or tp is object or tp is loaded("typing", "Any"):
            return {}
        if tp is None or tp is _NONE_TYPE:
            return {"type": "null"}
        if _is_plain_class(tp):
            primitive = _PRIMITIVES.get(tp)
            return {"type": primitive} if primitive is not None else self._class(tp)
        if tp is loaded("typing", "LiteralString"):
            return {"type": "string"}
        origin = _origin(tp)
        if origin is not None:
            return self._generic(tp, origin)
        supertype = getattr(tp, "__supertype__", None)  # typing.NewType
        if supertype is not None:
            return self.schema(supertype)
        if type(tp).__name__ == "TypeAliasType" and hasattr(tp, "__value__"):  # `type X = ...`
            return self._named(tp, lambda alias: self.schema(alias.__value__))
        if isinstance(tp, (str, typing.ForwardRef)):
            # Python 3.10's get_type_hints leaves strings nested in builtin generics
            # (list["Node"]) unevaluated; evaluate them here.
            return self.schema(self._evaluate(tp))
        if isinstance(tp, typing.TypeVar):
            raise _Unsupported(f"type variables such as {tp!r} have no JSON Schema")
        raise _Unsupported(f"{tp!r} has no JSON Schema equivalent")

    # -- generic aliases -------------------------------------------------------------------

    def _generic(self, tp: Any, origin: Any) -> Schema:
        args = _args(tp)
        if origin is loaded("typing", "Annotated"):
            schema = self.schema(args[0])
            text = _annotated_description(tp)
            return {**schema, "description": text} if text else schema
        if origin in _union_origins():
            return self._union(args)
        if origin is loaded("typing", "Literal"):
            enum_class = loaded("enum", "Enum")
            return _enum_schema([a.value if isinstance(a, enum_class) else a for a in args])
        if origin in _origins("array"):
            return self._array(args)
        if origin in _origins("set"):
            return {**self._array(args), "uniqueItems": True}
        if origin is tuple:
            return self._tuple(args)
        if origin in _origins("mapping"):
            return self._mapping(args)
        if origin in _qualifier_forms():  # Required[T], NotRequired[T], ReadOnly[T]
            return self.schema(args[0])
        if isinstance(origin, type) and (_is_dataclass_class(origin) or _is_typeddict(origin)):
            raise _Unsupported(
                f"generic {origin.__qualname__}[...] is not supported; use a concrete class"
            )
        raise _Unsupported(f"{_fmt(tp)} has no JSON Schema equivalent")

    def _array(self, args: tuple[Any, ...]) -> Schema:
        if not args:
            return {"type": "array"}
        return {"type": "array", "items": self.schema(args[0])}

    def _tuple(self, args: tuple[Any, ...]) -> Schema:
        if not args:
            return {"type": "array"}
        if len(args) == 2 and args[1] is Ellipsis:
            return {"type": "array", "items": self.schema(args[0])}
        return {
            "type": "array",
            "prefixItems": [self.schema(a) for a in args],
            "minItems": len(args),
            "maxItems": len(args),
        }

    def _mapping(self, args: tuple[Any, ...]) -> Schema:
        if not args:
            return {"type": "object"}
        key, value = args
        try:
            key_schema = self.schema(key)
        except _Unsupported:
            key_schema = {"type": "unsupported"}
        if key_schema and key_schema.get("type") != "string":
            raise _Unsupported(
                f"dictionary keys must be str because JSON object keys are strings; got "
                f"{_fmt(key)} keys"
            )
        schema: Schema = {"type": "object", "additionalProperties": self.schema(value)}
        if "enum" in key_schema:
            schema["propertyNames"] = key_schema
        return schema

    def _union(self, args: tuple[Any, ...]) -> Schema:
        members = [self.schema(a) for a in args]
        kinds: list[str] = []
        for member in members:
            kind = member.get("type")
            if len(member) != 1 or not isinstance(kind, str):
                return {"anyOf": members}
            if kind not in kinds:
                kinds.append(kind)
        return {"type": kinds[0] if len(kinds) == 1 else kinds}

    # -- classes ---------------------------------------------------------------------------

    def _class(self, tp: type) -> Schema:
        if issubclass(tp, loaded("enum", "Enum")):
            members: Any = tp
            try:
                return _enum_schema([member.value for member in members])
            except _Unsupported as exc:
                raise _Unsupported(f"enum {tp.__qualname__}: {exc}") from None
        if _is_typeddict(tp):
            return self._named(tp, self._typeddict)
        if _is_dataclass_class(tp):
            return self._named(tp, self._dataclass)
        if _is_pydantic_model(tp):
            return self._pydantic(tp)
        if tp is list or tp is tuple:
            return {"type": "array"}
        if tp is set or tp is frozenset:
            return {"type": "array", "uniqueItems": True}
        if tp is dict:
            return {"type": "object"}
        if issubclass(tp, (bytes, bytearray, memoryview)):
            where = "inside a structured result" if self.output else "as a tool argument"
            raise _Unsupported(f"binary data cannot be represented in JSON {where}")
        special = self._stdlib_string(tp)
        if special is not None:
            return special
        raise _Unsupported(
            f"{tp.__qualname__} is not a dataclass, TypedDict, Enum or pydantic model"
        )

    def _stdlib_string(self, tp: type) -> Schema | None:
        """datetime/date/time/Decimal/UUID/PurePath: strings in results (see to_jsonable).

        ``format`` is only claimed where ``isoformat()``/``str()`` always satisfy it: a naive
        datetime or time has no UTC offset, so it is not an RFC 3339 "date-time"/"time".
        """
        formats: list[tuple[str, str, str | None]] = [
            ("datetime", "datetime", None),
            ("datetime", "date", "date"),
            ("datetime", "time", None),
            ("decimal", "Decimal", None),
            ("uuid", "UUID", "uuid"),
            ("pathlib", "PurePath", None),
        ]
        for module_name, class_name, fmt in formats:
            module = sys.modules.get(module_name)
            cls = getattr(module, class_name, None) if module is not None else None
            if isinstance(cls, type) and issubclass(tp, cls):
                if not self.output:
                    raise _Unsupported(
                        f"{tp.__qualname__} arguments arrive as JSON strings; annotate the "
                        "parameter as str and parse it in the tool"
                    )
                return {"type": "string", "format": fmt} if fmt else {"type": "string"}
        return None

    def _class_hints(self, tp: type) -> dict[str, Any]:
        try:
            return typing.get_type_hints(tp, include_extras=True)
        except Exception as exc:
            raise _Unsupported(
                f"cannot resolve the annotations of {tp.__qualname__}: {type(exc).__name__}: {exc}"
            ) from None

    def _field(self, owner: type, field: str, annotation: Any) -> Schema:
        try:
            return self.schema(annotation)
        except _Unsupported as exc:
            raise _Unsupported(
                f"field {owner.__qualname__}.{field} ({_fmt(annotation)}): {exc}"
            ) from None

    def _evaluate(self, ref: str | typing.ForwardRef) -> Any:
        text = ref if isinstance(ref, str) else ref.__forward_arg__
        globalns, localns = self._namespaces[-1]
        probe = types.FunctionType(_PROBE_CODE, globalns)
        probe.__annotations__ = {"x": text}
        try:
            value = typing.get_type_hints(probe, localns=localns, include_extras=True)["x"]
        except Exception as exc:
            raise _Unsupported(
                f"the forward reference {text!r} could not be resolved: {type(exc).__name__}: {exc}"
            ) from None
        if isinstance(value, (str, typing.ForwardRef)):
            raise _Unsupported(f"the forward reference {text!r} could not be resolved")
        return value

    def _enter(self, tp: type) -> None:
        module = sys.modules.get(tp.__module__)
        self._namespaces.append((vars(module) if module is not None else {}, dict(vars(tp))))

    def _typeddict(self, tp: type) -> Schema:
        self._enter(tp)
        try:
            return self._typeddict_fields(tp)
        finally:
            self._namespaces.pop()

    def _dataclass(self, tp: type) -> Schema:
        self._enter(tp)
        try:
            return self._dataclass_fields(tp)
        finally:
            self._namespaces.pop()

    def _typeddict_fields(self, tp: type) -> Schema:
        hints = self._class_hints(tp)
        required_keys: frozenset[str] = getattr(tp, "__required_keys__", frozenset(hints))
        properties: dict[str, Schema] = {}
        required: list[str] = []
        for key, annotation in hints.items():
            properties[key] = self._field(tp, key, annotation)
            # __required_keys__ misses Required/NotRequired written as strings (PEP 563).
            marked = _explicitly_required(annotation)
            if marked if marked is not None else key in required_keys:
                required.append(key)
        return self._object(tp, properties, required)

    def _dataclass_fields(self, tp: type) -> Schema:
        hints = self._class_hints(tp)
        properties: dict[str, Schema] = {}
        required: list[str] = []
        for field in dataclasses.fields(tp):
            if not self.output and not field.init:
                continue
            schema = self._field(tp, field.name, hints.get(field.name, field.type))
            if field.default is not dataclasses.MISSING:
                ok, default = _try_jsonable(field.default)
                if ok:
                    schema = {**schema, "default": default}
            # Results always carry every field (to_jsonable), arguments may omit defaulted ones.
            if self.output or (
                field.default is dataclasses.MISSING
                and field.default_factory is dataclasses.MISSING
            ):
                required.append(field.name)
            properties[field.name] = schema
        return self._object(tp, properties, required)

    def _object(self, tp: type, properties: dict[str, Schema], required: list[str]) -> Schema:
        schema: Schema = {"type": "object", "properties": properties}
        if required:
            schema["required"] = required
        schema["additionalProperties"] = False
        text = _class_description(tp)
        if text:
            schema["description"] = text
        return schema

    def _pydantic(self, tp: type) -> Schema:
        model: Any = tp
        mode = "serialization" if self.output else "validation"
        try:
            raw = model.model_json_schema(mode=mode)
        except Exception as exc:
            raise _Unsupported(
                f"{tp.__qualname__}.model_json_schema() failed: {type(exc).__name__}: {exc}"
            ) from None
        if not isinstance(raw, dict):
            raise _Unsupported(f"{tp.__qualname__}.model_json_schema() did not return a dict")
        schema: Schema = dict(raw)
        incoming = schema.pop("$defs", None)
        if not isinstance(incoming, dict) or not incoming:
            return schema
        clash = any(
            name in self._used_names and self.defs.get(name) != definition
            for name, definition in incoming.items()
        )
        if clash:
            # Rename every incoming name already in use (identical ones too: they may refer
            # to a definition that is itself being renamed).
            renames = {
                name: self._fresh_name(name) if name in self._used_names else name
                for name in incoming
            }
            schema = _rewrite_refs(schema, renames)
            incoming = {renames[k]: _rewrite_refs(v, renames) for k, v in incoming.items()}
        for def_name, definition in incoming.items():
            self._used_names.add(def_name)
            self.defs.setdefault(def_name, definition)
        return schema

    # -- recursion -------------------------------------------------------------------------

    def _named(self, tp: Any, build: Callable[[Any], Schema]) -> Schema:
        """Inline ``tp`` unless it refers to itself; then emit ``$defs`` + ``$ref``."""
        name = self._ref_names.get(tp)
        if name is not None:
            return {"$ref": f"#/$defs/{name}"}
        if tp in self._stack:
            name = self._fresh_name(str(getattr(tp, "__name__", "Type")))
            self._ref_names[tp] = name
            return {"$ref": f"#/$defs/{name}"}
        self._stack.append(tp)
        try:
            schema = build(tp)
        finally:
            self._stack.pop()
        name = self._ref_names.get(tp)
        if name is None:
            return schema
        self.defs[name] = schema
        return {"$ref": f"#/$defs/{name}"}

    def _fresh_name(self, base: str) -> str:
        base = re.sub(r"[^A-Za-z0-9_.-]", "_", base) or "Type"
        name, counter = base, 1
        while name in self._used_names or name in self.defs:
            counter += 1
            name = f"{base}{counter}"
        self._used_names.add(name)
        return name


# --------------------------------------------------------------------------------------------
# Docstrings (Google style sections, Sphinx fields)

_SECTION_RE = r"^(?P<indent>[ \t]*)(?P<title>[A-Za-z][A-Za-z ]*?)[ \t]*:[ \t]*$"
_PARAM_SECTIONS = frozenset(
    {
        "args",
        "arguments",
        "parameters",
        "params",
        "keyword args",
        "keyword arguments",
        "other parameters",
    }
)
_RETURN_SECTIONS = frozenset({"returns", "return", "yields", "yield"})
_DROPPED_SECTIONS = frozenset({"raises", "raise", "exceptions"})
_ARG_RE = r"^\*{0,2}(?P<name>[A-Za-z_]\w*)[ \t]*(?:\([^)]*\))?[ \t]*:(?P<text>.*)$"
_SPHINX_RE = (
    r"^(?P<indent>[ \t]*):(?P<kind>param|parameter|arg|argument|key|keyword|type|returns?|"
    r"rtype|raises?|except|exception|yields?)\b(?P<rest>[^:]*):(?P<text>.*)$"
)


def _indent(line: str) -> int:
    return len(line) - len(line.lstrip())


def _cleandoc(doc: str) -> str:
    """``inspect.cleandoc``: tabs expanded, the common indentation of the lines after the first
    removed, leading and trailing blank lines dropped."""
    lines = doc.expandtabs().split("\n")
    margins = [len(line) - len(line.lstrip()) for line in lines[1:] if line.lstrip()]
    margin = min(margins, default=0)
    lines = [lines[0].lstrip()] + [line[margin:] for line in lines[1:]]
    while lines and not lines[-1]:
        lines.pop()
    while lines and not lines[0]:
        lines.pop(0)
    return "\n".join(lines)


def _parse_docstring(doc: str | None) -> tuple[str | None, dict[str, str], str | None]:
    """Return (description without sections, parameter descriptions, returns text)."""
    if not doc or not doc.strip():
        return None, {}, None
    cleaned = _cleandoc(doc)
    if "\n" not in cleaned and not cleaned.rstrip().endswith(":") and not cleaned.startswith(":"):
        return cleaned.rstrip(), {}, None  # one line: no section, no field (and no `re` import)
    lines = cleaned.splitlines()
    kept: list[str] = []
    params: dict[str, str] = {}
    returns: list[str] = []
    i = 0
    while i < len(lines):
        line = lines[i]
        section = re.match(_SECTION_RE, line)
        title = section["title"].lower() if section else ""
        if section and title in _PARAM_SECTIONS | _RETURN_SECTIONS | _DROPPED_SECTIONS:
            indent = len(section["indent"])
            j = i + 1
            while j < len(lines) and (not lines[j].strip() or _indent(lines[j]) > indent):
                j += 1
            body = lines[i + 1 : j]
            if title in _PARAM_SECTIONS:
                params.update(_parse_arg_entries(body))
            elif title in _RETURN_SECTIONS:
                returns.extend(b.strip() for b in body if b.strip())
            i = j
            continue
        field = re.match(_SPHINX_RE, line)
        if field:
            indent = len(field["indent"])
            text = [field["text"].strip()]
            j = i + 1
            while j < len(lines) and lines[j].strip() and _indent(lines[j]) > indent:
                text.append(lines[j].strip())
                j += 1
            joined = " ".join(t for t in text if t)
            kind = field["kind"]
            rest = field["rest"].split()
            if kind in ("param", "parameter", "arg", "argument", "key", "keyword") and rest:
                if joined:
                    params[rest[-1]] = joined
            elif kind in ("return", "returns") and joined:
                returns.append(joined)
            i = j
            continue
        kept.append(line)
        i += 1

    kept_text = "\n".join(line.rstrip() for line in kept).strip("\n")
    description = re.sub(r"\n{3,}", "\n\n", kept_text)  # blank lines left by removed sections
    return description or None, params, " ".join(returns) or None


def _parse_arg_entries(body: list[str]) -> dict[str, str]:
    entries: dict[str, list[str]] = {}
    nonblank = [line for line in body if line.strip()]
    if not nonblank:
        return {}
    entry_indent = min(_indent(line) for line in nonblank)
    current: list[str] | None = None
    for line in nonblank:
        match = re.match(_ARG_RE, line.strip()) if _indent(line) == entry_indent else None
        if match:
            current = entries.setdefault(match["name"], [])
            current.append(match["text"].strip())
        elif current is not None:
            current.append(line.strip())
    joined = {name: " ".join(p for p in parts if p) for name, parts in entries.items()}
    return {name: text for name, text in joined.items() if text}


# --------------------------------------------------------------------------------------------
# Values -> JSON data


class _BadValue(Exception):
    __slots__ = ("message", "path")

    def __init__(self, message: str) -> None:
        super().__init__(message)
        self.message = message
        self.path: list[str] = []


def _try_jsonable(value: Any) -> tuple[bool, Any]:
    try:
        return True, _jsonable(value)
    except Exception:  # not JSON data (or a model_dump that failed): no "default" then
        return False, None


def _jsonable(value: Any) -> Any:
    kind = type(value)
    if kind is str or kind is int or kind is bool or value is None:
        return value
    if kind is float:
        if math.isfinite(value):
            return value
        raise _BadValue(f"float {value!r} is not representable in JSON")
    if kind is dict:
        return _mapping_to_json(value)
    if kind is list or kind is tuple:
        return _items_to_json(value)
    return _other_to_json(value, kind)


def _items_to_json(items: Any) -> list[Any]:
    out: list[Any] = []
    append = out.append
    for index, item in enumerate(items):
        kind = type(item)
        if kind is str or kind is int or kind is bool or item is None:
            append(item)
            continue
        try:
            append(_jsonable(item))
        except _BadValue as exc:
            exc.path.append(f"[{index}]")
            raise
    return out


def _mapping_to_json(mapping: Any) -> dict[str, Any]:
    out: dict[str, Any] = {}
    for key, item in mapping.items():
        if type(key) is not str:
            key = _key_to_json(key)
        kind = type(item)
        if kind is str or kind is int or kind is bool or item is None:
            out[key] = item
            continue
        try:
            out[key] = _jsonable(item)
        except _BadValue as exc:
            exc.path.append(f"[{key!r}]")
            raise
    return out


def _key_to_json(key: Any) -> str:
    if isinstance(key, loaded("enum", "Enum")) and isinstance(key.value, str):
        return str.__str__(key.value)
    if isinstance(key, str):
        return str.__str__(key)
    raise _BadValue(
        f"dictionary keys must be str to become JSON object keys, got "
        f"{type(key).__qualname__} key {key!r}"
    )


_FIELD_NAMES: dict[type, tuple[str, ...]] = {}


def _dataclass_field_names(cls: type) -> tuple[str, ...]:
    names = _FIELD_NAMES.get(cls)
    if names is None:
        names = tuple(field.name for field in dataclasses.fields(cls))
        if len(_FIELD_NAMES) < 512:
            _FIELD_NAMES[cls] = names
    return names


def _other_to_json(value: Any, kind: type) -> Any:
    if isinstance(value, loaded("enum", "Enum")):
        return _jsonable(value.value)
    if hasattr(kind, "__dataclass_fields__") and not isinstance(value, type):
        out: dict[str, Any] = {}
        for name in _dataclass_field_names(kind):
            item = getattr(value, name)
            item_kind = type(item)
            if item_kind is str or item_kind is int or item_kind is bool or item is None:
                out[name] = item
                continue
            try:
                out[name] = _jsonable(item)
            except _BadValue as exc:
                exc.path.append(f".{name}")
                raise
        return out
    if callable(getattr(kind, "model_dump", None)) and not isinstance(value, type):
        return _jsonable(value.model_dump(mode="json"))
    if isinstance(value, bool):
        return bool(value)
    if isinstance(value, int):
        return int(value)
    if isinstance(value, float):
        return _jsonable(float(value))
    if isinstance(value, str):
        return str.__str__(value)
    if isinstance(value, (bytes, bytearray, memoryview)):
        raise _BadValue(
            f"{kind.__qualname__} is not JSON data; return binary data directly from the tool "
            "(or as Image/Audio) instead of nesting it in a structured result"
        )
    if isinstance(value, abc.Mapping):
        return _mapping_to_json(value)
    if isinstance(value, abc.Set):
        items = _items_to_json(value)
        try:
            items.sort()
        except TypeError:
            pass
        return items
    if isinstance(value, abc.Sequence):
        return _items_to_json(value)
    text = _stdlib_to_string(value)
    if text is not None:
        return text
    raise _BadValue(f"cannot convert a value of type {kind.__module__}.{kind.__qualname__} to JSON")


def _stdlib_to_string(value: Any) -> str | None:
    # A value of these types can only exist if its module was imported, so look them up in
    # sys.modules instead of importing them here.
    datetime = sys.modules.get("datetime")
    if datetime is not None and isinstance(value, (datetime.date, datetime.time)):
        return str(value.isoformat())
    for module_name, class_name in (
        ("decimal", "Decimal"),
        ("uuid", "UUID"),
        ("pathlib", "PurePath"),
    ):
        module = sys.modules.get(module_name)
        cls = getattr(module, class_name, None) if module is not None else None
        if isinstance(cls, type) and isinstance(value, cls):
            return str(value)
    return None
