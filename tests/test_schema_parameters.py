"""describe(): parameters become a JSON Schema 2020-12 object for the tool's arguments."""

# The typing aliases (List, Optional, Union, ...) are the point of several tests here.
# ruff: noqa: UP006, UP007, UP035, UP045

import collections.abc
import dataclasses
import enum
import functools
import importlib.util
import subprocess
import sys
import types
import typing
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Annotated, Any, List, Literal, Optional, Union

import jsonschema
import pytest
from mcpline._tool import ToolShape, describe

# Required/NotRequired are in typing from 3.11; on 3.10 they (and a TypedDict that understands
# them) come from typing_extensions.
if sys.version_info >= (3, 11):
    from typing import NotRequired, Required, TypedDict

    TYPING_MODULE = "typing"
else:
    from typing_extensions import NotRequired, Required, TypedDict

    TYPING_MODULE = "typing_extensions"


def validator(schema: dict[str, Any]) -> jsonschema.Draft202012Validator:
    jsonschema.Draft202012Validator.check_schema(schema)
    return jsonschema.Draft202012Validator(schema)


def accepts(schema: dict[str, Any], arguments: Any) -> bool:
    return validator(schema).is_valid(arguments)


def shape_with(annotation: Any, **default: Any) -> ToolShape:
    """Describe a one-parameter tool ``tool(x: annotation [= default])``."""
    if default:

        def tool(x=default["value"]):  # type: ignore[no-untyped-def]
            return x

    else:

        def tool(x):  # type: ignore[no-untyped-def]
            return x

    tool.__annotations__ = {"x": annotation}
    return describe(tool)


ModuleLoader = Callable[..., types.ModuleType]


@pytest.fixture
def load_module(tmp_path: Path) -> Iterator[ModuleLoader]:
    """Import source text as a real module, so string annotations resolve in its namespace."""
    names: list[str] = []

    def load(name: str, source: str, **globals_: Any) -> types.ModuleType:
        path = tmp_path / f"{name}.py"
        path.write_text(source)
        spec = importlib.util.spec_from_file_location(name, path)
        assert spec is not None and spec.loader is not None
        module = importlib.util.module_from_spec(spec)
        vars(module).update(globals_)
        sys.modules[name] = module
        names.append(name)
        spec.loader.exec_module(module)
        return module

    yield load
    for name in names:
        sys.modules.pop(name, None)


def property_of(annotation: Any) -> dict[str, Any]:
    return shape_with(annotation).input_schema["properties"]["x"]


class FakeContext:
    pass


class Color(enum.Enum):
    RED = "red"
    GREEN = "green"


class Level(enum.IntEnum):
    LOW = 1
    HIGH = 2


@dataclasses.dataclass
class Point:
    x: float
    y: float
    label: str = "origin"
    tags: list[str] = dataclasses.field(default_factory=list)


@dataclasses.dataclass
class Tree:
    value: int
    children: list["Tree"] = dataclasses.field(default_factory=list)


class Movie(TypedDict):
    title: str
    year: int


class PartialMovie(TypedDict, total=False):
    title: Required[str]
    year: int


class Review(TypedDict):
    stars: int
    comment: NotRequired[str]


class Employee(TypedDict):
    name: str
    manager: Optional["Employee"]
    reports: list["Employee"]


class Ping(TypedDict):
    pong: Optional["Pong"]


class Pong(TypedDict):
    ping: Optional[Ping]


# -- the object around the parameters ---------------------------------------------------------


def test_input_schema_is_a_closed_object_listing_parameters_in_signature_order() -> None:
    def tool(zeta: int, alpha: str, mid: bool) -> None: ...

    schema = describe(tool).input_schema
    assert schema["type"] == "object"
    assert schema["additionalProperties"] is False
    assert list(schema["properties"]) == ["zeta", "alpha", "mid"]
    assert schema["required"] == ["zeta", "alpha", "mid"]
    assert accepts(schema, {"zeta": 1, "alpha": "a", "mid": True})
    assert not accepts(schema, {"zeta": 1, "alpha": "a", "mid": True, "extra": 0})


def test_required_is_omitted_when_every_parameter_has_a_default() -> None:
    def tool(a: int = 1, b: str = "x") -> None: ...

    schema = describe(tool).input_schema
    assert "required" not in schema
    assert accepts(schema, {})


def test_tool_without_parameters_takes_an_empty_object() -> None:
    def tool() -> None: ...

    shape = describe(tool)
    assert shape.input_schema == {"type": "object", "properties": {}, "additionalProperties": False}
    assert shape.param_names == ()


def test_param_names_follow_the_signature() -> None:
    def tool(b: int, a: int, *, c: int = 0) -> None: ...

    assert describe(tool).param_names == ("b", "a", "c")


def test_keyword_only_parameters_are_ordinary_arguments() -> None:
    def tool(*, limit: int) -> None: ...

    schema = describe(tool).input_schema
    assert schema["properties"]["limit"] == {"type": "integer"}
    assert schema["required"] == ["limit"]


# -- scalars ----------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("annotation", "expected"),
    [
        (int, {"type": "integer"}),
        (float, {"type": "number"}),
        (str, {"type": "string"}),
        (bool, {"type": "boolean"}),
        (None, {"type": "null"}),
        (type(None), {"type": "null"}),
        (Any, {}),
    ],
)
def test_scalar_annotations_map_to_json_types(annotation: Any, expected: dict[str, Any]) -> None:
    assert property_of(annotation) == expected


def test_unannotated_parameter_accepts_anything() -> None:
    def tool(x, y: int):  # type: ignore[no-untyped-def]
        return x

    schema = describe(tool).input_schema
    assert schema["properties"]["x"] == {}
    assert schema["required"] == ["x", "y"]
    assert accepts(schema, {"x": [1, {"a": None}], "y": 2})


def test_integer_parameter_rejects_fractions_and_booleans() -> None:
    schema = shape_with(int).input_schema
    assert accepts(schema, {"x": 3})
    assert not accepts(schema, {"x": 3.5})
    assert not accepts(schema, {"x": True})


def test_number_parameter_accepts_integers() -> None:
    assert accepts(shape_with(float).input_schema, {"x": 3})


# -- defaults ---------------------------------------------------------------------------------


def test_parameter_with_default_is_optional_and_documents_the_default() -> None:
    def tool(path: str, limit: int = 10, verbose: bool = False) -> None: ...

    schema = describe(tool).input_schema
    assert schema["required"] == ["path"]
    assert schema["properties"]["limit"] == {"type": "integer", "default": 10}
    assert schema["properties"]["verbose"] == {"type": "boolean", "default": False}


def test_default_that_is_not_json_data_is_left_out() -> None:
    sentinel = object()

    def tool(x: Any = sentinel) -> None: ...

    schema = describe(tool).input_schema
    assert schema["properties"]["x"] == {}
    assert "required" not in schema


def test_enum_default_is_emitted_as_its_value() -> None:
    def tool(color: Color = Color.GREEN) -> None: ...

    prop = describe(tool).input_schema["properties"]["color"]
    assert prop["default"] == "green"


def test_tuple_default_is_emitted_as_an_array() -> None:
    def tool(pair: tuple[int, int] = (1, 2)) -> None: ...

    assert describe(tool).input_schema["properties"]["pair"]["default"] == [1, 2]


def test_nan_default_is_left_out() -> None:
    def tool(x: float = float("nan")) -> None: ...

    assert describe(tool).input_schema["properties"]["x"] == {"type": "number"}


# -- containers -------------------------------------------------------------------------------


@pytest.mark.parametrize(
    "annotation",
    [list[int], List[int], typing.Sequence[int], collections.abc.Sequence[int]],
    ids=["list", "List", "typing.Sequence", "abc.Sequence"],
)
def test_sequences_are_arrays_of_their_item_type(annotation: Any) -> None:
    schema = shape_with(annotation).input_schema
    assert schema["properties"]["x"] == {"type": "array", "items": {"type": "integer"}}
    assert accepts(schema, {"x": [1, 2]})
    assert not accepts(schema, {"x": [1, "2"]})


@pytest.mark.parametrize("annotation", [set[str], frozenset[str], typing.AbstractSet[str]])
def test_sets_are_arrays_of_unique_items(annotation: Any) -> None:
    schema = shape_with(annotation).input_schema
    assert schema["properties"]["x"] == {
        "type": "array",
        "items": {"type": "string"},
        "uniqueItems": True,
    }
    assert not accepts(schema, {"x": ["a", "a"]})


def test_bare_list_and_dict_are_untyped_arrays_and_objects() -> None:
    assert property_of(list) == {"type": "array"}
    assert property_of(dict) == {"type": "object"}


def test_fixed_tuple_uses_prefix_items_with_exact_length() -> None:
    schema = shape_with(tuple[int, str]).input_schema
    assert schema["properties"]["x"] == {
        "type": "array",
        "prefixItems": [{"type": "integer"}, {"type": "string"}],
        "minItems": 2,
        "maxItems": 2,
    }
    assert accepts(schema, {"x": [1, "a"]})
    assert not accepts(schema, {"x": [1]})
    assert not accepts(schema, {"x": [1, "a", "b"]})
    assert not accepts(schema, {"x": ["a", 1]})


def test_variadic_tuple_is_an_array_of_its_item_type() -> None:
    assert property_of(tuple[float, ...]) == {"type": "array", "items": {"type": "number"}}


@pytest.mark.parametrize(
    "annotation", [dict[str, int], typing.Dict[str, int], typing.Mapping[str, int]]
)
def test_string_keyed_mapping_is_an_object_with_typed_values(annotation: Any) -> None:
    schema = shape_with(annotation).input_schema
    assert schema["properties"]["x"] == {
        "type": "object",
        "additionalProperties": {"type": "integer"},
    }
    assert accepts(schema, {"x": {"a": 1, "b": 2}})
    assert not accepts(schema, {"x": {"a": "1"}})


def test_mapping_with_literal_keys_restricts_property_names() -> None:
    schema = shape_with(dict[Literal["a", "b"], int]).input_schema
    assert accepts(schema, {"x": {"a": 1}})
    assert not accepts(schema, {"x": {"c": 1}})


def test_nested_containers_are_recursed() -> None:
    schema = shape_with(dict[str, list[tuple[int, bool]]]).input_schema
    assert accepts(schema, {"x": {"k": [[1, True], [2, False]]}})
    assert not accepts(schema, {"x": {"k": [[1, "no"]]}})


# -- unions, literals, enums ------------------------------------------------------------------


@pytest.mark.parametrize("annotation", [Optional[int], Union[int, None], int | None])
def test_optional_int_accepts_null(annotation: Any) -> None:
    schema = shape_with(annotation).input_schema
    assert schema["properties"]["x"] == {"anyOf": [{"type": "integer"}, {"type": "null"}]}
    assert accepts(schema, {"x": None})
    assert accepts(schema, {"x": 4})
    assert not accepts(schema, {"x": "4"})


def test_union_of_primitives_is_any_of_each_type() -> None:
    schema = shape_with(Union[int, str]).input_schema
    assert schema["properties"]["x"] == {"anyOf": [{"type": "integer"}, {"type": "string"}]}
    assert not accepts(schema, {"x": 1.5})


def test_union_of_structured_types_uses_any_of() -> None:
    schema = shape_with(Union[list[int], dict[str, str], None]).input_schema
    assert schema["properties"]["x"] == {
        "anyOf": [
            {"type": "array", "items": {"type": "integer"}},
            {"type": "object", "additionalProperties": {"type": "string"}},
            {"type": "null"},
        ]
    }
    assert accepts(schema, {"x": [1]})
    assert accepts(schema, {"x": {"a": "b"}})
    assert accepts(schema, {"x": None})
    assert not accepts(schema, {"x": "a"})


def test_union_of_dataclass_and_typeddict_accepts_either_object() -> None:
    schema = shape_with(Union[Point, Movie]).input_schema
    assert "anyOf" in schema["properties"]["x"]
    assert accepts(schema, {"x": {"x": 1, "y": 2}})
    assert accepts(schema, {"x": {"title": "Heat", "year": 1995}})
    assert not accepts(schema, {"x": {"title": "Heat"}})


def test_string_literal_is_a_typed_enum() -> None:
    schema = shape_with(Literal["asc", "desc"]).input_schema
    assert schema["properties"]["x"] == {"enum": ["asc", "desc"], "type": "string"}
    assert not accepts(schema, {"x": "up"})


def test_mixed_literal_is_an_enum_without_a_type_list() -> None:
    prop = property_of(Literal[1, "one", None])
    assert prop == {"enum": [1, "one", None]}


def test_enum_parameter_accepts_member_values() -> None:
    schema = shape_with(Color).input_schema
    assert schema["properties"]["x"] == {"enum": ["red", "green"], "type": "string"}
    assert accepts(schema, {"x": "red"})
    assert not accepts(schema, {"x": "RED"})


def test_int_enum_parameter_is_an_integer_enum() -> None:
    assert property_of(Level) == {"enum": [1, 2], "type": "integer"}


def test_annotated_string_becomes_the_description() -> None:
    assert property_of(Annotated[int, "How many lines."]) == {
        "type": "integer",
        "description": "How many lines.",
    }


def test_annotated_ignores_metadata_that_is_not_a_description() -> None:
    assert property_of(Annotated[str, 42, object()]) == {"type": "string"}


def test_new_type_uses_the_underlying_type() -> None:
    user_id = typing.NewType("user_id", int)
    assert property_of(user_id) == {"type": "integer"}


# -- structured types -------------------------------------------------------------------------


def test_typeddict_is_a_closed_object_with_all_keys_required() -> None:
    schema = shape_with(Movie).input_schema
    assert schema["properties"]["x"] == {
        "type": "object",
        "properties": {"title": {"type": "string"}, "year": {"type": "integer"}},
        "required": ["title", "year"],
        "additionalProperties": False,
    }
    assert not accepts(schema, {"x": {"title": "Heat"}})


def test_non_total_typeddict_requires_only_required_keys() -> None:
    schema = shape_with(PartialMovie).input_schema
    assert schema["properties"]["x"]["required"] == ["title"]
    assert accepts(schema, {"x": {"title": "Heat"}})
    assert not accepts(schema, {"x": {"year": 1995}})


def test_not_required_key_of_typeddict_may_be_omitted() -> None:
    schema = shape_with(Review).input_schema
    assert schema["properties"]["x"]["required"] == ["stars"]
    assert schema["properties"]["x"]["properties"]["comment"] == {"type": "string"}
    assert accepts(schema, {"x": {"stars": 5}})


def test_dataclass_fields_with_defaults_are_optional_and_documented() -> None:
    schema = shape_with(Point).input_schema
    prop = schema["properties"]["x"]
    assert prop["type"] == "object"
    assert prop["additionalProperties"] is False
    assert prop["required"] == ["x", "y"]
    assert prop["properties"]["label"] == {"type": "string", "default": "origin"}
    assert prop["properties"]["tags"] == {"type": "array", "items": {"type": "string"}}
    assert accepts(schema, {"x": {"x": 1, "y": 2.5}})
    assert not accepts(schema, {"x": {"x": 1}})


def test_dataclass_fields_excluded_from_init_are_not_arguments() -> None:
    @dataclasses.dataclass
    class Counter:
        start: int
        seen: int = dataclasses.field(default=0, init=False)

    prop = property_of(Counter)
    assert list(prop["properties"]) == ["start"]


def test_dataclass_docstring_describes_the_object_but_generated_docstring_does_not() -> None:
    @dataclasses.dataclass
    class Documented:
        """A documented thing."""

        a: int

    @dataclasses.dataclass
    class Undocumented:
        a: int

    assert property_of(Documented)["description"] == "A documented thing."
    assert "description" not in property_of(Undocumented)


def test_list_of_dataclasses_validates_each_item() -> None:
    schema = shape_with(list[Point]).input_schema
    assert accepts(schema, {"x": [{"x": 0, "y": 0}, {"x": 1, "y": 1, "label": "b"}]})
    assert not accepts(schema, {"x": [{"x": 0, "y": 0, "z": 0}]})


def test_recursive_dataclass_uses_defs_and_ref() -> None:
    schema = shape_with(Tree).input_schema
    assert schema["properties"]["x"] == {"$ref": "#/$defs/Tree"}
    tree = schema["$defs"]["Tree"]
    assert tree["properties"]["children"] == {"type": "array", "items": {"$ref": "#/$defs/Tree"}}
    assert accepts(schema, {"x": {"value": 1, "children": [{"value": 2, "children": []}]}})
    assert not accepts(schema, {"x": {"value": 1, "children": [{"value": "two"}]}})


def test_self_referencing_typeddict_is_described_once() -> None:
    schema = shape_with(Employee).input_schema
    assert list(schema["$defs"]) == ["Employee"]
    boss = {"name": "A", "manager": None, "reports": []}
    assert accepts(schema, {"x": {"name": "B", "manager": boss, "reports": [boss]}})
    assert not accepts(schema, {"x": {"name": "B", "manager": {"name": 1}, "reports": []}})


def test_mutually_recursive_types_terminate() -> None:
    schema = shape_with(Ping).input_schema
    assert accepts(schema, {"x": {"pong": {"ping": {"pong": None}}}})
    assert not accepts(schema, {"x": {"pong": {"ping": {"pong": 3}}}})


def test_recursive_type_used_by_two_parameters_shares_one_definition() -> None:
    def tool(a: Tree, b: list[Tree]) -> None: ...

    schema = describe(tool).input_schema
    assert list(schema["$defs"]) == ["Tree"]
    assert schema["properties"]["b"] == {"type": "array", "items": {"$ref": "#/$defs/Tree"}}
    validator(schema)


# -- pydantic ---------------------------------------------------------------------------------


def test_pydantic_model_uses_its_own_json_schema() -> None:
    pydantic = pytest.importorskip("pydantic")

    class Address(pydantic.BaseModel):
        city: str

    class Person(pydantic.BaseModel):
        name: str
        age: int = 0
        home: Address

    def tool(person: Person) -> None: ...

    schema = describe(tool).input_schema
    expected = Person.model_json_schema()
    assert schema["properties"]["person"] == {k: v for k, v in expected.items() if k != "$defs"}
    assert schema["$defs"] == expected["$defs"]
    assert accepts(schema, {"person": {"name": "A", "home": {"city": "B"}}})
    assert not accepts(schema, {"person": {"name": "A", "home": {}}})


def test_pydantic_definitions_with_clashing_names_are_renamed() -> None:
    pydantic = pytest.importorskip("pydantic")

    class Inner(pydantic.BaseModel):
        a: int

    class First(pydantic.BaseModel):
        inner: Inner

    def make_second() -> Any:
        class Inner(pydantic.BaseModel):
            b: str

        class Second(pydantic.BaseModel):
            inner: Inner

        return Second

    Second = make_second()

    def tool(first: First, second: Second) -> None:  # type: ignore[valid-type]
        ...

    schema = describe(tool).input_schema
    assert sorted(schema["$defs"]) == ["Inner", "Inner2"]
    assert accepts(schema, {"first": {"inner": {"a": 1}}, "second": {"inner": {"b": "x"}}})
    assert not accepts(schema, {"first": {"inner": {"a": 1}}, "second": {"inner": {"a": 1}}})


def test_describing_plain_tools_never_imports_pydantic() -> None:
    code = (
        "import sys\n"
        "import dataclasses, enum, typing\n"
        "from mcpline._jsonvalue import to_jsonable\n"
        "from mcpline._tool import describe\n"
        "class C(enum.Enum):\n    A = 'a'\n"
        "@dataclasses.dataclass\nclass P:\n    x: int\n"
        "def tool(a: int, b: list[P], c: C = C.A) -> dict[str, P]: ...\n"
        "describe(tool)\n"
        "to_jsonable({'p': P(1), 'c': C.A})\n"
        "heavy = [m for m in ('pydantic', 'asyncio', 'json') if m in sys.modules]\n"
        "print(','.join(heavy))\n"
    )
    result = subprocess.run(
        [sys.executable, "-B", "-c", code],
        capture_output=True,
        text=True,
        check=True,
        timeout=60,
    )
    assert result.stdout.strip() == ""


# -- context, names, kinds of callables -------------------------------------------------------


def test_context_parameter_is_excluded_from_the_schema() -> None:
    def tool(path: str, ctx: FakeContext) -> int:
        return 0

    shape = describe(tool, context_types=(FakeContext,))
    assert shape.context_param == "ctx"
    assert list(shape.input_schema["properties"]) == ["path"]
    assert shape.input_schema["required"] == ["path"]
    assert shape.param_names == ("path",)


def test_optional_context_parameter_is_recognised() -> None:
    def tool(ctx: Optional[FakeContext] = None) -> None: ...

    shape = describe(tool, context_types=(FakeContext,))
    assert shape.context_param == "ctx"
    assert shape.input_schema["properties"] == {}


def test_subclass_of_a_context_type_is_a_context() -> None:
    class SpecialContext(FakeContext):
        pass

    def tool(c: SpecialContext) -> None: ...

    assert describe(tool, context_types=(FakeContext,)).context_param == "c"


def test_without_context_types_there_is_no_context_parameter() -> None:
    def tool(a: int) -> None: ...

    assert describe(tool, context_types=(FakeContext,)).context_param is None


def test_string_annotations_are_resolved_in_the_function_module(load_module: ModuleLoader) -> None:
    source = (
        "from __future__ import annotations\n"
        "import dataclasses\n"
        "@dataclasses.dataclass\n"
        "class Box:\n"
        "    size: int\n"
        "def tool(box: Box, ctx: FakeContext, n: int | None = None) -> list[Box]:\n"
        "    return [box]\n"
    )
    module = load_module("schema_future_module", source, FakeContext=FakeContext)
    shape = describe(module.tool, context_types=(FakeContext,))
    assert shape.context_param == "ctx"
    assert shape.input_schema["properties"]["box"]["properties"] == {"size": {"type": "integer"}}
    assert shape.input_schema["properties"]["n"] == {
        "anyOf": [{"type": "integer"}, {"type": "null"}],
        "default": None,
    }
    assert shape.output_schema is not None


def test_context_imported_only_for_type_checking_is_recognised(load_module: ModuleLoader) -> None:
    source = (
        "from __future__ import annotations\n"
        "import typing\n"
        "if typing.TYPE_CHECKING:\n"
        "    from somewhere import FakeContext\n"
        "def tool(q: str, ctx: FakeContext | None = None) -> None: ...\n"
    )
    module = load_module("schema_type_checking_module", source)
    shape = describe(module.tool, context_types=(FakeContext,))
    assert shape.context_param == "ctx"
    assert shape.param_names == ("q",)


def test_name_defaults_to_the_function_name_and_can_be_overridden() -> None:
    def word_count(path: str) -> int:
        return 0

    assert describe(word_count).name == "word_count"
    assert describe(word_count, name="files.count-words").name == "files.count-words"


def test_async_functions_are_flagged() -> None:
    async def fetch(url: str) -> str:
        return url

    def compute(n: int) -> int:
        return n

    assert describe(fetch).is_async is True
    assert describe(compute).is_async is False


def test_bound_method_does_not_expose_self() -> None:
    class Service:
        def lookup(self, key: str) -> str:
            return key

    shape = describe(Service().lookup)
    assert shape.name == "lookup"
    assert shape.param_names == ("key",)


def test_partial_exposes_only_the_remaining_parameters() -> None:
    def search(root: str, pattern: str, limit: int = 5) -> list[str]:
        """Search files."""
        return []

    shape = describe(functools.partial(search, "/data"), name="search")
    assert shape.param_names == ("pattern", "limit")
    assert shape.description == "Search files."


def test_callable_object_is_described_through_its_call_method() -> None:
    class Adder:
        async def __call__(self, a: int, b: int) -> int:
            """Add two integers."""
            return a + b

    shape = describe(Adder())
    assert shape.name == "Adder"
    assert shape.description == "Add two integers."
    assert shape.param_names == ("a", "b")
    assert shape.is_async is True


def test_shapes_are_immutable() -> None:
    def tool(a: int) -> None: ...

    shape = describe(tool)
    with pytest.raises(AttributeError, match="immutable"):
        shape.name = "other"  # type: ignore[misc]


def test_a_shape_built_without_every_field_is_refused_by_name() -> None:
    with pytest.raises(TypeError, match=r"ToolShape\(\) missing fields: .*input_schema"):
        ToolShape(name="t")  # type: ignore[call-arg]


def test_typeddict_markers_written_as_strings_are_honoured(load_module: ModuleLoader) -> None:
    source = (
        "from __future__ import annotations\n"
        f"from {TYPING_MODULE} import NotRequired, Required, TypedDict\n"
        "class Query(TypedDict, total=False):\n"
        "    text: Required[str]\n"
        "    limit: int\n"
        "class Page(TypedDict):\n"
        "    number: int\n"
        "    cursor: NotRequired[str]\n"
        "def tool(query: Query, page: Page) -> None: ...\n"
    )
    module = load_module("schema_future_typeddict", source)
    properties = describe(module.tool).input_schema["properties"]
    assert properties["query"]["required"] == ["text"]
    assert properties["page"]["required"] == ["number"]
