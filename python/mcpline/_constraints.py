"""Constraints written as type metadata, as JSON Schema keywords: ``annotated_types``
(``Gt``, ``Ge``, ``Lt``, ``Le``, ``Interval``, ``MultipleOf``, ``MinLen``, ``MaxLen``, ``Len``),
pydantic's ``Field(...)`` (its limits, ``pattern``, ``description``, ``title``, ``examples``,
``json_schema_extra`` and, as a parameter's default, its ``default``/``default_factory``) and
pydantic's ``StringConstraints``.

Objects are recognised by their attributes and class names; neither library is imported, so
``annotated_types`` works without pydantic. The core's validator enforces the keywords before a
tool runs.
"""

from __future__ import annotations

from mcpline._startup import TYPE_CHECKING

if TYPE_CHECKING:
    from collections.abc import Callable, Iterable
    from typing import Any

    Schema = dict[str, Any]

__all__ = ["FieldDefault", "apply_metadata", "field_default"]

_NUMBER_LIMITS = {
    "gt": "exclusiveMinimum",
    "ge": "minimum",
    "lt": "exclusiveMaximum",
    "le": "maximum",
    "multiple_of": "multipleOf",
}
_LENGTH_KEYWORDS = {
    "string": ("minLength", "maxLength"),
    "array": ("minItems", "maxItems"),
    "object": ("minProperties", "maxProperties"),
}


def _is_field_info(meta: Any) -> bool:
    return type(meta).__name__ == "FieldInfo" and hasattr(meta, "metadata")


def _is_undefined(value: Any) -> bool:
    return value is Ellipsis or type(value).__name__ == "PydanticUndefinedType"


def apply_metadata(schema: Schema, metadata: Iterable[Any]) -> Schema:
    """``schema`` with the constraints and descriptions ``metadata`` carries."""
    for meta in metadata:
        if _is_field_info(meta):
            schema = apply_metadata(schema, meta.metadata)
            schema = _field_annotations(schema, meta)
        else:
            schema = _constrain(schema, meta)
    return schema


def _field_annotations(schema: Schema, field: Any) -> Schema:
    out = dict(schema)
    for attribute, keyword in (("title", "title"), ("description", "description")):
        value = getattr(field, attribute, None)
        if isinstance(value, str) and value:
            out[keyword] = value
    examples = getattr(field, "examples", None)
    if isinstance(examples, list) and examples:
        from mcpline._jsonvalue import try_jsonable

        ok, value = try_jsonable(examples)
        if ok:
            out["examples"] = value
    extra = getattr(field, "json_schema_extra", None)
    if isinstance(extra, dict):
        out.update(extra)
    elif callable(extra):
        extra(out)
    return out


def _constrain(schema: Schema, meta: Any) -> Schema:
    """Applies one metadata object's limits (``Gt(0)``, ``Len(1, 5)``, ...) to ``schema`` or,
    for a union, to each member they fit (``str | None`` with ``max_length``)."""
    limits = {
        name: value
        for name in (*_NUMBER_LIMITS, "min_length", "max_length", "pattern")
        if (value := getattr(meta, name, None)) is not None
    }
    if not limits:
        return schema
    members = schema.get("anyOf")
    if isinstance(members, list):
        return {**schema, "anyOf": [_limit(m, limits) for m in members]}
    return _limit(schema, limits)


def _limit(schema: Schema, limits: dict[str, Any]) -> Schema:
    kind = schema.get("type")
    out = dict(schema)
    for name, value in limits.items():
        if name in _NUMBER_LIMITS and kind in ("integer", "number"):
            out[_NUMBER_LIMITS[name]] = value
        elif name in ("min_length", "max_length") and kind in _LENGTH_KEYWORDS:
            low, high = _LENGTH_KEYWORDS[kind]
            out[low if name == "min_length" else high] = value
        elif name == "pattern" and kind == "string":
            out["pattern"] = getattr(value, "pattern", value)  # a compiled re.Pattern too
    return out


class FieldDefault:
    """A parameter whose default is ``Field(...)``: what the schema and the call need."""

    __slots__ = ("field", "fixed", "make")

    def __init__(
        self, field: Any, make: Callable[[], Any] | None, fixed: tuple[Any, ...] = ()
    ) -> None:
        self.field = field  # the FieldInfo (its constraints and descriptions)
        self.make = make  # what gives the value when the argument is left out; None: required
        self.fixed = fixed  # (value,) for a plain default (shown in the schema); () otherwise


def field_default(default: Any) -> FieldDefault | None:
    """``default`` read as a pydantic ``Field(...)``, or None when it is an ordinary value."""
    if not _is_field_info(default):
        return None
    factory = getattr(default, "default_factory", None)
    if callable(factory):
        return FieldDefault(default, factory)
    value = getattr(default, "default", Ellipsis)
    if _is_undefined(value):
        return FieldDefault(default, None)
    return FieldDefault(default, lambda: value, (value,))
