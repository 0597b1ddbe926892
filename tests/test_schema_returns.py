"""describe(): the return annotation gives the output schema (and whether to wrap results)."""

# ruff: noqa: UP007, UP045

import dataclasses
import datetime
import decimal
import enum
import uuid
from typing import Any, Optional, TypedDict, Union

import jsonschema
import pytest
from mcpline._jsonvalue import to_jsonable
from mcpline._results import Audio, Image, ToolResult
from mcpline._tool import ToolShape, describe


def returning(annotation: Any) -> ToolShape:
    def tool() -> None: ...

    tool.__annotations__ = {"return": annotation}
    return describe(tool)


def conforms(shape: ToolShape, value: Any) -> bool:
    """Does ``value`` (as the server would send it) validate against the output schema?"""
    assert shape.output_schema is not None
    jsonschema.Draft202012Validator.check_schema(shape.output_schema)
    data = to_jsonable(value)
    structured = {"result": data} if shape.wraps_output else data
    return jsonschema.Draft202012Validator(shape.output_schema).is_valid(structured)


class Color(enum.Enum):
    RED = "red"
    BLUE = "blue"


class Stats(TypedDict):
    lines: int
    words: int


@dataclasses.dataclass
class Match:
    path: str
    line: int = 0
    tags: list[str] = dataclasses.field(default_factory=list)


@dataclasses.dataclass
class Folder:
    name: str
    children: list["Folder"]


@dataclasses.dataclass
class Cat:
    meow: str


@dataclasses.dataclass
class Dog:
    woof: str


def test_missing_return_annotation_gives_no_output_schema() -> None:
    def tool(a: int):  # type: ignore[no-untyped-def]
        return a

    shape = describe(tool)
    assert shape.output_schema is None
    assert shape.wraps_output is False


@pytest.mark.parametrize(
    "annotation",
    [
        str,
        None,
        type(None),
        bytes,
        Image,
        Audio,
        ToolResult,
        Any,
        Optional[str],
        Union[str, Image, None],
        Union[Image, Audio],
    ],
)
def test_content_return_types_give_no_output_schema(annotation: Any) -> None:
    shape = returning(annotation)
    assert shape.output_schema is None
    assert shape.wraps_output is False


@pytest.mark.parametrize(
    ("annotation", "item_schema", "value"),
    [
        (int, {"type": "integer"}, 3),
        (float, {"type": "number"}, 2.5),
        (bool, {"type": "boolean"}, True),
        (list[str], {"type": "array", "items": {"type": "string"}}, ["a", "b"]),
        (Optional[int], {"anyOf": [{"type": "integer"}, {"type": "null"}]}, None),
        (Color, {"enum": ["red", "blue"], "type": "string"}, Color.BLUE),
        (tuple[int, int], None, (1, 2)),
    ],
)
def test_non_object_result_is_wrapped_under_result(
    annotation: Any, item_schema: dict[str, Any] | None, value: Any
) -> None:
    shape = returning(annotation)
    assert shape.wraps_output is True
    assert shape.output_schema is not None
    assert shape.output_schema["type"] == "object"
    assert shape.output_schema["required"] == ["result"]
    if item_schema is not None:
        assert shape.output_schema["properties"]["result"] == item_schema
    assert conforms(shape, value)


def test_wrapped_result_rejects_values_of_the_wrong_type() -> None:
    shape = returning(list[int])
    assert not conforms(shape, ["a"])


@pytest.mark.parametrize("annotation", [dict, dict[str, int], dict[str, Any]])
def test_string_keyed_dict_result_is_an_unwrapped_object(annotation: Any) -> None:
    shape = returning(annotation)
    assert shape.wraps_output is False
    assert shape.output_schema is not None
    assert shape.output_schema["type"] == "object"
    assert conforms(shape, {"a": 1})


def test_typeddict_result_is_an_unwrapped_closed_object() -> None:
    shape = returning(Stats)
    assert shape.wraps_output is False
    assert shape.output_schema == {
        "type": "object",
        "properties": {"lines": {"type": "integer"}, "words": {"type": "integer"}},
        "required": ["lines", "words"],
        "additionalProperties": False,
    }
    assert conforms(shape, {"lines": 1, "words": 2})
    assert not conforms(shape, {"lines": 1})


def test_dataclass_result_requires_every_field_because_every_field_is_sent() -> None:
    shape = returning(Match)
    assert shape.wraps_output is False
    assert shape.output_schema is not None
    assert shape.output_schema["required"] == ["path", "line", "tags"]
    assert shape.output_schema["properties"]["line"] == {"type": "integer", "default": 0}
    assert conforms(shape, Match("a.py", 3, ["x"]))


def test_list_of_dataclasses_is_wrapped_and_conforms() -> None:
    shape = returning(list[Match])
    assert shape.wraps_output is True
    assert conforms(shape, [Match("a.py"), Match("b.py", 2)])


def test_optional_dataclass_result_is_wrapped_because_it_may_be_null() -> None:
    shape = returning(Optional[Match])
    assert shape.wraps_output is True
    assert conforms(shape, None)
    assert conforms(shape, Match("a.py"))


def test_union_of_object_types_is_an_unwrapped_object_with_any_of() -> None:
    shape = returning(Union[Cat, Dog])
    assert shape.wraps_output is False
    assert shape.output_schema is not None
    assert shape.output_schema["type"] == "object"
    assert len(shape.output_schema["anyOf"]) == 2
    assert conforms(shape, Cat("hi"))
    assert conforms(shape, Dog("hi"))
    assert not conforms(shape, {"quack": "hi"})


def test_recursive_result_keeps_its_definitions_at_the_schema_root() -> None:
    shape = returning(Folder)
    assert shape.wraps_output is False
    schema = shape.output_schema
    assert schema is not None
    assert schema["type"] == "object"
    assert "Folder" in schema["$defs"]
    assert conforms(shape, Folder("root", [Folder("a", []), Folder("b", [Folder("c", [])])]))


def test_recursive_result_wrapped_in_a_list_keeps_its_definitions() -> None:
    shape = returning(list[Folder])
    assert shape.wraps_output is True
    assert shape.output_schema is not None
    assert "Folder" in shape.output_schema["$defs"]
    assert conforms(shape, [Folder("a", [Folder("b", [])])])


@pytest.mark.parametrize(
    ("annotation", "expected", "value"),
    [
        (
            datetime.datetime,
            {"type": "string"},
            datetime.datetime(2024, 5, 1, 12, 0, tzinfo=datetime.timezone.utc),
        ),
        (datetime.date, {"type": "string", "format": "date"}, datetime.date(2024, 5, 1)),
        (datetime.time, {"type": "string"}, datetime.time(12, 30)),
        (decimal.Decimal, {"type": "string"}, decimal.Decimal("1.10")),
        (uuid.UUID, {"type": "string", "format": "uuid"}, uuid.UUID(int=1)),
    ],
)
def test_stdlib_values_are_described_as_the_strings_to_jsonable_produces(
    annotation: Any, expected: dict[str, Any], value: Any
) -> None:
    shape = returning(annotation)
    assert shape.wraps_output is True
    assert shape.output_schema is not None
    assert shape.output_schema["properties"]["result"] == expected
    assert conforms(shape, value)


def test_pydantic_result_uses_the_serialization_schema() -> None:
    pydantic = pytest.importorskip("pydantic")

    class Report(pydantic.BaseModel):
        title: str
        pages: int = 1

    shape = returning(Report)
    assert shape.wraps_output is False
    assert shape.output_schema == Report.model_json_schema(mode="serialization")
    assert conforms(shape, Report(title="t"))


def test_async_function_result_schema_comes_from_its_declared_return_type() -> None:
    async def tool() -> list[int]:
        return [1]

    shape = describe(tool)
    assert shape.is_async is True
    assert shape.wraps_output is True
    assert conforms(shape, [1, 2])


def test_context_types_do_not_affect_the_output_schema() -> None:
    class FakeContext:
        pass

    def tool(ctx: FakeContext) -> dict[str, int]:
        return {}

    shape = describe(tool, context_types=(FakeContext,))
    assert shape.output_schema == {"type": "object", "additionalProperties": {"type": "integer"}}
