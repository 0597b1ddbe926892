"""Interop: the official Python MCP SDK client drives tests/servers/interop_server.py over stdio.

Every test starts the server as a real subprocess (``sys.executable``, the caller's whole
environment, so PYTHONPATH and virtualenvs carry over) and talks to it only through the SDK's
``stdio_client`` + ``ClientSession``. Results are compared in wire form
(``model_dump(by_alias=True)``), which reads the same whatever the SDK names its attributes.

Written against ``mcp`` 2.x (the version ``pip install '.[test]'`` resolves today); the tests
that need 2.x-only client API (``discover``/``adopt`` for the 2026-07-28 era and explicit
revision negotiation) skip with a reason on an older SDK.
"""

from __future__ import annotations

import sys
import tempfile
from collections.abc import Awaitable, Callable
from pathlib import Path
from typing import Any, TextIO, TypeVar

import anyio
import pytest
from conftest import host_environ
from mcp import ClientSession, StdioServerParameters, types
from mcp.client.stdio import stdio_client

try:  # mcp >= 2
    from mcp import MCPError
except ImportError:  # mcp 1.x spelling
    from mcp.shared.exceptions import McpError as MCPError  # type: ignore[attr-defined,no-redef]

try:  # mcp >= 2 splits handshake-era and stateless-era versions
    from mcp_types.version import LATEST_HANDSHAKE_VERSION
except ImportError:  # mcp 1.x: its newest version is a handshake-era one
    from mcp.types import LATEST_PROTOCOL_VERSION as LATEST_HANDSHAKE_VERSION

REPO = Path(__file__).resolve().parent.parent
SERVER = REPO / "tests" / "servers" / "interop_server.py"
TOOL_NAMES = ["add", "crash", "echo", "fail", "slow", "wait"]
HANDSHAKE_REVISIONS = ["2024-11-05", "2025-03-26", "2025-06-18", "2025-11-25"]
STATELESS_REVISION = "2026-07-28"
METHOD_NOT_FOUND = -32601
# Generous: a cold start of the server plus a few round trips takes well under a second.
SESSION_TIMEOUT = 60

T = TypeVar("T")

needs_sdk2 = pytest.mark.skipif(
    not hasattr(ClientSession, "adopt"),
    reason="needs the mcp>=2 client (ClientSession.adopt/discover)",
)


def wire(model: Any) -> Any:
    """A pydantic model from the SDK as the JSON it stands for."""
    return model.model_dump(by_alias=True, mode="json", exclude_none=True)


def server_params() -> StdioServerParameters:
    # stdio_client passes only a short list of "safe" variables unless told otherwise: pass the
    # whole environment so the child imports the same mcpline (PYTHONPATH, virtualenv) we do,
    # less PYTHONUNBUFFERED, as a host starts it.
    return StdioServerParameters(
        command=sys.executable,
        args=[str(SERVER)],
        env=host_environ(),
        cwd=str(REPO),
    )


def run_session(
    body: Callable[[ClientSession], Awaitable[T]],
    *,
    initialize: bool = True,
) -> T:
    """Start the server, open a ClientSession on it (initialized unless told not to), run body.

    The server's stderr goes to a temporary file that is attached to any failure.
    """

    async def main(errlog: TextIO) -> T:
        with anyio.fail_after(SESSION_TIMEOUT):
            async with stdio_client(server_params(), errlog=errlog) as (read, write):
                async with ClientSession(read, write) as session:
                    if initialize:
                        await session.initialize()
                    return await body(session)

    with tempfile.TemporaryFile("w+", encoding="utf-8") as errlog:
        try:
            return anyio.run(main, errlog)
        except BaseException:
            errlog.seek(0)
            sys.stderr.write(f"--- interop server stderr ---\n{errlog.read()}\n---\n")
            raise


def text_of(result: dict[str, Any]) -> list[str]:
    return [block["text"] for block in result["content"] if block["type"] == "text"]


# --- handshake era (initialize) ---------------------------------------------------------------


def test_initialize_reports_server_and_negotiates_latest_handshake_revision() -> None:
    async def body(session: ClientSession) -> dict[str, Any]:
        return wire(await session.initialize())  # cached: the result of the handshake above

    result = run_session(body)
    assert result["serverInfo"]["name"] == "interop"
    assert result["serverInfo"]["version"] == "1.0.0"
    assert result["protocolVersion"] == LATEST_HANDSHAKE_VERSION
    assert "tools" in result["capabilities"]
    assert result.get("instructions") == "Test server."


def test_list_tools_sorted_with_schema_from_signature() -> None:
    async def body(session: ClientSession) -> dict[str, Any]:
        return wire(await session.list_tools())

    result = run_session(body)
    tools = {tool["name"]: tool for tool in result["tools"]}
    assert [tool["name"] for tool in result["tools"]] == TOOL_NAMES
    assert "nextCursor" not in result

    add = tools["add"]
    assert add["description"] == "Add two integers."
    schema = add["inputSchema"]
    assert schema["type"] == "object"
    assert schema["properties"]["a"]["type"] == "integer"
    assert schema["properties"]["b"]["type"] == "integer"
    assert sorted(schema["required"]) == ["a", "b"]
    assert schema.get("additionalProperties") is False
    # An int return annotation is wrapped as {"result": int} (structured output, >= 2025-06-18).
    assert add["outputSchema"]["type"] == "object"
    assert add["outputSchema"]["properties"]["result"]["type"] == "integer"

    assert tools["echo"]["annotations"]["readOnlyHint"] is True
    assert tools["crash"]["inputSchema"]["type"] == "object"
    assert tools["crash"]["inputSchema"].get("properties", {}) == {}


def test_prompts_are_listed_with_their_arguments_and_got_with_string_arguments() -> None:
    async def body(session: ClientSession) -> tuple[Any, Any, Any, Any]:
        listed = wire(await session.list_prompts())
        review = wire(await session.get_prompt("review", {"code": "x = 1"}))
        dialogue = wire(await session.get_prompt("dialogue", {"topic": "tides"}))
        try:
            await session.get_prompt("review", {})
        except MCPError as error:
            missing = (error.error.code, error.error.message)
        return listed, review, dialogue, missing

    listed, review, dialogue, missing = run_session(body)
    prompts = {prompt["name"]: prompt for prompt in listed["prompts"]}
    assert sorted(prompts) == ["dialogue", "review"]
    assert prompts["review"]["title"] == "Code review"
    assert prompts["review"]["arguments"] == [
        {"name": "code", "description": "The code to review.", "required": True},
        {"name": "focus", "description": "What to look for.", "required": False},
    ]
    assert review["messages"] == [
        {"role": "user", "content": {"type": "text", "text": "Review this code for bugs:\nx = 1"}}
    ]
    assert [m["role"] for m in dialogue["messages"]] == ["user", "assistant"]
    assert dialogue["messages"][0]["content"]["text"] == "Tell me about tides."
    assert missing[0] == -32602 and "code" in missing[1]


def test_prompt_arguments_are_completed_from_their_declared_values() -> None:
    async def body(session: ClientSession) -> Any:
        reference = types.PromptReference(type="ref/prompt", name="review")
        return wire(await session.complete(reference, {"name": "focus", "value": "s"}))

    result = run_session(body)
    assert result["completion"] == {"values": ["style", "speed"], "total": 2, "hasMore": False}


def test_resources_and_templates_are_listed_and_read() -> None:
    async def body(session: ClientSession) -> tuple[Any, ...]:
        listed = wire(await session.list_resources())
        templates = wire(await session.list_resource_templates())
        config = wire(await session.read_resource("config://app"))
        user = wire(await session.read_resource("users://7/name"))
        try:
            await session.read_resource("missing://x")
        except MCPError as error:
            missing = (error.error.code, error.error.data)
        return listed, templates, config, user, missing

    listed, templates, config, user, missing = run_session(body)
    assert listed["resources"] == [
        {
            "uri": "config://app",
            "name": "app_config",
            "description": "The application's settings.",
            "mimeType": "application/json",
        }
    ]
    assert [t["uriTemplate"] for t in templates["resourceTemplates"]] == ["users://{user_id}/name"]
    assert config["contents"] == [
        {"uri": "config://app", "mimeType": "application/json", "text": '{\n  "debug": false\n}'}
    ]
    assert user["contents"][0]["text"] == "user-7"
    assert missing == (-32002, {"uri": "missing://x"})


def test_call_tool_returns_structured_content_and_text() -> None:
    async def body(session: ClientSession) -> dict[str, Any]:
        # Listing first lets the SDK validate structuredContent against add's outputSchema.
        await session.list_tools()
        return wire(await session.call_tool("add", {"a": 1, "b": 2}))

    result = run_session(body)
    assert not result.get("isError", False)
    assert result["structuredContent"] == {"result": 3}
    assert text_of(result) == ["3"]


def test_echo_round_trips_text_that_needs_escaping() -> None:
    message = 'line one\nline "two"\t\\ é ✓ 😀'

    async def body(session: ClientSession) -> dict[str, Any]:
        return wire(await session.call_tool("echo", {"text": message}))

    result = run_session(body)
    assert not result.get("isError", False)
    assert text_of(result) == [message]


def test_tool_error_becomes_is_error_result() -> None:
    async def body(session: ClientSession) -> dict[str, Any]:
        return wire(await session.call_tool("fail", {"message": "boom"}))

    result = run_session(body)
    assert result["isError"] is True
    assert text_of(result) == ["boom"]


def test_unexpected_exception_becomes_is_error_result_and_server_survives() -> None:
    async def body(session: ClientSession) -> tuple[dict[str, Any], dict[str, Any]]:
        crashed = wire(await session.call_tool("crash", {}))
        after = wire(await session.call_tool("add", {"a": 20, "b": 22}))
        return crashed, after

    crashed, after = run_session(body)
    assert crashed["isError"] is True
    assert any("RuntimeError: kaboom" in text for text in text_of(crashed)), crashed
    assert text_of(after) == ["42"]


def test_unknown_tool_is_json_rpc_method_not_found() -> None:
    async def body(session: ClientSession) -> tuple[int, dict[str, Any]]:
        with pytest.raises(MCPError) as caught:
            await session.call_tool("no_such_tool", {})
        # The session stays usable after a JSON-RPC error.
        return caught.value.error.code, wire(await session.send_ping())

    code, pong = run_session(body)
    assert code == METHOD_NOT_FOUND
    assert pong == {}


def test_ping_returns_empty_result() -> None:
    async def body(session: ClientSession) -> dict[str, Any]:
        return wire(await session.send_ping())

    assert run_session(body) == {}


def test_ping_answered_while_a_tool_runs() -> None:
    async def body(session: ClientSession) -> list[str]:
        order: list[str] = []

        async def call_slow() -> None:
            result = wire(await session.call_tool("slow", {"seconds": 1.5}))
            assert text_of(result) == ["done"]
            order.append("slow")

        async with anyio.create_task_group() as tg:
            tg.start_soon(call_slow)
            await anyio.sleep(0.3)  # let tools/call reach the server first
            assert wire(await session.send_ping()) == {}
            order.append("ping")
        return order

    assert run_session(body) == ["ping", "slow"]


def test_ping_completes_while_a_long_call_is_in_flight() -> None:
    async def body(session: ClientSession) -> dict[str, Any]:
        seen: dict[str, Any] = {}
        call_done = anyio.Event()

        async def long_call() -> None:
            seen["call"] = wire(await session.call_tool("slow", {"seconds": 3}))
            call_done.set()

        async with anyio.create_task_group() as tg:
            tg.start_soon(long_call)
            await anyio.sleep(0.5)  # the call is running in the server now
            started = anyio.current_time()
            with anyio.fail_after(5):
                seen["ping"] = wire(await session.send_ping())
            seen["ping_seconds"] = anyio.current_time() - started
            seen["call_pending_after_ping"] = not call_done.is_set()
        return seen

    seen = run_session(body)
    assert seen["ping"] == {}
    assert seen["ping_seconds"] < 5
    assert seen["call_pending_after_ping"] is True
    assert text_of(seen["call"]) == ["done"]


def test_a_cancelled_call_is_abandoned_and_the_session_keeps_working() -> None:
    async def body(session: ClientSession) -> dict[str, Any]:
        seen: dict[str, Any] = {}
        # Cancelling the caller's scope makes the SDK send notifications/cancelled; the tool
        # (30 s unless cancelled) must stop, or the next call would wait behind it.
        with anyio.move_on_after(0.5) as scope:
            seen["unexpected"] = wire(await session.call_tool("wait", {"seconds": 30}))
        seen["cancelled"] = scope.cancelled_caught
        started = anyio.current_time()
        with anyio.move_on_after(10):
            seen["after"] = wire(await session.call_tool("add", {"a": 2, "b": 3}))
        seen["after_seconds"] = anyio.current_time() - started
        seen["ping"] = wire(await session.send_ping())
        return seen

    seen = run_session(body)
    assert seen["cancelled"] is True, seen
    assert "unexpected" not in seen
    assert "after" in seen, f"no answer within 10 s after the cancel: {seen}"
    assert seen["after"]["structuredContent"] == {"result": 5}
    assert seen["after_seconds"] < 10
    assert seen["ping"] == {}


# --- explicit revisions -----------------------------------------------------------------------


async def negotiate(session: ClientSession, requested: str) -> dict[str, Any]:
    """Run the initialize handshake offering ``requested`` instead of the SDK's default."""
    result = await session.send_request(
        types.InitializeRequest(
            params=types.InitializeRequestParams(
                protocol_version=requested,
                capabilities=types.ClientCapabilities(),
                client_info=types.Implementation(name="interop-test", version="0"),
            ),
        ),
        types.InitializeResult,
    )
    session.adopt(result)
    await session.send_notification(types.InitializedNotification())
    return wire(result)


@needs_sdk2
@pytest.mark.parametrize("revision", HANDSHAKE_REVISIONS)
def test_each_handshake_revision_is_echoed_and_shapes_results(revision: str) -> None:
    async def body(session: ClientSession) -> tuple[dict[str, Any], dict[str, Any], dict[str, Any]]:
        init = await negotiate(session, revision)
        # The SDK validates each result against the negotiated revision's schema.
        listed = wire(await session.list_tools())
        added = wire(await session.call_tool("add", {"a": 1, "b": 2}))
        return init, listed, added

    init, listed, added = run_session(body, initialize=False)
    assert init["protocolVersion"] == revision
    assert init["serverInfo"]["name"] == "interop"
    assert [tool["name"] for tool in listed["tools"]] == TOOL_NAMES
    assert text_of(added) == ["3"]
    add = next(tool for tool in listed["tools"] if tool["name"] == "add")
    if revision >= "2025-06-18":
        assert added["structuredContent"] == {"result": 3}
        assert "outputSchema" in add
    else:
        assert "structuredContent" not in added
        assert "outputSchema" not in add


@needs_sdk2
def test_unsupported_revision_gets_newest_handshake_revision() -> None:
    async def body(session: ClientSession) -> dict[str, Any]:
        return await negotiate(session, "2099-01-01")

    assert run_session(body, initialize=False)["protocolVersion"] == HANDSHAKE_REVISIONS[-1]


# --- stateless era (2026-07-28: server/discover + per-request _meta) --------------------------


@needs_sdk2
def test_stateless_revision_via_discover() -> None:
    async def body(session: ClientSession) -> dict[str, Any]:
        discovered = wire(await session.discover())
        listed = wire(await session.list_tools())
        added = wire(await session.call_tool("add", {"a": 1, "b": 2}))
        failed = wire(await session.call_tool("fail", {"message": "boom"}))
        with pytest.raises(MCPError) as caught:
            await session.call_tool("no_such_tool", {})
        return {
            "version": session.protocol_version,
            "server_info": wire(session.server_info) if session.server_info else None,
            "discovered": discovered,
            "listed": listed,
            "added": added,
            "failed": failed,
            "unknown_code": caught.value.error.code,
        }

    seen = run_session(body, initialize=False)
    assert seen["version"] == STATELESS_REVISION
    assert STATELESS_REVISION in seen["discovered"]["supportedVersions"]
    assert seen["discovered"].get("instructions") == "Test server."
    if seen["server_info"] is not None:  # the _meta serverInfo stamp is a SHOULD
        assert seen["server_info"]["name"] == "interop"
    assert [tool["name"] for tool in seen["listed"]["tools"]] == TOOL_NAMES
    assert seen["added"]["structuredContent"] == {"result": 3}
    assert text_of(seen["added"]) == ["3"]
    assert seen["failed"]["isError"] is True
    assert text_of(seen["failed"]) == ["boom"]
    assert seen["unknown_code"] == METHOD_NOT_FOUND
