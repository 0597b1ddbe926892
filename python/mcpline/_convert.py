"""Turn validated JSON arguments back into the Python types a tool's signature asks for.

Only parameters annotated with an Enum, a dataclass, a pydantic model, a tuple or a set, one of
the standard-library types of ``_stdtypes`` (dates, UUIDs, paths, bytes ...), or containers of
those, need it; tools with plain JSON parameters are called directly. A value the type refuses
(``"yesterday"`` for a ``date``) is an error result naming the argument.
"""

from __future__ import annotations

import dataclasses
import enum
import types
import typing
from collections import abc
from collections.abc import Callable
from typing import Any

from mcpline._results import ToolError
from mcpline._stdtypes import parser_for

Converter = Callable[[Any], Any]


def converter_for(annotation: Any) -> Converter | None:
    """A function converting JSON data to ``annotation``'s type, or None when none is needed."""
    origin = typing.get_origin(annotation)
    args = typing.get_args(annotation)
    if origin is typing.Annotated:
        return converter_for(args[0])
    if origin in (typing.Union, types.UnionType):
        parts = [(arg, converter_for(arg)) for arg in args if arg is not type(None)]
        if not any(conv for _, conv in parts):
            return None
        if len(parts) == 1:
            conv = parts[0][1]
            assert conv is not None
            return lambda v: None if v is None else conv(v)
        return _union(parts)
    if isinstance(annotation, type):
        parse = parser_for(annotation)
        if parse is not None:
            return parse
        if issubclass(annotation, enum.Enum):
            return annotation
        if dataclasses.is_dataclass(annotation):
            return _dataclass(annotation)
        if hasattr(annotation, "model_validate"):
            return annotation.model_validate  # type: ignore[no-any-return]
    if origin in (list, abc.Sequence, abc.MutableSequence) and args:
        element = converter_for(args[0])
        if element is None:
            return None
        convert_element = element
        return lambda v: [convert_element(x) for x in v]
    if origin in (set, frozenset, abc.Set, abc.MutableSet):
        item = converter_for(args[0]) if args else None
        kind = frozenset if origin is frozenset else set
        return lambda v: kind(item(x) for x in v) if item else kind(v)
    if origin is tuple:
        if len(args) == 2 and args[1] is Ellipsis:
            item = converter_for(args[0])
            return lambda v: tuple(item(x) for x in v) if item else tuple(v)
        items = [converter_for(a) for a in args]
        return lambda v: tuple(c(x) if c else x for c, x in zip(items, v, strict=False))
    if origin in (dict, abc.Mapping, abc.MutableMapping) and len(args) == 2:
        value = converter_for(args[1])
        return None if value is None else (lambda v: {k: value(x) for k, x in v.items()})
    return None


def _union(parts: list[tuple[Any, Converter | None]]) -> Converter:
    def convert(value: Any) -> Any:
        if value is None:
            return None
        for _, conv in parts:
            if conv is None:
                continue
            try:
                return conv(value)
            except (TypeError, ValueError, KeyError):
                continue
        return value

    return convert


def _dataclass(cls: type) -> Converter:
    hints = typing.get_type_hints(cls, include_extras=True)
    fields = {
        f.name: converter_for(hints.get(f.name, Any)) for f in dataclasses.fields(cls) if f.init
    }

    def convert(value: Any) -> Any:
        if not isinstance(value, dict):
            return value
        converted = {}
        for key, item in value.items():
            conv = fields.get(key)
            converted[key] = conv(item) if conv is not None else item
        return cls(**converted)

    return convert


def wrap_callable(
    fn: Callable[..., Any],
    converters: dict[str, Converter],
    is_async: bool,
    defaults: dict[str, Callable[[], Any]] | None = None,
) -> Callable[..., Any]:
    """``fn`` with its arguments converted first and the values of ``defaults`` filled in for
    arguments left out (same sync/async nature as ``fn``)."""
    fill = defaults or {}
    if not converters and not fill:
        return fn

    def convert(kwargs: dict[str, Any]) -> dict[str, Any]:
        for name, conv in converters.items():
            if name in kwargs:
                try:
                    kwargs[name] = conv(kwargs[name])
                except ValueError as exc:  # a value the schema allows but the type refuses
                    raise ToolError(f'argument "{name}": {exc}') from None
        for name, make in fill.items():
            if name not in kwargs:
                kwargs[name] = make()
        return kwargs

    if is_async:

        async def async_call(**kwargs: Any) -> Any:
            return await fn(**convert(kwargs))

        return async_call

    def call(**kwargs: Any) -> Any:
        return fn(**convert(kwargs))

    return call
