"""Arguments are validated against the input schema before a tool runs, then converted."""

import dataclasses
import enum
from typing import Literal

import pytest
from mcpline import Server
from mcpline.testing import Client


class Color(enum.Enum):
    RED = "red"
    GREEN = "green"


@dataclasses.dataclass
class Point:
    x: int
    y: int


@dataclasses.dataclass
class Segment:
    start: Point
    end: Point
    label: str = "unnamed"


CALLS: list[dict] = []


def build(**server_options) -> Server:
    server = Server("validation", **server_options)

    @server.tool
    def read(path: str, encoding: str = "utf-8", limit: int = 10) -> str:
        CALLS.append({"path": path, "encoding": encoding, "limit": limit})
        return f"{path}|{encoding}|{limit}"

    @server.tool
    def add(a: int, b: int) -> int:
        return a + b

    @server.tool
    def pair(left: int, right: int) -> str:
        return f"{left},{right}"

    @server.tool
    def int_type(n: int) -> str:
        return f"{type(n).__name__}:{n!r}"

    @server.tool
    def shout(text: str) -> str:
        return text.upper()

    @server.tool
    def toggle(flag: bool) -> str:
        return repr(flag)

    @server.tool
    def paint(color: Color) -> str:
        assert isinstance(color, Color)
        return f"{type(color).__name__}.{color.name}"

    @server.tool
    def speed(mode: Literal["fast", "slow"]) -> str:
        return mode

    @server.tool
    def norm(p: Point) -> str:
        assert isinstance(p, Point)
        return f"{type(p).__name__}:{p.x + p.y}"

    @server.tool
    def length(s: Segment) -> str:
        assert isinstance(s.start, Point)
        assert isinstance(s.end, Point)
        return f"{s.label}:{abs(s.end.x - s.start.x) + abs(s.end.y - s.start.y)}"

    @server.tool
    def maybe_point(p: Point | None = None) -> str:
        return "none" if p is None else f"{type(p).__name__}:{p.x},{p.y}"

    @server.tool
    def total(xs: list[int]) -> int:
        assert isinstance(xs, list)
        return sum(xs)

    @server.tool
    def paint_all(colors: list[Color]) -> str:
        return ",".join(c.name for c in colors)

    @server.tool
    def maybe(n: int | None = None) -> str:
        return repr(n)

    @server.tool(strict=False)
    def lenient(a: int) -> int:
        return a

    @server.tool(strict=True)
    def pedantic(a: int) -> int:
        return a

    return server


@pytest.fixture
def client():
    CALLS.clear()
    with Client(build()) as c:
        yield c


# ----- unknown arguments -----


def test_unknown_argument_is_rejected_before_the_tool_runs(client):
    result = client.call("read", pathh="a.txt")
    assert result.is_error
    assert CALLS == []


def test_unknown_argument_error_names_the_unknown_key(client):
    result = client.call("read", path="a.txt", colour="x")
    assert result.is_error
    assert "colour" in result.text


def test_unknown_argument_error_names_the_valid_keys(client):
    result = client.call("read", pathh="a.txt")
    assert result.is_error
    for valid in ("path", "encoding", "limit"):
        assert valid in result.text.replace("pathh", ""), result.text


def test_unknown_argument_error_suggests_the_nearest_match(client):
    # "path" must appear once in the list of valid keys and once more as the suggestion.
    result = client.call("read", pathh="a.txt")
    assert result.is_error
    assert result.text.replace("pathh", "").count("path") >= 2, result.text


def test_every_unknown_key_is_named(client):
    result = client.call("add", a=1, b=2, extra_one=1, extra_two=2)
    assert result.is_error
    assert "extra_one" in result.text
    assert "extra_two" in result.text


def test_non_strict_tool_drops_unknown_keys_and_runs(client):
    result = client.call("lenient", a=7, junk="dropped")
    assert not result.is_error, result.text
    assert result.structured == {"result": 7}


def test_non_strict_server_drops_unknown_keys_for_every_tool():
    CALLS.clear()
    with Client(build(strict=False)) as client:
        result = client.call("read", path="a.txt", pathh="typo", verbose=True)
    assert not result.is_error, result.text
    assert result.text == "a.txt|utf-8|10"
    assert CALLS == [{"path": "a.txt", "encoding": "utf-8", "limit": 10}]


def test_strict_tool_on_a_non_strict_server_still_rejects_unknown_keys():
    with Client(build(strict=False)) as client:
        result = client.call("pedantic", a=1, junk=2)
    assert result.is_error
    assert "junk" in result.text


def test_non_strict_tool_still_requires_its_required_arguments(client):
    result = client.call("lenient", junk=1)
    assert result.is_error
    assert "a" in result.text


# ----- no coercion -----


@pytest.mark.parametrize(
    ("tool", "arguments"),
    [
        ("add", {"a": "5", "b": 1}),
        ("add", {"a": 1.5, "b": 1}),
        ("add", {"a": True, "b": 1}),
        ("add", {"a": None, "b": 1}),
        ("shout", {"text": 1}),
        ("shout", {"text": ["a"]}),
        ("toggle", {"flag": "true"}),
        ("toggle", {"flag": 1}),
        ("total", {"xs": "1,2"}),
    ],
    ids=[
        "str-for-int",
        "float-for-int",
        "bool-for-int",
        "null-for-int",
        "int-for-str",
        "list-for-str",
        "str-for-bool",
        "int-for-bool",
        "str-for-list",
    ],
)
def test_wrong_json_type_is_a_tool_error_not_a_coercion(client, tool, arguments):
    result = client.call_with(tool, arguments)
    assert result.is_error, result.raw
    assert result.structured is None


def test_integer_parameter_never_receives_a_float(client):
    # JSON Schema counts 1.0 as an integer; the tool was promised an int, so it gets int 1
    # (or the call is refused) - never the float 1.0.
    result = client.call_with("int_type", {"n": 1.0})
    assert result.is_error or result.text == "int:1", result.text


def test_integer_beyond_64_bits_is_not_silently_rounded(client):
    big = 2**70
    result = client.call_with("int_type", {"n": big})
    assert result.is_error or result.text == f"int:{big}", result.text


def test_integer_at_the_64_bit_edges_arrives_exactly(client):
    for value in (2**63 - 1, -(2**63), 2**64 - 1):
        assert client.call_with("int_type", {"n": value}).text == f"int:{value}"


# ----- missing arguments -----


def test_missing_required_argument_is_a_tool_error_naming_it(client):
    result = client.call("pair", left=1)
    assert result.is_error
    assert "right" in result.text


def test_missing_required_argument_in_a_larger_signature_is_named(client):
    result = client.call("read", encoding="latin-1")
    assert result.is_error
    assert "path" in result.text


def test_missing_arguments_object_counts_as_empty(client):
    result = client.call_with("pair", None)
    assert result.is_error
    assert "left" in result.text


def test_defaults_fill_in_omitted_optional_arguments(client):
    assert client.call("read", path="p").text == "p|utf-8|10"
    assert client.call("maybe").text == "None"
    assert client.call("maybe", n=None).text == "None"
    assert client.call("maybe", n=4).text == "4"


# ----- richer types -----


def test_enum_value_arrives_as_an_enum_member(client):
    result = client.call("paint", color="green")
    assert not result.is_error, result.text
    assert result.text == "Color.GREEN"


def test_value_outside_the_enum_is_rejected(client):
    result = client.call("paint", color="blue")
    assert result.is_error
    assert "blue" in result.text


def test_enum_members_inside_a_list_are_converted(client):
    result = client.call("paint_all", colors=["red", "green"])
    assert not result.is_error, result.text
    assert result.text == "RED,GREEN"


def test_literal_accepts_its_values_and_rejects_others(client):
    assert client.call("speed", mode="fast").text == "fast"
    result = client.call("speed", mode="medium")
    assert result.is_error
    assert "medium" in result.text


def test_dataclass_argument_arrives_as_a_dataclass_instance(client):
    result = client.call("norm", p={"x": 2, "y": 3})
    assert not result.is_error, result.text
    assert result.text == "Point:5"


def test_dataclass_argument_with_a_missing_field_is_rejected(client):
    result = client.call("norm", p={"x": 2})
    assert result.is_error
    assert "y" in result.text


def test_dataclass_argument_with_a_wrong_field_type_is_rejected(client):
    result = client.call("norm", p={"x": 2, "y": "3"})
    assert result.is_error


def test_dataclass_argument_with_an_unknown_field_is_rejected(client):
    result = client.call("norm", p={"x": 2, "y": 3, "z": 4})
    assert result.is_error
    assert "z" in result.text


def test_list_of_int_is_validated_item_by_item(client):
    ok = client.call("total", xs=[1, 2, 3])
    assert not ok.is_error, ok.text
    assert ok.structured == {"result": 6}
    bad = client.call("total", xs=[1, "2", 3])
    assert bad.is_error


def test_nested_dataclasses_are_converted_at_every_level(client):
    result = client.call("length", s={"start": {"x": 0, "y": 0}, "end": {"x": 3, "y": 4}})
    assert not result.is_error, result.text
    assert result.text == "unnamed:7"


def test_optional_dataclass_accepts_null_and_an_object(client):
    assert client.call("maybe_point").text == "none"
    assert client.call("maybe_point", p=None).text == "none"
    assert client.call("maybe_point", p={"x": 1, "y": 2}).text == "Point:1,2"


def test_pydantic_model_argument_arrives_as_a_model_instance():
    pydantic = pytest.importorskip("pydantic")

    class Query(pydantic.BaseModel):
        text: str
        limit: int = 5

    server = Server("pydantic")

    @server.tool
    def search(q: Query) -> str:
        assert isinstance(q, Query)
        return f"{q.text}/{q.limit}"

    with Client(server) as client:
        assert client.call("search", q={"text": "hi"}).text == "hi/5"
        refused = client.call("search", q={"text": "hi", "limit": "5"})
    assert refused.is_error
    assert "limit" in refused.text
