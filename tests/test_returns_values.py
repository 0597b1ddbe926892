"""What a tool returns becomes the tools/call result, shaped for the negotiated revision."""

import base64
import dataclasses
import json
import sys
from typing import Any

import jsonschema
import pytest
from conftest import tools_by_name
from mcpline import Audio, Image, Server, ToolResult
from mcpline.testing import Client

if sys.version_info >= (3, 11):
    from typing import TypedDict
else:
    from typing_extensions import TypedDict

STRUCTURED_VERSIONS = ("2025-06-18", "2025-11-25", "2026-07-28")
TEXT_ONLY_VERSIONS = ("2024-11-05", "2025-03-26")

PNG = b"\x89PNG\r\n\x1a\n" + b"\x00\x00\x00\rIHDR" + bytes(range(32))
JPEG = b"\xff\xd8\xff\xe0" + bytes(range(16))
WAV = b"RIFF\x24\x00\x00\x00WAVEfmt " + bytes(range(16))


@dataclasses.dataclass
class Point:
    x: int
    y: int


class Movie(TypedDict):
    title: str
    year: int


server = Server("returns")


@server.tool
def give_str() -> str:
    return "hello"


@server.tool
def give_none() -> None:
    return None


@server.tool
def give_int() -> int:
    return 3


@server.tool
def give_float() -> float:
    return 2.5


@server.tool
def give_bool() -> bool:
    return True


@server.tool
def give_list() -> list[int]:
    return [1, 2, 3]


@server.tool
def give_dict() -> dict[str, int]:
    return {"a": 1, "b": 2}


@server.tool
def give_dataclass() -> Point:
    return Point(1, 2)


@server.tool
def give_typeddict() -> Movie:
    return {"title": "Alien", "year": 1979}


@server.tool
def give_unannotated_dict():  # no return annotation: structured data, no outputSchema
    return {"k": [1, 2]}


@server.tool
def give_png_bytes() -> bytes:
    return PNG


@server.tool
def give_image() -> Image:
    return Image(JPEG, "image/jpeg")


@server.tool
def give_audio() -> Audio:
    return Audio(WAV, "audio/wav")


@server.tool
def give_tool_result() -> ToolResult:
    return ToolResult(
        content=["first", Image(PNG, "image/png"), "last"],
        structured={"k": 1},
        is_error=True,
    )


@server.tool
def give_plain_tool_result() -> ToolResult:
    return ToolResult(content=["just text"])


RAW_BLOCKS: list[dict[str, Any]] = [
    {"type": "text", "text": "raw text", "annotations": {"audience": ["user"], "priority": 0.5}},
    {
        "type": "resource",
        "resource": {"uri": "file:///notes.txt", "mimeType": "text/plain", "text": "notes"},
    },
]


@server.tool
def give_raw_blocks() -> ToolResult:
    return ToolResult(content=[dict(block) for block in RAW_BLOCKS])


def call(name: str, version: str = "2025-11-25"):
    with Client(server, protocol_version=version) as client:
        return client.call(name)


def listed(version: str = "2025-11-25") -> dict[str, dict[str, Any]]:
    with Client(server, protocol_version=version) as client:
        return tools_by_name(client.list_tools())


def mirror_of(result) -> Any:
    """The value of the result's single text block, parsed as JSON."""
    texts = [c for c in result.content if c["type"] == "text"]
    assert len(texts) == 1, result.content
    return json.loads(texts[0]["text"])


# ----- text and nothing -----


@pytest.mark.parametrize("version", TEXT_ONLY_VERSIONS + STRUCTURED_VERSIONS)
def test_str_becomes_one_text_block_without_structured_content(version):
    result = call("give_str", version)
    assert result.content == [{"type": "text", "text": "hello"}]
    assert "structuredContent" not in result.raw
    assert not result.is_error
    assert "outputSchema" not in listed(version)["give_str"]


@pytest.mark.parametrize("version", ["2024-11-05", "2025-11-25", "2026-07-28"])
def test_none_becomes_empty_content(version):
    result = call("give_none", version)
    assert result.raw["content"] == []
    assert "structuredContent" not in result.raw
    assert not result.is_error
    assert "outputSchema" not in listed(version)["give_none"]


# ----- JSON-like values -----

SCALARS_AND_LISTS = [
    ("give_int", 3, {"type": "integer"}),
    ("give_float", 2.5, {"type": "number"}),
    ("give_bool", True, {"type": "boolean"}),
    ("give_list", [1, 2, 3], {"type": "array", "items": {"type": "integer"}}),
]
OBJECTS = [
    ("give_dict", {"a": 1, "b": 2}),
    ("give_dataclass", {"x": 1, "y": 2}),
    ("give_typeddict", {"title": "Alien", "year": 1979}),
]


@pytest.mark.parametrize("version", STRUCTURED_VERSIONS)
@pytest.mark.parametrize(("tool", "value", "schema"), SCALARS_AND_LISTS)
def test_non_object_value_is_wrapped_as_result_in_structured_content(version, tool, value, schema):
    result = call(tool, version)
    assert not result.is_error
    assert result.structured == {"result": value}
    assert type(result.structured["result"]) is type(value)


@pytest.mark.parametrize("version", STRUCTURED_VERSIONS)
@pytest.mark.parametrize(("tool", "value", "schema"), SCALARS_AND_LISTS)
def test_non_object_value_has_a_wrapping_output_schema(version, tool, value, schema):
    output_schema = listed(version)[tool]["outputSchema"]
    assert output_schema["type"] == "object"
    assert output_schema["properties"]["result"] == schema
    assert output_schema["required"] == ["result"]


@pytest.mark.parametrize("version", STRUCTURED_VERSIONS)
@pytest.mark.parametrize(("tool", "value"), OBJECTS)
def test_object_value_is_structured_content_as_is(version, tool, value):
    result = call(tool, version)
    assert not result.is_error
    assert result.structured == value


@pytest.mark.parametrize("version", STRUCTURED_VERSIONS)
@pytest.mark.parametrize("tool", [t for t, _, _ in SCALARS_AND_LISTS] + [t for t, _ in OBJECTS])
def test_structured_content_conforms_to_the_listed_output_schema(version, tool):
    output_schema = listed(version)[tool]["outputSchema"]
    result = call(tool, version)
    jsonschema.Draft202012Validator.check_schema(output_schema)
    jsonschema.validate(result.structured, output_schema, cls=jsonschema.Draft202012Validator)


def test_dataclass_and_typeddict_output_schemas_describe_their_fields():
    tools = listed("2025-11-25")
    point = tools["give_dataclass"]["outputSchema"]
    assert point["type"] == "object"
    assert point["properties"]["x"]["type"] == "integer"
    assert point["properties"]["y"]["type"] == "integer"
    movie = tools["give_typeddict"]["outputSchema"]
    assert movie["properties"]["title"]["type"] == "string"
    assert movie["properties"]["year"]["type"] == "integer"


@pytest.mark.parametrize("version", STRUCTURED_VERSIONS)
@pytest.mark.parametrize(("tool", "value"), [(t, v) for t, v, _ in SCALARS_AND_LISTS] + OBJECTS)
def test_structured_result_carries_a_json_text_mirror(version, tool, value):
    result = call(tool, version)
    # The mirror serialises the value (or, equivalently, the structuredContent wrapping it).
    assert mirror_of(result) in (value, result.structured)


def test_unannotated_json_value_is_structured_without_an_output_schema():
    result = call("give_unannotated_dict", "2025-11-25")
    assert result.structured == {"k": [1, 2]}
    assert mirror_of(result) == {"k": [1, 2]}
    assert "outputSchema" not in listed("2025-11-25")["give_unannotated_dict"]


@pytest.mark.parametrize("version", TEXT_ONLY_VERSIONS)
@pytest.mark.parametrize(("tool", "value"), [(t, v) for t, v, _ in SCALARS_AND_LISTS] + OBJECTS)
def test_revisions_before_2025_06_18_get_only_the_json_text(version, tool, value):
    result = call(tool, version)
    assert not result.is_error
    assert "structuredContent" not in result.raw
    assert json.loads(result.content[0]["text"]) == value
    assert result.content == [{"type": "text", "text": result.content[0]["text"]}]


@pytest.mark.parametrize("version", TEXT_ONLY_VERSIONS)
def test_revisions_before_2025_06_18_list_no_output_schema(version):
    tools = listed(version)
    assert not [name for name, tool in tools.items() if "outputSchema" in tool]


# ----- binary and media -----


@pytest.mark.parametrize("version", ["2024-11-05", "2025-11-25", "2026-07-28"])
def test_png_bytes_become_an_image_block(version):
    result = call("give_png_bytes", version)
    assert len(result.content) == 1
    block = result.content[0]
    assert block["type"] == "image"
    assert block["mimeType"] == "image/png"
    assert base64.b64decode(block["data"]) == PNG
    assert "structuredContent" not in result.raw
    assert "outputSchema" not in listed(version)["give_png_bytes"]


def test_image_becomes_a_base64_image_block_with_its_mime_type():
    result = call("give_image")
    assert result.content == [
        {"type": "image", "data": base64.b64encode(JPEG).decode(), "mimeType": "image/jpeg"}
    ]


@pytest.mark.parametrize("version", ["2025-03-26", "2025-06-18", "2025-11-25", "2026-07-28"])
def test_audio_becomes_an_audio_block_from_2025_03_26(version):
    result = call("give_audio", version)
    assert result.content == [
        {"type": "audio", "data": base64.b64encode(WAV).decode(), "mimeType": "audio/wav"}
    ]


def test_audio_becomes_a_text_note_for_2024_11_05():
    result = call("give_audio", "2024-11-05")
    assert len(result.content) == 1
    block = result.content[0]
    assert block["type"] == "text"
    assert "audio" in block["text"]
    assert not result.is_error


# ----- ToolResult -----


@pytest.mark.parametrize("version", ["2025-06-18", "2025-11-25", "2026-07-28"])
def test_tool_result_is_honoured_exactly(version):
    result = call("give_tool_result", version)
    assert result.is_error is True
    assert result.content == [
        {"type": "text", "text": "first"},
        {"type": "image", "data": base64.b64encode(PNG).decode(), "mimeType": "image/png"},
        {"type": "text", "text": "last"},
    ]
    assert result.structured == {"k": 1}


@pytest.mark.parametrize("version", TEXT_ONLY_VERSIONS)
def test_tool_result_structured_part_is_left_out_before_2025_06_18(version):
    result = call("give_tool_result", version)
    assert result.is_error is True
    assert [c["type"] for c in result.content] == ["text", "image", "text"]
    assert "structuredContent" not in result.raw


def test_tool_result_without_is_error_is_a_success():
    result = call("give_plain_tool_result")
    assert result.content == [{"type": "text", "text": "just text"}]
    assert result.raw.get("isError", False) is False
    assert "structuredContent" not in result.raw


@pytest.mark.parametrize("version", ["2025-06-18", "2025-11-25"])
def test_raw_content_dicts_are_passed_through(version):
    result = call("give_raw_blocks", version)
    assert result.content == RAW_BLOCKS
    assert not result.is_error
