"""Standard-library value types that travel as JSON strings: their schemas, how an argument
is parsed into one and how a result is written.

``datetime``, ``date``, ``time``, ``timedelta``, ``UUID``, ``Decimal``, ``PurePath`` (and
subclasses such as ``Path``) and ``bytes``. Arguments carry the JSON Schema ``format`` a client
can check (``date-time``, ``date``, ``time``, ``duration``, ``uuid``) or ``contentEncoding:
base64``; a ``Decimal`` argument may also be a JSON number. Results carry a ``format`` only
where every value satisfies it: a naive ``datetime`` or ``time`` has no UTC offset, so it is not
an RFC 3339 ``date-time``.
"""

from __future__ import annotations

from mcpline._startup import TYPE_CHECKING, loaded, re

if TYPE_CHECKING:
    from collections.abc import Callable
    from typing import Any

    Schema = dict[str, Any]

__all__ = ["format_value", "parser_for", "schema_for"]

# (module, class, argument schema, result schema). Subclasses come before their base
# (`datetime` is a `date`).
_TABLE: tuple[tuple[str, str, Schema, Schema], ...] = (
    ("datetime", "datetime", {"format": "date-time"}, {}),
    ("datetime", "date", {"format": "date"}, {"format": "date"}),
    ("datetime", "time", {"format": "time"}, {}),
    ("datetime", "timedelta", {"format": "duration"}, {"format": "duration"}),
    ("uuid", "UUID", {"format": "uuid"}, {"format": "uuid"}),
    ("pathlib", "PurePath", {}, {}),
    ("builtins", "bytes", {"contentEncoding": "base64"}, {"contentEncoding": "base64"}),
)


def _row(tp: type) -> tuple[str, str, Schema, Schema] | None:
    for row in _TABLE:
        module, name = row[0], row[1]
        cls = bytes if module == "builtins" else loaded(module, name)
        if isinstance(cls, type) and issubclass(tp, cls):
            return row
    return None


def schema_for(tp: type, *, output: bool) -> Schema | None:
    """The schema of values of class ``tp`` (an argument's, or a result's), or None."""
    if issubclass(tp, (bytearray, memoryview)):
        return {"type": "string", "contentEncoding": "base64"}
    if issubclass(tp, loaded("decimal", "Decimal")):
        if output:
            return {"type": "string"}  # exact: str(Decimal("1.10")) == "1.10"
        return {"anyOf": [{"type": "number"}, {"type": "string"}]}
    row = _row(tp)
    if row is None:
        return None
    return {"type": "string", **(row[3] if output else row[2])}


def parser_for(tp: type) -> Callable[[Any], Any] | None:
    """What turns a validated JSON argument into a ``tp`` (raising ``ValueError`` with a
    message that says what was expected), or None when ``tp`` is not one of these types."""
    if issubclass(tp, (bytes, bytearray)):
        return lambda value: tp(_base64(value))
    if issubclass(tp, loaded("decimal", "Decimal")):
        return lambda value: _decimal(tp, value)
    row = _row(tp)
    if row is None:
        return None
    module, name = row[0], row[1]
    if name == "timedelta":
        return _duration
    if module == "datetime":
        return lambda value: _iso(tp, value)
    if name == "UUID":
        example = "a UUID such as 1b4e28ba-2fa1-11d2-883f-0016d3cca427"
        return lambda value: _expect(tp, value, example)
    return tp  # PurePath and its subclasses accept any string


def format_value(value: Any) -> str | None:
    """A result value of one of these types as its JSON string, or None for other values."""
    if isinstance(value, (bytes, bytearray, memoryview)):
        import base64

        return base64.b64encode(value).decode("ascii")
    if isinstance(value, loaded("datetime", "timedelta")):
        return _iso_duration(value)
    if isinstance(value, (loaded("datetime", "date"), loaded("datetime", "time"))):
        return str(value.isoformat())
    exact = (loaded("decimal", "Decimal"), loaded("uuid", "UUID"), loaded("pathlib", "PurePath"))
    return str(value) if isinstance(value, exact) else None


def _expect(tp: type, value: Any, what: str) -> Any:
    try:
        return tp(value)
    except (TypeError, ValueError):
        raise ValueError(f"{value!r} is not {what}") from None


def _iso(tp: Any, value: str) -> Any:
    text = value[:-1] + "+00:00" if value.endswith(("Z", "z")) else value  # 3.10 needs this
    try:
        return tp.fromisoformat(text)
    except ValueError:
        examples = {
            "datetime": "an ISO 8601 date-time such as 2026-12-03T14:30:00Z",
            "date": "an ISO 8601 date such as 2026-12-03",
            "time": "an ISO 8601 time such as 14:30:00",
        }
        what = next((t for n, t in examples.items() if issubclass(tp, loaded("datetime", n))), "")
        raise ValueError(f"{value!r} is not {what}") from None


def _decimal(tp: Any, value: Any) -> Any:
    # A JSON number arrives as int or float; its shortest repr is the number that was sent.
    text = repr(value) if isinstance(value, float) else str(value)
    try:
        return tp(text)
    except ArithmeticError:  # decimal.InvalidOperation
        raise ValueError(f"{value!r} is not a decimal number such as 12.50") from None


def _base64(value: str) -> bytes:
    import base64
    import binascii

    try:
        return base64.b64decode(value, validate=True)
    except (binascii.Error, ValueError):
        raise ValueError(f"{_short(value)} is not base64-encoded data") from None


_DURATION = (
    r"(?P<sign>-)?P(?!$)(?:(?P<weeks>\d+(?:\.\d+)?)W)?(?:(?P<days>\d+(?:\.\d+)?)D)?"
    r"(?:T(?!$)(?:(?P<hours>\d+(?:\.\d+)?)H)?(?:(?P<minutes>\d+(?:\.\d+)?)M)?"
    r"(?:(?P<seconds>\d+(?:\.\d+)?)S)?)?"
)


def _duration(value: str) -> Any:
    """An ISO 8601 duration without years or months (their length varies): ``P1DT2H30M``,
    ``PT0.5S``, ``-PT10M``, ``P2W``."""
    match = re.fullmatch(_DURATION, value)
    if match is None:
        raise ValueError(
            f"{_short(value)} is not an ISO 8601 duration such as PT1H30M or P2DT12H "
            "(years and months are not accepted: their length varies)"
        )
    from datetime import timedelta

    parts = {k: float(v) for k, v in match.groupdict().items() if v and k != "sign"}
    result = timedelta(**parts)
    return -result if match.group("sign") else result


def _iso_duration(delta: Any) -> str:
    total = delta.total_seconds()
    sign = "-" if total < 0 else ""
    micros = abs(delta.days * 86_400_000_000 + delta.seconds * 1_000_000 + delta.microseconds)
    days, rest = divmod(micros, 86_400_000_000)
    hours, rest = divmod(rest, 3_600_000_000)
    minutes, rest = divmod(rest, 60_000_000)
    seconds, micro = divmod(rest, 1_000_000)
    out = f"{sign}P{days}D" if days else f"{sign}P"
    clock = ""
    if hours:
        clock += f"{hours}H"
    if minutes:
        clock += f"{minutes}M"
    if seconds or micro or not (days or clock):
        clock += f"{seconds}.{micro:06d}".rstrip("0").rstrip(".") + "S"
    return out + ("T" + clock if clock else "")


def _short(value: Any) -> str:
    text = repr(value)
    return text if len(text) <= 60 else text[:57] + "..."
