"""describe(): what cannot be a tool is refused early, with a message that says where and why."""

import dataclasses
import re
import typing
from collections.abc import AsyncIterator, Iterator
from typing import Any

import pytest
from mcpline._tool import describe


class Opaque:
    """A plain class: not a dataclass, TypedDict, Enum or pydantic model."""


class FakeContext:
    pass


# -- tool names -------------------------------------------------------------------------------


@pytest.mark.parametrize(
    "name",
    ["", "x" * 65, "has space", "slash/name", "colon:name", "ünïcode", "tab\tname", "\ud800"],
    ids=["empty", "too-long", "space", "slash", "colon", "non-ascii", "tab", "surrogate"],
)
def test_invalid_tool_name_is_rejected_with_the_rule(name: str) -> None:
    def tool() -> None: ...

    with pytest.raises(ValueError, match="1 to 64 characters") as info:
        describe(tool, name=name)
    assert repr(name) in str(info.value)


@pytest.mark.parametrize("name", ["a", "x" * 64, "files.read_text-v2", "A.B-C_9"])
def test_names_of_letters_digits_dots_dashes_and_underscores_are_accepted(name: str) -> None:
    def tool() -> None: ...

    assert describe(tool, name=name).name == name


def test_lambda_needs_an_explicit_name() -> None:
    with pytest.raises(ValueError, match="'<lambda>'"):
        describe(lambda: None)
    assert describe(lambda: None, name="noop").name == "noop"


# -- parameter kinds --------------------------------------------------------------------------


def test_var_positional_parameter_is_rejected() -> None:
    def spread(*paths: str) -> None: ...

    with pytest.raises(TypeError, match=r"spread.*\*paths"):
        describe(spread)


def test_var_keyword_parameter_is_rejected() -> None:
    def options(**extra: int) -> None: ...

    with pytest.raises(TypeError, match=r"options.*\*\*extra"):
        describe(options)


def test_positional_only_parameter_is_rejected() -> None:
    def positional(path: str, /) -> None: ...

    with pytest.raises(TypeError, match=r"positional.*'path'.*positional-only"):
        describe(positional)


def test_two_context_parameters_are_rejected() -> None:
    def greedy(a: FakeContext, b: FakeContext) -> None: ...

    with pytest.raises(TypeError, match=r"greedy.*'a'.*'b'.*context"):
        describe(greedy, context_types=(FakeContext,))


# -- annotations ------------------------------------------------------------------------------


def test_plain_class_annotation_names_function_parameter_and_annotation() -> None:
    def handle(item: Opaque) -> None: ...

    with pytest.raises(TypeError) as info:
        describe(handle)
    message = str(info.value)
    assert "handle" in message
    assert "'item'" in message
    assert "Opaque" in message
    assert "not a dataclass, TypedDict, Enum or pydantic model" in message


def test_unsupported_type_nested_in_a_container_reports_the_whole_annotation() -> None:
    def handle(items: dict[str, list[Opaque]]) -> None: ...

    with pytest.raises(TypeError, match=r"'items'.*dict\[str, list\[.*Opaque\]\]"):
        describe(handle)


def test_unsupported_field_of_a_dataclass_names_the_field() -> None:
    @dataclasses.dataclass
    class Job:
        owner: Opaque

    def submit(job: Job) -> None: ...

    with pytest.raises(TypeError, match=r"'job'.*field .*Job\.owner"):
        describe(submit)


@pytest.mark.parametrize("key", [int, float, tuple[int, int]], ids=["int", "float", "tuple"])
def test_dict_with_non_string_keys_is_rejected(key: Any) -> None:
    def tool(mapping: dict[key, str]) -> None:  # type: ignore[valid-type]
        ...

    with pytest.raises(TypeError, match=r"'mapping'.*keys must be str"):
        describe(tool)


def test_type_variable_parameter_is_rejected() -> None:
    item_type = typing.TypeVar("item_type")

    def first(items: list[item_type]) -> None:  # type: ignore[valid-type]
        ...

    with pytest.raises(TypeError, match=r"'items'.*type variables"):
        describe(first)


def test_callable_parameter_is_rejected() -> None:
    def apply(fn: typing.Callable[[int], int]) -> None: ...

    with pytest.raises(TypeError, match=r"apply.*'fn'.*Callable"):
        describe(apply)


def test_unresolvable_string_annotation_is_rejected_with_the_name_error() -> None:
    def tool(thing: "MissingName") -> None:  # type: ignore[name-defined]  # noqa: F821
        ...

    with pytest.raises(TypeError, match=r"tool.*'MissingName'.*'thing'.*MissingName"):
        describe(tool)


def test_unsupported_return_annotation_is_rejected() -> None:
    def produce() -> Iterator[int]:
        return iter([1])

    with pytest.raises(TypeError, match=r"produce.*return annotation.*Iterator"):
        describe(produce)


def test_a_generator_function_is_refused_with_what_to_return_instead() -> None:
    def produce() -> Iterator[int]:
        yield 1

    with pytest.raises(TypeError, match=r"produce is a generator function.*return a list"):
        describe(produce)


def test_an_async_generator_function_is_refused_too() -> None:
    async def produce() -> AsyncIterator[int]:
        yield 1

    with pytest.raises(TypeError, match=r"produce is a generator function.*return a list"):
        describe(produce)


def test_object_that_is_not_callable_is_rejected() -> None:
    with pytest.raises(TypeError, match="not callable"):
        describe(42)  # type: ignore[arg-type]


def test_error_messages_do_not_leak_internal_exception_types() -> None:
    def handle(item: Opaque) -> None: ...

    with pytest.raises(TypeError) as info:
        describe(handle)
    assert info.value.__cause__ is None
    assert not re.search(r"_Unsupported|Traceback", str(info.value))
