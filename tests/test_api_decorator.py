"""``@server.tool``: registration, naming, hints and the schema a client sees in tools/list."""

from typing import Annotated

import pytest
from conftest import HANDSHAKE_VERSIONS, tools_by_name
from mcpline import Context, McplineError, Server
from mcpline._results import SetupError
from mcpline.testing import Client


def listed(server: Server, version: str = "2025-11-25") -> dict[str, dict]:
    with Client(server, protocol_version=version) as client:
        return tools_by_name(client.list_tools())


# ----- both decorator forms -----


def test_bare_decorator_registers_and_returns_the_function_unchanged():
    server = Server("t")

    def add(a: int, b: int) -> int:
        return a + b

    decorated = server.tool(add)

    assert decorated is add
    assert add(2, 3) == 5
    assert server.tool_names == ["add"]


def test_bare_decorator_syntax_leaves_the_function_directly_callable():
    server = Server("t")

    @server.tool
    def greet(name: str) -> str:
        return f"hi {name}"

    assert greet("bob") == "hi bob"
    with Client(server) as client:
        assert client.call("greet", name="ann").text == "hi ann"


def test_decorator_with_options_registers_and_returns_the_function_unchanged():
    server = Server("t")

    def mul(a: int, b: int) -> int:
        return a * b

    decorated = server.tool(name="times", read_only=True)(mul)

    assert decorated is mul
    assert mul(3, 4) == 12
    assert server.tool_names == ["times"]


def test_decorator_with_empty_parentheses_registers_under_the_function_name():
    server = Server("t")

    @server.tool()
    def ping_me() -> str:
        return "pong"

    assert ping_me() == "pong"
    assert server.tool_names == ["ping_me"]


def test_tools_are_listed_sorted_by_name():
    server = Server("t")
    for name in ("zeta", "alpha", "mid"):
        server.tool(name=name)(lambda: "x")
    with Client(server) as client:
        assert [t["name"] for t in client.list_tools()] == ["alpha", "mid", "zeta"]


# ----- overrides -----


def test_name_override_replaces_the_function_name():
    server = Server("t")

    @server.tool(name="renamed.tool-1")
    def original() -> str:
        return "x"

    tools = listed(server)
    assert set(tools) == {"renamed.tool-1"}
    with Client(server) as client:
        assert client.call("renamed.tool-1").text == "x"


def test_description_defaults_to_the_docstring_summary():
    server = Server("t")

    @server.tool
    def documented(path: str) -> str:
        """Read a file.

        Args:
            path: Which file.
        """
        return path

    assert listed(server)["documented"]["description"] == "Read a file."


def test_description_override_replaces_the_docstring():
    server = Server("t")

    @server.tool(description="Custom description.")
    def documented() -> str:
        """Docstring text."""
        return ""

    assert listed(server)["documented"]["description"] == "Custom description."


def test_title_is_listed_from_2025_06_18():
    server = Server("t")

    @server.tool(title="Nice Title")
    def titled() -> str:
        return ""

    assert listed(server, "2025-06-18")["titled"]["title"] == "Nice Title"
    assert listed(server, "2025-11-25")["titled"]["title"] == "Nice Title"


def test_title_is_not_a_tool_field_before_2025_06_18():
    server = Server("t")

    @server.tool(title="Nice Title")
    def titled() -> str:
        return ""

    for version in ("2024-11-05", "2025-03-26"):
        assert "title" not in listed(server, version)["titled"]


# ----- hints -----


def _hinted_server() -> Server:
    server = Server("t")

    @server.tool(read_only=True, destructive=False, idempotent=True, open_world=False)
    def hinted() -> str:
        return ""

    @server.tool
    def plain() -> str:
        return ""

    return server


@pytest.mark.parametrize("version", ["2025-03-26", "2025-06-18", "2025-11-25", "2026-07-28"])
def test_hints_appear_as_annotations_from_2025_03_26(version):
    tools = listed(_hinted_server(), version)
    assert tools["hinted"]["annotations"] == {
        "readOnlyHint": True,
        "destructiveHint": False,
        "idempotentHint": True,
        "openWorldHint": False,
    }
    assert "annotations" not in tools["plain"]


def test_hints_are_left_out_for_2024_11_05():
    tools = listed(_hinted_server(), "2024-11-05")
    assert "annotations" not in tools["hinted"]
    assert "annotations" not in tools["plain"]


def test_only_the_hints_given_are_listed():
    server = Server("t")

    @server.tool(destructive=True)
    def wipe() -> str:
        return ""

    assert listed(server)["wipe"]["annotations"] == {"destructiveHint": True}


# ----- names -----


@pytest.mark.parametrize(
    "bad_name",
    ["", "x" * 65, "has space", "a/b", "caf\u00e9", "semi;colon"],
    ids=["empty", "65-chars", "space", "slash", "non-ascii", "semicolon"],
)
def test_invalid_tool_name_raises_a_setup_error_at_registration(bad_name):
    server = Server("t")
    with pytest.raises(McplineError) as excinfo:
        server.tool(name=bad_name)(lambda: "x")
    assert isinstance(excinfo.value, SetupError)
    assert server.tool_names == []


@pytest.mark.parametrize("good_name", ["x", "x" * 64, "A-z_0.9"])
def test_names_of_1_to_64_allowed_characters_are_accepted(good_name):
    server = Server("t")
    server.tool(name=good_name)(lambda: "x")
    assert server.tool_names == [good_name]


def test_duplicate_tool_name_raises_a_setup_error():
    server = Server("t")

    @server.tool
    def same() -> str:
        return "first"

    def other() -> str:
        return "second"

    with pytest.raises(McplineError, match="same") as excinfo:
        server.tool(name="same")(other)
    assert isinstance(excinfo.value, SetupError)
    with Client(server) as client:
        assert client.call("same").text == "first"


def test_positional_name_misuse_raises_type_error_pointing_to_keywords():
    server = Server("t")
    with pytest.raises(TypeError, match=r"name="):
        server.tool("x")  # type: ignore[call-overload]
    assert server.tool_names == []


# ----- schemas from the signature -----


def test_schema_maps_python_types_to_json_types():
    server = Server("t")

    @server.tool
    def typed(i: int, s: str, f: float, b: bool, xs: list[int], m: dict[str, str]) -> str:
        return ""

    props = listed(server)["typed"]["inputSchema"]["properties"]
    assert props["i"]["type"] == "integer"
    assert props["s"]["type"] == "string"
    assert props["f"]["type"] == "number"
    assert props["b"]["type"] == "boolean"
    assert props["xs"]["type"] == "array"
    assert props["xs"]["items"] == {"type": "integer"}
    assert props["m"]["type"] == "object"
    assert props["m"]["additionalProperties"] == {"type": "string"}


def test_schema_is_a_closed_object_with_required_parameters_and_defaults():
    server = Server("t")

    @server.tool
    def read(path: str, limit: int = 10, encoding: str = "utf-8") -> str:
        return ""

    schema = listed(server)["read"]["inputSchema"]
    assert schema["type"] == "object"
    assert schema["required"] == ["path"]
    assert schema["additionalProperties"] is False
    assert schema["properties"]["limit"]["default"] == 10
    assert schema["properties"]["encoding"]["default"] == "utf-8"
    assert "default" not in schema["properties"]["path"]


def test_schema_descriptions_come_from_annotated_and_the_args_section():
    server = Server("t")

    @server.tool
    def described(
        path: Annotated[str, "Where to look."],
        depth: int = 1,
    ) -> str:
        """Search.

        Args:
            path: Overridden by Annotated.
            depth: How deep to go.
        """
        return ""

    props = listed(server)["described"]["inputSchema"]["properties"]
    assert props["path"]["description"] == "Where to look."
    assert props["depth"]["description"] == "How deep to go."


def test_context_parameter_is_injected_and_left_out_of_the_schema():
    server = Server("t")

    @server.tool
    def with_ctx(text: str, ctx: Context) -> str:
        return f"{text}:{ctx.tool_name}"

    schema = listed(server)["with_ctx"]["inputSchema"]
    assert set(schema["properties"]) == {"text"}
    assert schema["required"] == ["text"]
    with Client(server) as client:
        result = client.call("with_ctx", text="hi")
    assert not result.is_error
    assert result.text == "hi:with_ctx"


def test_context_cannot_be_passed_as_an_argument():
    server = Server("t")

    @server.tool
    def with_ctx(ctx: Context) -> str:
        return "ran"

    with Client(server) as client:
        result = client.call("with_ctx", ctx="forged")
    assert result.is_error
    assert "ctx" in result.text


@pytest.mark.parametrize("version", HANDSHAKE_VERSIONS)
def test_input_schema_is_the_same_in_every_handshake_revision(version):
    server = Server("t")

    @server.tool
    def read(path: str, limit: int = 10) -> str:
        return ""

    assert listed(server, version)["read"]["inputSchema"] == listed(server)["read"]["inputSchema"]
