"""to_jsonable(): tool return values become plain JSON data, or a clear TypeError."""

import collections
import dataclasses
import datetime
import decimal
import enum
import json
import math
import pathlib
import uuid
from typing import Any

import pytest
from mcpline._jsonvalue import to_jsonable


class Color(enum.Enum):
    RED = "red"
    BLUE = "blue"


class Level(enum.IntEnum):
    LOW = 1
    HIGH = 2


class Shape(str, enum.Enum):
    SQUARE = "square"


class Pair(enum.Enum):
    ORIGIN = (0, 0)


@dataclasses.dataclass
class Point:
    x: int
    y: int


@dataclasses.dataclass(frozen=True)
class Segment:
    start: Point
    end: Point
    color: Color = Color.RED
    tags: tuple[str, ...] = ()


class Celsius(float):
    pass


class Count(int):
    pass


class Word(str):
    def __str__(self) -> str:
        return "overridden"


@pytest.mark.parametrize("value", ["text", "", 0, -7, 10**30, 1.5, -0.0, True, False, None])
def test_json_scalars_pass_through_unchanged(value: Any) -> None:
    result = to_jsonable(value)
    assert result == value
    assert type(result) is type(value)


def test_plain_containers_are_copied_not_shared() -> None:
    value = {"a": [1, 2, {"b": None}], "c": "d"}
    result = to_jsonable(value)
    assert result == value
    assert result is not value
    assert result["a"] is not value["a"]


def test_result_always_serialises_with_the_json_module() -> None:
    value = {
        "when": datetime.date(2024, 1, 2),
        "points": [Point(1, 2)],
        "level": Level.HIGH,
        "ids": frozenset({3, 1, 2}),
    }
    assert json.loads(json.dumps(to_jsonable(value))) == {
        "when": "2024-01-02",
        "points": [{"x": 1, "y": 2}],
        "level": 2,
        "ids": [1, 2, 3],
    }


def test_dataclass_becomes_a_dict_of_all_fields_recursively() -> None:
    segment = Segment(Point(0, 0), Point(3, 4), tags=("a", "b"))
    assert to_jsonable(segment) == {
        "start": {"x": 0, "y": 0},
        "end": {"x": 3, "y": 4},
        "color": "red",
        "tags": ["a", "b"],
    }


def test_dataclass_fields_excluded_from_init_are_still_included() -> None:
    @dataclasses.dataclass
    class Counter:
        start: int
        seen: int = dataclasses.field(default=5, init=False)

    assert to_jsonable(Counter(1)) == {"start": 1, "seen": 5}


def test_dataclass_class_object_itself_is_not_data() -> None:
    with pytest.raises(TypeError, match=r"builtins\.type"):
        to_jsonable(Point)


@pytest.mark.parametrize(
    ("member", "expected"),
    [(Color.BLUE, "blue"), (Level.LOW, 1), (Shape.SQUARE, "square"), (Pair.ORIGIN, [0, 0])],
)
def test_enum_members_become_their_values(member: enum.Enum, expected: Any) -> None:
    result = to_jsonable(member)
    assert result == expected
    assert type(result) is type(expected)


def test_enum_keys_with_string_values_become_their_values() -> None:
    assert to_jsonable({Color.RED: 1, Shape.SQUARE: 2}) == {"red": 1, "square": 2}


def test_pydantic_model_is_dumped_in_json_mode() -> None:
    pydantic = pytest.importorskip("pydantic")

    class Event(pydantic.BaseModel):
        name: str
        at: datetime.datetime
        ids: set[int]

    event = Event(name="launch", at=datetime.datetime(2024, 1, 2, 3, 4, 5), ids={2})
    assert to_jsonable({"event": event}) == {
        "event": {"name": "launch", "at": "2024-01-02T03:04:05", "ids": [2]}
    }


def test_objects_with_model_dump_are_duck_typed() -> None:
    class Dumpable:
        def model_dump(self, *, mode: str) -> dict[str, Any]:
            return {"mode": mode, "items": (1, 2)}

    assert to_jsonable(Dumpable()) == {"mode": "json", "items": [1, 2]}


@pytest.mark.parametrize(
    ("value", "expected"),
    [
        ((1, "a", None), [1, "a", None]),
        ({3, 1, 2}, [1, 2, 3]),
        (frozenset({"b", "a"}), ["a", "b"]),
        (collections.deque([1, 2]), [1, 2]),
        (range(3), [0, 1, 2]),
    ],
)
def test_tuples_sets_and_other_sequences_become_lists(value: Any, expected: list[Any]) -> None:
    assert to_jsonable(value) == expected


def test_set_of_unorderable_items_is_still_converted() -> None:
    result = to_jsonable({1, "a"})
    assert sorted(result, key=str) == [1, "a"]


def test_mapping_subclasses_become_plain_dicts() -> None:
    ordered = collections.OrderedDict([("b", 1), ("a", 2)])
    result = to_jsonable(ordered)
    assert type(result) is dict
    assert list(result) == ["b", "a"]


@pytest.mark.parametrize("key", [1, 1.5, None, (1, 2), Level.LOW])
def test_dict_with_non_string_key_is_rejected(key: Any) -> None:
    with pytest.raises(TypeError, match="keys must be str"):
        to_jsonable({key: "value"})


@pytest.mark.parametrize(
    ("value", "expected"),
    [
        (datetime.datetime(2024, 5, 1, 12, 30, 15), "2024-05-01T12:30:15"),
        (
            datetime.datetime(2024, 5, 1, 12, 30, tzinfo=datetime.timezone.utc),
            "2024-05-01T12:30:00+00:00",
        ),
        (datetime.date(2024, 5, 1), "2024-05-01"),
        (datetime.time(8, 5), "08:05:00"),
    ],
)
def test_dates_and_times_become_iso_8601_strings(value: Any, expected: str) -> None:
    assert to_jsonable(value) == expected


@pytest.mark.parametrize(
    ("value", "expected"),
    [("1.10", "1.10"), ("1E+2", "1E+2"), ("NaN", "NaN"), ("-0", "-0")],
)
def test_decimal_becomes_its_exact_string(value: str, expected: str) -> None:
    assert to_jsonable(decimal.Decimal(value)) == expected


def test_uuid_and_paths_become_strings() -> None:
    assert to_jsonable(uuid.UUID(int=255)) == "00000000-0000-0000-0000-0000000000ff"
    assert to_jsonable(pathlib.PurePosixPath("a/b.txt")) == "a/b.txt"


@pytest.mark.parametrize("value", [math.nan, math.inf, -math.inf])
def test_non_finite_float_is_not_representable_in_json(value: float) -> None:
    with pytest.raises(TypeError, match="not representable in JSON"):
        to_jsonable(value)


def test_non_finite_float_subclass_is_not_representable_in_json() -> None:
    with pytest.raises(TypeError, match="not representable in JSON"):
        to_jsonable(Celsius("inf"))


def test_builtin_subclasses_become_the_plain_builtin() -> None:
    results = [to_jsonable(Celsius(1.5)), to_jsonable(Count(3)), to_jsonable(Word("abc"))]
    assert results == [1.5, 3, "abc"]
    assert [type(r) for r in results] == [float, int, str]


@pytest.mark.parametrize("value", [b"raw", bytearray(b"raw"), memoryview(b"raw")])
def test_binary_data_becomes_base64_text(value: Any) -> None:
    assert to_jsonable({"data": value}) == {"data": "cmF3"}


def test_unknown_object_is_rejected_naming_its_type() -> None:
    class Widget:
        pass

    with pytest.raises(TypeError, match=r"cannot convert a value of type .*Widget to JSON"):
        to_jsonable(Widget())


def test_generators_are_rejected_rather_than_consumed() -> None:
    def numbers() -> Any:
        yield 1

    with pytest.raises(TypeError, match=r"builtins\.generator"):
        to_jsonable(numbers())


def test_error_message_locates_the_bad_value() -> None:
    value = {"rows": [{"ok": 1}, {"score": float("nan")}]}
    with pytest.raises(TypeError, match=r"at value\['rows'\]\[1\]\['score'\]"):
        to_jsonable(value)


def test_error_message_locates_a_bad_dataclass_field() -> None:
    @dataclasses.dataclass
    class Holder:
        payload: Any

    with pytest.raises(TypeError, match=r"at value\[0\]\.payload"):
        to_jsonable([Holder(object())])


def test_reference_cycle_is_a_type_error_not_a_crash() -> None:
    cycle: list[Any] = []
    cycle.append(cycle)
    with pytest.raises(TypeError, match="reference cycle"):
        to_jsonable(cycle)


def test_input_is_not_modified() -> None:
    value = {"s": {2, 1}, "t": (1,), "p": Point(1, 2)}
    to_jsonable(value)
    assert value == {"s": {1, 2}, "t": (1,), "p": Point(1, 2)}
