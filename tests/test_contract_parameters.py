"""Parameter metadata and rich types: pydantic ``Field(...)`` and ``annotated_types``
constraints appear in the schema and are enforced before the tool runs; dates, durations,
UUIDs, decimals, paths and bytes arrive as their Python types and go back as JSON strings.
"""

from __future__ import annotations

import datetime
import decimal
import subprocess
import sys
import uuid
from pathlib import Path
from typing import Annotated, Any

import annotated_types as at
import pytest
from mcpline import Server
from mcpline.testing import Client
from pydantic import Field

server = Server("parameters")
CALLED: list[dict[str, Any]] = []


@server.tool
def pick(
    n: Annotated[int, Field(ge=1, le=5, description="How many.")],
    k: int = Field(3, ge=0, description="Offset."),
    name: Annotated[str, at.MaxLen(4)] = "ab",
    tags: list[str] = Field(default_factory=list, max_length=2),  # noqa: B008 (the idiom)
    code: str | None = Field(None, pattern=r"^[A-Z]+$"),
    ratio: Annotated[float, at.Interval(gt=0, lt=1)] = 0.5,
    step: Annotated[int, at.MultipleOf(5)] = 5,
) -> str:
    """Records what it was given."""
    CALLED.append({"n": n, "k": k, "name": name, "tags": tags, "code": code, "ratio": ratio})
    return "ok"


@server.tool
def shift(
    when: datetime.datetime,
    day: datetime.date,
    at_time: datetime.time,
    span: datetime.timedelta,
    ident: uuid.UUID,
    amount: decimal.Decimal,
    path: Path,
    blob: bytes,
) -> dict[str, Any]:
    """Returns the values with their Python types, one day later where that means something."""
    return {
        "types": [type(v).__name__ for v in (when, day, at_time, span, ident, amount, path, blob)],
        "when": when + datetime.timedelta(days=1),
        "day": day + datetime.timedelta(days=1),
        "at_time": at_time,
        "span": span * 2,
        "ident": ident,
        "amount": amount * 2,
        "path": path / "child",
        "blob": blob + b"!",
    }


@server.tool
def next_day(day: datetime.date) -> datetime.date:
    """A date result."""
    return day + datetime.timedelta(days=1)


client = Client(server)


def schema_of(tool: str) -> dict[str, Any]:
    return next(t for t in client.list_tools() if t["name"] == tool)["inputSchema"]


# -- constraints -------------------------------------------------------------------------------


def test_field_and_annotated_types_limits_appear_in_the_schema() -> None:
    props = schema_of("pick")["properties"]
    assert props["n"] == {"type": "integer", "minimum": 1, "maximum": 5, "description": "How many."}
    assert props["k"] == {"type": "integer", "minimum": 0, "description": "Offset.", "default": 3}
    assert props["name"] == {"type": "string", "maxLength": 4, "default": "ab"}
    assert props["tags"] == {"type": "array", "items": {"type": "string"}, "maxItems": 2}
    assert props["code"]["anyOf"][0] == {"type": "string", "pattern": "^[A-Z]+$"}
    assert props["ratio"]["exclusiveMinimum"] == 0 and props["ratio"]["exclusiveMaximum"] == 1
    assert props["step"]["multipleOf"] == 5
    assert schema_of("pick")["required"] == ["n"]


@pytest.mark.parametrize(
    ("arguments", "problem"),
    [
        ({"n": 9}, 'argument "n": 9 is greater than the maximum of 5'),
        ({"n": 2, "k": -1}, 'argument "k": -1 is less than the minimum of 0'),
        ({"n": 2, "name": "abcde"}, 'argument "name": "abcde" has 5 characters'),
        ({"n": 2, "tags": ["a", "b", "c"]}, 'argument "tags": has 3 items'),
        ({"n": 2, "code": "ab"}, 'argument "code": "ab" does not match the pattern'),
        ({"n": 2, "ratio": 1}, 'argument "ratio": 1 must be less than 1'),
        ({"n": 2, "step": 7}, 'argument "step": 7 is not a multiple of 5'),
    ],
)
def test_a_value_outside_its_limits_is_refused_before_the_tool_runs(
    arguments: dict[str, Any], problem: str
) -> None:
    CALLED.clear()
    result = client.call("pick", **arguments)
    assert result.is_error
    assert problem in result.text
    assert CALLED == []


def test_field_defaults_reach_the_tool_as_values_not_field_objects() -> None:
    CALLED.clear()
    assert client.call("pick", n=2).text == "ok"
    assert CALLED == [{"n": 2, "k": 3, "name": "ab", "tags": [], "code": None, "ratio": 0.5}]
    client.call("pick", n=2)
    assert CALLED[0]["tags"] is not CALLED[1]["tags"]  # default_factory runs per call


def test_annotated_types_constraints_do_not_import_pydantic() -> None:
    code = (
        "import sys\n"
        "from typing import Annotated\n"
        "import annotated_types as at\n"
        "from mcpline import Server\n"
        "s = Server('x')\n"
        "@s.tool\n"
        "def f(n: Annotated[int, at.Gt(0)]) -> int:\n"
        "    return n\n"
        "assert 'pydantic' not in sys.modules, 'pydantic was imported'\n"
    )
    subprocess.run([sys.executable, "-c", code], check=True, timeout=60)


# -- standard-library types ----------------------------------------------------------------------


def test_standard_library_types_have_standard_formats() -> None:
    props = schema_of("shift")["properties"]
    assert props["when"] == {"type": "string", "format": "date-time"}
    assert props["day"] == {"type": "string", "format": "date"}
    assert props["at_time"] == {"type": "string", "format": "time"}
    assert props["span"] == {"type": "string", "format": "duration"}
    assert props["ident"] == {"type": "string", "format": "uuid"}
    assert props["amount"] == {"anyOf": [{"type": "number"}, {"type": "string"}]}
    assert props["path"] == {"type": "string"}
    assert props["blob"] == {"type": "string", "contentEncoding": "base64"}


def test_standard_library_values_are_converted_both_ways() -> None:
    result = client.call(
        "shift",
        when="2026-12-03T10:00:00Z",
        day="2026-12-03",
        at_time="09:30:00",
        span="P1DT2H30M",
        ident="1b4e28ba-2fa1-11d2-883f-0016d3cca427",
        amount="12.50",
        path="/srv/data",
        blob="aGVsbG8=",
    )
    assert not result.is_error, result.text
    assert result.structured == {
        "types": ["datetime", "date", "time", "timedelta", "UUID", "Decimal", "PosixPath", "bytes"]
        if sys.platform != "win32"
        else ["datetime", "date", "time", "timedelta", "UUID", "Decimal", "WindowsPath", "bytes"],
        "when": "2026-12-04T10:00:00+00:00",
        "day": "2026-12-04",
        "at_time": "09:30:00",
        "span": "P2DT5H",
        "ident": "1b4e28ba-2fa1-11d2-883f-0016d3cca427",
        "amount": "25.00",
        "path": str(Path("/srv/data") / "child"),
        "blob": "aGVsbG8h",
    }


def test_a_date_result_is_wrapped_with_its_format() -> None:
    tool = next(t for t in client.list_tools() if t["name"] == "next_day")
    assert tool["outputSchema"]["properties"]["result"] == {"type": "string", "format": "date"}
    assert client.call("next_day", day="2026-12-31").structured == {"result": "2027-01-01"}


@pytest.mark.parametrize(
    ("name", "value", "problem"),
    [
        ("when", "yesterday", "is not an ISO 8601 date-time"),
        ("day", "2026-13-01", "is not an ISO 8601 date"),
        ("span", "P1M", "is not an ISO 8601 duration"),
        ("ident", "not-a-uuid", "is not a UUID"),
        ("amount", "twelve", "is not a decimal number"),
        ("blob", "***", "is not base64-encoded data"),
    ],
)
def test_a_malformed_value_is_an_error_naming_the_argument(
    name: str, value: str, problem: str
) -> None:
    arguments = {
        "when": "2026-12-03T10:00:00Z",
        "day": "2026-12-03",
        "at_time": "09:30:00",
        "span": "PT1H",
        "ident": "1b4e28ba-2fa1-11d2-883f-0016d3cca427",
        "amount": 1,
        "path": "x",
        "blob": "",
        name: value,
    }
    result = client.call("shift", **arguments)
    assert result.is_error
    assert result.text.startswith(f'argument "{name}": {value!r} {problem}'), result.text
