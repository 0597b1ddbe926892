"""The server that the official MCP conformance suite (@modelcontextprotocol/conformance) tests.

Serve it over Streamable HTTP and point the suite at it:

    mcpline serve tests/servers/conformance_server.py:server --http 127.0.0.1:PORT
    conformance server --url http://127.0.0.1:PORT/mcp --requirements 2025-11-25

Its tools, resources and prompts are the ones the suite's server scenarios call by name, with
the results those scenarios expect (as the suite's reference "everything server" returns them,
except that the audio here is a complete WAV file). What mcpline cannot express is left out:
tools that ask the client for something, by a server-to-client request or a 2026-07-28
InputRequiredResult (test_sampling, test_elicitation, test_elicitation_sep1034_defaults,
test_elicitation_sep1330_enums, test_streaming_elicitation, test_input_required_result_*), a
tool that requires a client capability (test_missing_capability), tools that change the tool or
prompt list at run time (test_trigger_tool_change, test_trigger_prompt_change) and
test_reconnection, which closes its own SSE stream mid-call; resources/subscribe has no API
either.

test_custom_header marks its parameter with ``x-mcp-header`` (through pydantic's ``Field``,
which the test extra brings in with ``mcp``) for the suite's http-custom-header-server-validation
scenario (SEP-2243 Mcp-Param-* headers).
"""

from __future__ import annotations

import base64
import io
import json
import time
import wave
from typing import Annotated, Any, Literal, TypedDict

from mcpline import Audio, Context, Image, Message, Server, ToolError, ToolResult
from pydantic import Field

server = Server(
    "mcp-conformance-test-server",
    version="1.0.0",
    instructions="The server under test of the MCP conformance suite.",
)

# A 1x1 red pixel, the image the suite's reference server sends.
PNG = base64.b64decode(
    "iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mP8z8DwHwAFBQIAX8jx0gAAAABJRU5ErkJggg=="
)


def _silence_wav() -> bytes:
    """One silent 16-bit mono sample at 8 kHz: the smallest valid WAV file."""
    out = io.BytesIO()
    with wave.open(out, "wb") as w:
        w.setnchannels(1)
        w.setsampwidth(2)
        w.setframerate(8000)
        w.writeframes(b"\x00\x00")
    return out.getvalue()


WAV = _silence_wav()


# ----- tools -----


@server.tool
def test_simple_text() -> str:
    """Tests simple text content response."""
    return "This is a simple text response for testing."


@server.tool
def test_image_content() -> Image:
    """Tests image content response."""
    return Image(PNG, "image/png")


@server.tool
def test_audio_content() -> Audio:
    """Tests audio content response."""
    return Audio(WAV, "audio/wav")


@server.tool
def test_embedded_resource() -> ToolResult:
    """Tests embedded resource content response."""
    return ToolResult(
        content=[
            {
                "type": "resource",
                "resource": {
                    "uri": "test://embedded-resource",
                    "mimeType": "text/plain",
                    "text": "This is an embedded resource content.",
                },
            }
        ]
    )


@server.tool
def test_multiple_content_types() -> ToolResult:
    """Tests response with multiple content types (text, image, resource)."""
    return ToolResult(
        content=[
            "Multiple content types test:",
            Image(PNG, "image/png"),
            {
                "type": "resource",
                "resource": {
                    "uri": "test://mixed-content-resource",
                    "mimeType": "application/json",
                    "text": '{"test":"data","value":123}',
                },
            },
        ]
    )


@server.tool
def test_tool_with_logging(ctx: Context) -> str:
    """Tests tool that emits log messages during execution."""
    ctx.log("info", "Tool execution started")
    time.sleep(0.05)
    ctx.log("info", "Tool processing data")
    time.sleep(0.05)
    ctx.log("info", "Tool execution completed")
    return "Tool with logging executed successfully"


@server.tool
def test_tool_with_progress(ctx: Context) -> str:
    """Tests tool that reports progress notifications."""
    ctx.progress(0, 100, "Completed step 0 of 100")
    time.sleep(0.05)
    ctx.progress(50, 100, "Completed step 50 of 100")
    time.sleep(0.05)
    ctx.progress(100, 100, "Completed step 100 of 100")
    return "Tool with progress executed successfully"


@server.tool
def test_error_handling() -> str:
    """Tests error response handling."""
    raise ToolError("This tool intentionally returns an error for testing")


@server.tool
def test_logging_tool(ctx: Context) -> str:
    """Logs one message at info level (2026-07-28: sent only if the request sets a log level)."""
    ctx.log("info", "Diagnostic trace logging activated")
    return "Logging evaluated"


class Address(TypedDict, total=False):
    street: str
    city: str


@server.tool
def json_schema_2020_12_tool(
    name: str | None = None,
    address: Address | None = None,
    contactMethod: Literal["phone", "email"] | None = None,
    phone: str | None = None,
    email: str | None = None,
) -> str:
    """Tool with JSON Schema 2020-12 features for conformance testing (SEP-1613)."""
    given = {
        "name": name,
        "address": address,
        "contactMethod": contactMethod,
        "phone": phone,
        "email": email,
    }
    args = {key: value for key, value in given.items() if value is not None}
    return f"JSON Schema 2020-12 tool called with: {json.dumps(args)}"


@server.tool
def test_custom_header(
    region: Annotated[
        str,
        Field(
            description="Mirrored into the Mcp-Param-Region header (SEP-2243)",
            json_schema_extra={"x-mcp-header": "Region"},
        ),
    ],
) -> str:
    """Echoes a parameter the client also sends as the Mcp-Param-Region header (SEP-2243)."""
    return f"Region: {region}"


# ----- resources -----


@server.resource("test://static-text", name="static-text", mime_type="text/plain")
def static_text() -> str:
    """A static text resource for testing."""
    return "This is the content of the static text resource."


@server.resource("test://static-binary", name="static-binary", mime_type="image/png")
def static_binary() -> bytes:
    """A static binary resource (image) for testing."""
    return PNG


@server.resource("test://template/{id}/data", name="template", mime_type="application/json")
def template_data(id: str) -> dict[str, object]:
    """A resource template with parameter substitution."""
    return {"id": id, "templateTest": True, "data": f"Data for ID: {id}"}


@server.resource("test://watched-resource", name="watched-resource", mime_type="text/plain")
def watched_resource() -> str:
    """A resource a client can subscribe to."""
    return "Watched resource content"


# ----- prompts -----


@server.prompt(title="Simple Test Prompt")
def test_simple_prompt() -> str:
    """A simple prompt without arguments."""
    return "This is a simple prompt for testing."


@server.prompt(title="Prompt With Arguments")
def test_prompt_with_arguments(
    arg1: Annotated[str, "First test argument"],
    arg2: Annotated[str, "Second test argument"],
) -> str:
    """A prompt with required arguments."""
    return f"Prompt with arguments: arg1='{arg1}', arg2='{arg2}'"


@server.prompt(title="Prompt With Embedded Resource")
def test_prompt_with_embedded_resource(
    resourceUri: Annotated[str, "URI of the resource to embed"],
) -> list[Message]:
    """A prompt that includes an embedded resource."""
    resource = {
        "uri": resourceUri,
        "mimeType": "text/plain",
        "text": "Embedded resource content for testing.",
    }
    return [
        Message({"type": "resource", "resource": resource}),
        Message("Please process the embedded resource above."),
    ]


@server.prompt(title="Prompt With Image")
def test_prompt_with_image() -> list[Message]:
    """A prompt that includes image content."""
    return [Message(Image(PNG, "image/png")), Message("Please analyze the image above.")]


# ----- completion -----

SUGGESTIONS = ["paris", "park", "party", "test", "testValue1", "testValue2"]


@server.completion
def complete(ref: Any, argument: Any, context: Any) -> list[str] | None:
    """Suggests values for test_prompt_with_arguments' arguments; the declared ones elsewhere."""
    if ref.type == "ref/prompt" and ref.name == "test_prompt_with_arguments":
        return [s for s in SUGGESTIONS if s.startswith(argument.value)]
    return None


if __name__ == "__main__":
    server.run()
