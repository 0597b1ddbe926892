"""Cancellation and time limits: ``ctx.cancelled``, ``check_cancelled()``, ``timeout=``."""

import asyncio
import json
import threading
import time

import pytest
from mcpline import Cancelled, Context, Server
from mcpline.testing import Client

server = Server("cancel")
STARTED = threading.Event()
SAW_CANCEL = threading.Event()


@server.tool
def spin(ctx: Context) -> str:
    STARTED.set()
    deadline = time.monotonic() + 10
    try:
        while time.monotonic() < deadline:
            if ctx.cancelled:
                SAW_CANCEL.set()
                return "noticed"
            time.sleep(0.01)
    except Cancelled:  # interrupted before it looked again
        SAW_CANCEL.set()
        raise
    return "finished"


@server.tool
def spin_check(ctx: Context) -> str:
    STARTED.set()
    deadline = time.monotonic() + 10
    while time.monotonic() < deadline:
        ctx.check_cancelled()
        time.sleep(0.01)
    return "finished"


@server.tool
async def sleeper() -> str:
    STARTED.set()
    try:
        await asyncio.sleep(10)
    except asyncio.CancelledError:
        SAW_CANCEL.set()
        raise
    return "finished"


@server.tool(timeout=0.2)
def limited(ctx: Context) -> str:
    deadline = time.monotonic() + 10
    while time.monotonic() < deadline and not ctx.cancelled:
        time.sleep(0.01)
    return "finished"


@server.tool(timeout=0.2)
async def limited_async() -> str:
    await asyncio.sleep(10)
    return "finished"


@server.tool
def add(a: int, b: int) -> int:
    return a + b


@pytest.fixture
def client():
    STARTED.clear()
    SAW_CANCEL.clear()
    with Client(server) as c:
        yield c


def send_call(client: Client, request_id, name: str, arguments: dict | None = None) -> None:
    client.send_raw(
        json.dumps(
            {
                "jsonrpc": "2.0",
                "id": request_id,
                "method": "tools/call",
                "params": {"name": name, "arguments": arguments or {}},
            }
        )
    )


def cancel(client: Client, request_id) -> None:
    client.notify("notifications/cancelled", {"requestId": request_id, "reason": "test"})


def drain(client: Client, quiet: float = 0.5) -> list[dict]:
    frames = []
    while (frame := client.recv_raw(quiet)) is not None:
        frames.append(frame)
    return frames


def test_ping_is_answered_while_a_tool_runs(client):
    send_call(client, 1, "spin")
    assert STARTED.wait(5)
    started = time.monotonic()
    client.send_raw('{"jsonrpc":"2.0","id":2,"method":"ping"}')
    assert client.recv_raw(5) == {"jsonrpc": "2.0", "id": 2, "result": {}}
    assert time.monotonic() - started < 1.0
    cancel(client, 1)


def test_cancelled_running_call_sees_the_flag_and_gets_no_response(client):
    send_call(client, 1, "spin")
    assert STARTED.wait(5)
    cancel(client, 1)
    assert SAW_CANCEL.wait(5)
    frames = drain(client)
    assert [f for f in frames if f.get("id") == 1] == []
    assert client.call("add", a=1, b=1).structured == {"result": 2}


def test_check_cancelled_stops_a_cancelled_call_without_a_response(client):
    send_call(client, "c", "spin_check")
    assert STARTED.wait(5)
    cancel(client, "c")
    time.sleep(0.2)
    assert client.call("add", a=2, b=2).structured == {"result": 4}
    assert [f for f in drain(client) if f.get("id") == "c"] == []


def test_cancelled_queued_call_is_dropped(client):
    send_call(client, 1, "spin")
    assert STARTED.wait(5)
    send_call(client, 2, "add", {"a": 1, "b": 2})
    cancel(client, 2)
    cancel(client, 1)
    frames = drain(client)
    assert [f for f in frames if f.get("id") in (1, 2)] == []
    assert client.call("add", a=3, b=4).structured == {"result": 7}


def test_cancelling_an_async_tool_cancels_its_task(client):
    send_call(client, 1, "sleeper")
    assert STARTED.wait(5)
    started = time.monotonic()
    cancel(client, 1)
    assert SAW_CANCEL.wait(5)
    assert client.call("add", a=1, b=1).structured == {"result": 2}
    assert time.monotonic() - started < 3.0
    assert [f for f in drain(client) if f.get("id") == 1] == []


def test_cancelling_an_unknown_request_is_ignored(client):
    cancel(client, 999)
    assert client.call("add", a=1, b=2).structured == {"result": 3}


def test_timeout_turns_a_long_call_into_an_error_result(client):
    started = time.monotonic()
    result = client.call("limited")
    assert result.is_error
    assert "timed out" in result.content[0]["text"]
    assert time.monotonic() - started < 3.0


def test_timeout_cancels_an_async_tool(client):
    started = time.monotonic()
    result = client.call("limited_async")
    assert result.is_error
    assert "timed out" in result.content[0]["text"]
    assert time.monotonic() - started < 3.0
