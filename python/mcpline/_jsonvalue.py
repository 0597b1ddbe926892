"""Python values as plain JSON data: a tool's structured result and the defaults in a schema.

``to_jsonable`` is what the binding calls for a return value its own fast conversion does not
cover (dataclasses, enums, pydantic models, sets, dates ...). The standard-library classes whose
values become strings are in ``_stdtypes``, with their schemas.
"""

from __future__ import annotations

from mcpline._startup import TYPE_CHECKING, abc, dataclasses, isfinite, loaded
from mcpline._stdtypes import format_value

if TYPE_CHECKING:
    from typing import Any

__all__ = ["to_jsonable", "try_jsonable"]

# Values of these exact classes are JSON data as they are.
_AS_IS = frozenset({str, int, bool, type(None)})


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
    * ``datetime.datetime``/``date``/``time`` become ``isoformat()`` strings, ``timedelta`` an
      ISO 8601 duration (``P1DT2H``); ``decimal.Decimal`` becomes ``str(value)`` (exact, no
      float rounding: ``"1.10"``, ``"NaN"``); ``uuid.UUID`` and ``pathlib.PurePath`` become
      ``str(value)``; ``bytes``, ``bytearray`` and ``memoryview`` become base64 text.
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


def try_jsonable(value: Any) -> tuple[bool, Any]:
    """``(True, to_jsonable(value))``, or ``(False, None)`` when ``value`` is not JSON data."""
    try:
        return True, _jsonable(value)
    except Exception:  # not JSON data (or a model_dump that failed)
        return False, None


class _BadValue(Exception):
    """Not JSON data; ``path`` collects where, innermost first, as the error propagates."""

    __slots__ = ("message", "path")

    def __init__(self, message: str) -> None:
        super().__init__(message)
        self.message = message
        self.path: list[str] = []


def _jsonable(value: Any) -> Any:
    kind = type(value)
    if kind in _AS_IS:
        return value
    if kind is float:
        if isfinite(value):
            return value
        raise _BadValue(f"float {value!r} is not representable in JSON")
    if kind is dict:
        return _mapping_to_json(value)
    if kind is list or kind is tuple:
        return _items_to_json(value)
    return _other_to_json(value, kind)


def _items_to_json(items: Any) -> list[Any]:
    out: list[Any] = []
    for index, item in enumerate(items):
        try:
            out.append(_jsonable(item))
        except _BadValue as exc:
            exc.path.append(f"[{index}]")
            raise
    return out


def _mapping_to_json(mapping: Any) -> dict[str, Any]:
    out: dict[str, Any] = {}
    for key, item in mapping.items():
        if type(key) is not str:
            key = _key_to_json(key)
        try:
            out[key] = _jsonable(item)
        except _BadValue as exc:
            exc.path.append(f"[{key!r}]")
            raise
    return out


def _dataclass_to_json(value: Any, kind: type) -> dict[str, Any]:
    out: dict[str, Any] = {}
    for name in _dataclass_field_names(kind):
        try:
            out[name] = _jsonable(getattr(value, name))
        except _BadValue as exc:
            exc.path.append(f".{name}")
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
        return _dataclass_to_json(value, kind)
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
        return format_value(value)  # base64 text, not a sequence of ints
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
    text = format_value(value)
    if text is not None:
        return text
    raise _BadValue(f"cannot convert a value of type {kind.__module__}.{kind.__qualname__} to JSON")
