"""Interop: the official TypeScript MCP SDK client drives tests/servers/interop_server.py.

tests/interop/ts_client.mjs does the talking (connect, list, calls, ping, close) and prints one
JSON summary; this module runs it once and asserts on that summary.

Needs ``node`` and ``tests/interop/node_modules`` (``make node`` = ``npm ci --prefix
tests/interop``). Without them the tests skip locally but FAIL when ``CI`` is set, so a CI
machine can never pass by skipping them.
"""

from __future__ import annotations

import sys
from pathlib import Path
from typing import Any

import pytest
from conftest import run_node_client

REPO = Path(__file__).resolve().parent.parent
INTEROP = REPO / "tests" / "interop"
CLIENT = INTEROP / "ts_client.mjs"
SERVER = REPO / "tests" / "servers" / "interop_server.py"
TOOL_NAMES = ["add", "crash", "echo", "fail", "slow", "wait"]
ECHO_TEXT = 'héllo\n"wörld" ✓'  # the text ts_client.mjs sends to echo


@pytest.fixture(scope="module")
def summary() -> dict[str, Any]:
    return run_node_client(CLIENT, sys.executable, str(SERVER))


def test_initialize(summary: dict[str, Any]) -> None:
    assert summary["serverVersion"]["name"] == "interop"
    assert summary["serverVersion"]["version"] == "1.0.0"
    # SDK 1.32.2 offers 2025-11-25, which the server supports and must echo.
    assert summary["protocolVersion"] == "2025-11-25"
    assert "tools" in summary["capabilities"]
    assert summary["instructions"] == "Test server."


def test_list_tools(summary: dict[str, Any]) -> None:
    assert summary["tools"] == TOOL_NAMES
    add = summary["addTool"]
    assert add["description"] == "Add two integers."
    schema = add["inputSchema"]
    assert schema["type"] == "object"
    assert schema["properties"]["a"]["type"] == "integer"
    assert schema["properties"]["b"]["type"] == "integer"
    assert sorted(schema["required"]) == ["a", "b"]


def test_call_add_structured_and_text(summary: dict[str, Any]) -> None:
    add = summary["add"]
    assert not add.get("isError", False)
    assert add["structuredContent"] == {"result": 3}
    assert add["content"] == [{"type": "text", "text": "3"}]


def test_call_echo(summary: dict[str, Any]) -> None:
    assert summary["echo"]["content"] == [{"type": "text", "text": ECHO_TEXT}]


def test_tool_error_is_error_result(summary: dict[str, Any]) -> None:
    fail = summary["fail"]
    assert fail["isError"] is True
    assert fail["content"] == [{"type": "text", "text": "boom"}]


def test_crash_is_error_result(summary: dict[str, Any]) -> None:
    crash = summary["crash"]
    assert crash["isError"] is True
    texts = [block.get("text", "") for block in crash["content"]]
    assert any("RuntimeError: kaboom" in text for text in texts), crash


def test_unknown_tool_is_method_not_found(summary: dict[str, Any]) -> None:
    assert "unexpectedResult" not in summary["unknownError"], summary["unknownError"]
    assert summary["unknownError"]["code"] == -32601


def test_prompts_are_listed_and_got(summary: dict[str, Any]) -> None:
    prompts = {prompt["name"]: prompt for prompt in summary["prompts"]}
    assert sorted(prompts) == ["dialogue", "review"]
    assert prompts["review"]["arguments"][0] == {
        "name": "code",
        "description": "The code to review.",
        "required": True,
    }
    assert summary["review"]["messages"] == [
        {"role": "user", "content": {"type": "text", "text": "Review this code for style:\nx = 1"}}
    ]
    assert summary["missingArgument"]["code"] == -32602, summary["missingArgument"]


def test_prompt_arguments_are_completed(summary: dict[str, Any]) -> None:
    assert summary["completion"]["completion"] == {
        "values": ["style", "speed"],
        "total": 2,
        "hasMore": False,
    }


def test_resources_and_templates_are_listed_and_read(summary: dict[str, Any]) -> None:
    assert [r["uri"] for r in summary["resources"]] == ["config://app"]
    assert [t["uriTemplate"] for t in summary["resourceTemplates"]] == ["users://{user_id}/name"]
    assert summary["userName"]["contents"] == [
        {"uri": "users://7/name", "mimeType": "text/plain", "text": "user-7"}
    ]
    assert summary["missingResource"]["code"] == -32002, summary["missingResource"]


def test_ping(summary: dict[str, Any]) -> None:
    assert summary["ping"] == {}


def test_ping_completes_while_a_long_call_is_in_flight(summary: dict[str, Any]) -> None:
    during = summary["pingDuringCall"]
    assert during["result"] == {}
    assert during["ms"] < 5000
    assert during["callPendingAfterPing"] is True
    assert during["call"]["content"] == [{"type": "text", "text": "done"}]


def test_a_call_aborted_with_an_abort_signal_is_cancelled_and_the_next_call_works(
    summary: dict[str, Any],
) -> None:
    abort = summary["abort"]
    assert "unexpectedResult" not in abort, abort
    assert abort["cancelSent"] is True, abort  # the SDK sent notifications/cancelled for it
    assert abort["next"]["structuredContent"] == {"result": 5}
    # The aborted tool (30 s unless cancelled) stopped: the next call did not wait behind it.
    assert abort["nextMs"] < 10000, abort
    assert abort["responsesForAborted"] == 0, abort


def test_server_exits_cleanly_at_end_of_input(summary: dict[str, Any]) -> None:
    # The SDK closes stdin, waits 2 s, then sends SIGTERM: code 0 means it left on its own.
    assert summary["serverExit"] == {"code": 0, "signal": None}
