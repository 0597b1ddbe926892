"""One tool as the binding receives it: its shape, read from the callable, and its options.

``describe(fn)`` reads the signature, the type hints and the docstring of ``fn`` once, at
registration, and returns a ``ToolShape``: the tool's name, its description, the JSON Schemas
of its arguments and result, and what the server needs to call it. The result's schema
follows MCP's ``outputSchema``: an object schema, or ``{"result": ...}`` around any other;
none for what the server sends as content (text, media, ``ToolResult``).

``ToolOptions`` holds what the author chose in ``@server.tool(...)``. The binding reads both
by attribute (``mcpline._core.Server.add_tool``).
"""

from __future__ import annotations

from mcpline import _core
from mcpline._constraints import apply_metadata, field_default
from mcpline._docstrings import parse_docstring
from mcpline._introspect import (
    EMPTY,
    NONE_TYPE,
    CallableInfo,
    annotated_description,
    format_annotation,
    get_args,
    get_origin,
    is_plain_class,
    resolve,
    signature,
    union_origins,
)
from mcpline._jsonvalue import try_jsonable
from mcpline._results import Audio, Image, ToolResult
from mcpline._schema import Builder, Unsupported
from mcpline._startup import TYPE_CHECKING, Value, loaded

if TYPE_CHECKING:
    from collections.abc import Callable
    from typing import Any, Literal

    OutputMode = Literal["error", "result", "off"]
    Schema = dict[str, Any]

__all__ = ["ToolOptions", "ToolShape", "describe"]


class ToolOptions(Value):
    """The options of ``@server.tool(...)``, one field per keyword (see ``Server.tool``);
    ``strict`` is already resolved against the server's default."""

    __slots__ = (
        "description",
        "destructive",
        "icons",
        "idempotent",
        "name",
        "open_world",
        "output",
        "read_only",
        "strict",
        "timeout",
        "title",
    )
    name: str | None
    title: str | None
    description: str | None
    read_only: bool | None
    destructive: bool | None
    idempotent: bool | None
    open_world: bool | None
    strict: bool
    output: OutputMode | None
    timeout: float | None
    icons: list[dict[str, Any]] | None


def runner_options(
    name: str, *, title: str | None = None, icons: list[dict[str, Any]] | None = None
) -> ToolOptions:
    """The options of what runs a prompt, a resource read or the completer: a tool's defaults
    (strict arguments, the server's output mode, no time limit)."""
    return ToolOptions(
        name=name,
        title=title,
        description=None,
        read_only=None,
        destructive=None,
        idempotent=None,
        open_world=None,
        strict=True,
        output=None,
        timeout=None,
        icons=icons,
    )


def icon_list(icons: Any) -> list[dict[str, Any]] | None:
    """``icons=`` as MCP ``Icon`` objects: each a URL (``https:`` or a ``data:`` URI) or a dict
    with ``"src"`` and optionally ``"mimeType"``, ``"sizes"`` (``["48x48"]``) and ``"theme"``
    (``"light"`` or ``"dark"``). Sent to clients from 2025-11-25."""
    if icons is None:
        return None
    items = [icons] if isinstance(icons, (str, dict)) else list(icons)
    listed = []
    for icon in items:
        if isinstance(icon, str):
            icon = {"src": icon}
        if not isinstance(icon, dict) or not isinstance(icon.get("src"), str):
            raise TypeError(
                'an icon is a URL (https: or data:) or a dict with "src" (and optionally '
                f'"mimeType", "sizes", "theme"), not {icon!r}'
            )
        listed.append(dict(icon))
    return listed


class ToolShape(Value):
    """Everything the server needs to list and call one tool.

    ``input_schema`` and ``output_schema`` are built afresh by each ``describe`` call;
    ``wraps_output`` says that the tool's return value must be sent as ``{"result": value}``
    because its schema is not an object schema; ``output_type`` names the declared result type
    (for the error about a result that breaks it). ``param_types`` holds the resolved annotation
    of each parameter, in signature order (``object`` where there is none); ``field_defaults``
    what gives the value of a parameter whose default is a pydantic ``Field(...)`` when the
    argument is left out (the function's own default is then the ``FieldInfo`` itself).
    """

    __slots__ = (
        "context_param",
        "description",
        "field_defaults",
        "input_schema",
        "is_async",
        "name",
        "output_schema",
        "output_type",
        "param_types",
        "wraps_output",
    )
    name: str
    description: str | None
    input_schema: dict[str, Any]
    output_schema: dict[str, Any] | None
    output_type: str | None
    wraps_output: bool
    context_param: str | None
    is_async: bool
    param_types: dict[str, Any]
    field_defaults: dict[str, Callable[[], Any]]

    @property
    def param_names(self) -> tuple[str, ...]:
        """The parameters' names in signature order."""
        return tuple(self.param_types)


def describe(
    fn: Callable[..., Any],
    *,
    name: str | None = None,
    description: str | None = None,
    context_types: tuple[type, ...] = (),
    returns: bool = True,
) -> ToolShape:
    """Describe ``fn`` as an MCP tool (``returns=False``: its result is not described, as for a
    prompt, whose return value is messages).

    ``name`` defaults to ``fn.__name__`` and must be 1-64 characters of ``[A-Za-z0-9_.-]``
    (``ValueError`` otherwise). ``description`` defaults to the docstring without its
    ``Args:``/``Returns:``/``Raises:`` sections; per-parameter descriptions come from the
    ``Args:`` section (or Sphinx ``:param x:`` fields) and from ``Annotated[T, "text"]``, which
    wins. A parameter annotated with one of ``context_types`` (possibly ``Optional``) receives
    the request context and is left out of the schema.

    Raises ``TypeError`` (naming the function, the parameter and the annotation) for
    generator functions (sync or async), ``*args``, ``**kwargs``, positional-only parameters
    and annotations that have no JSON Schema equivalent.
    """
    info = CallableInfo(fn)
    tool_name = info.name if name is None else name
    if not isinstance(tool_name, str) or not _core.is_valid_tool_name(tool_name):
        raise ValueError(
            f"invalid tool name {tool_name!r}: a tool name must be 1 to 64 characters, each a "
            "letter (A-Z, a-z), a digit, '_', '.' or '-'"
        )
    label = info.label
    if info.yields:
        raise TypeError(
            f"{label} is a generator function: a tool answers once, with its whole result; "
            "return a list (or a str) instead of yielding items, and report progress with "
            "ctx.progress()"
        )
    try:
        parameters, return_annotation = signature(fn)
    except (TypeError, ValueError) as exc:
        raise TypeError(f"{label}: cannot read the signature: {exc}") from exc

    doc_summary, doc_params, doc_returns = parse_docstring(info.doc)
    builder = Builder(output=False, globalns=info.globalns)
    properties: dict[str, Schema] = {}
    param_types: dict[str, Any] = {}
    required: list[str] = []
    field_defaults: dict[str, Callable[[], Any]] = {}
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
        annotation = resolve(
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
        except Unsupported as exc:
            raise TypeError(
                f"{label}: parameter {pname!r} has unsupported annotation "
                f"{format_annotation(annotation)}: {exc}"
            ) from None
        defaults = () if param.default is EMPTY else (param.default,)
        field = field_default(param.default)
        if field is not None:  # `x: int = Field(3, ge=0)`
            schema = apply_metadata(schema, [field.field])
            if field.make is not None:
                field_defaults[pname] = field.make
            defaults = field.fixed
        field_text = getattr(field.field, "description", None) if field is not None else None
        text = annotated_description(annotation) or field_text or doc_params.get(pname)
        if text:
            schema = {**schema, "description": text}
        if param.default is EMPTY or (field is not None and field.make is None):
            required.append(pname)
        elif defaults:
            ok, value = try_jsonable(defaults[0])
            if ok:
                schema = {**schema, "default": value}
        properties[pname] = schema
        param_types[pname] = object if annotation is EMPTY else annotation

    input_schema: Schema = {"type": "object", "properties": properties}
    if required:
        input_schema["required"] = required
    input_schema["additionalProperties"] = False
    if builder.defs:
        input_schema["$defs"] = builder.defs

    result_schema: Schema | None = None
    wraps = False
    if returns:
        declared = resolve(return_annotation, info.globalns, label, "the return annotation", ())
        try:
            result_schema, wraps = _output_schema(declared, info.globalns, doc_returns)
        except Unsupported as exc:
            raise TypeError(
                f"{label}: unsupported return annotation {format_annotation(declared)}: {exc}"
            ) from None
    return ToolShape(
        name=tool_name,
        description=description if description is not None else doc_summary,
        input_schema=input_schema,
        output_schema=result_schema,
        output_type=None if result_schema is None else format_annotation(declared),
        wraps_output=wraps,
        context_param=context_param,
        is_async=info.is_async,
        param_types=param_types,
        field_defaults=field_defaults,
    )


def _is_context(annotation: Any, context_types: tuple[type, ...]) -> bool:
    if not context_types:
        return False
    if is_plain_class(annotation):
        return issubclass(annotation, context_types)
    if get_origin(annotation) is loaded("typing", "Annotated"):
        annotation = get_args(annotation)[0]
    if get_origin(annotation) in union_origins():
        members = [a for a in get_args(annotation) if a is not NONE_TYPE]
        if len(members) != 1:
            return False
        annotation = members[0]
    return isinstance(annotation, type) and issubclass(annotation, context_types)


# Return types whose values the server turns into content blocks itself (text, base64 media,
# a hand-built result): they get no output schema.
_CONTENT_TYPES: tuple[type, ...] = (bytes, bytearray, memoryview, Image, Audio, ToolResult)


def _output_schema(
    annotation: Any, globalns: dict[str, Any], doc_returns: str | None
) -> tuple[Schema | None, bool]:
    """The ``outputSchema`` for a resolved return annotation and whether results must be sent
    as ``{"result": value}`` (when the type's schema is not an object schema). ``None`` for
    types the server sends as content: ``str``, ``None``, binary and media, ``ToolResult``,
    ``Any``. ``doc_returns`` (the docstring's ``Returns:`` text) describes a wrapped result.
    Raises ``Unsupported``."""
    if annotation is EMPTY or _has_no_output_schema(annotation):
        return None, False
    builder = Builder(output=True, globalns=globalns)
    schema = builder.schema(annotation)
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
    origin = get_origin(annotation)
    if origin is loaded("typing", "Annotated"):
        return _has_no_output_schema(get_args(annotation)[0])
    if origin in union_origins():
        return all(_has_no_output_schema(a) for a in get_args(annotation))
    if annotation is None or annotation is NONE_TYPE or annotation is str:
        return True
    if annotation is object or annotation is loaded("typing", "Any"):
        return True
    if any(annotation is loaded("typing", form) for form in ("LiteralString", "NoReturn", "Never")):
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
