"""``async def`` tools run on one event loop owned by the server."""

import asyncio

import pytest
from mcpline import Context, Server, ToolError
from mcpline.testing import Client

server = Server("async")
STARTED: list[float] = []


@server.tool
async def nap(seconds: float) -> str:
    STARTED.append(seconds)
    await asyncio.sleep(seconds)
    return f"slept {seconds}"


@server.tool
async def loop_id() -> int:
    return id(asyncio.get_running_loop())


@server.tool
async def gather(n: int) -> list[int]:
    async def square(i: int) -> int:
        await asyncio.sleep(0.001)
        return i * i

    return list(await asyncio.gather(*(square(i) for i in range(n))))


@server.tool
async def refuse(message: str) -> str:
    await asyncio.sleep(0)
    raise ToolError(message)


@server.tool
async def explode() -> str:
    await asyncio.sleep(0)
    raise KeyError("missing")


@server.tool
async def who(ctx: Context) -> str:
    await asyncio.sleep(0)
    return f"{ctx.tool_name}:{ctx.protocol_version}"


@pytest.fixture
def client():
    with Client(server) as c:
        yield c


def test_async_tool_returns_its_awaited_value(client):
    result = client.call("nap", seconds=0.01)
    assert not result.is_error, result.text
    assert result.text == "slept 0.01"


def test_async_tools_run_on_one_event_loop(client):
    first = client.call("loop_id").structured["result"]
    second = client.call("loop_id").structured["result"]
    assert first == second


def test_async_tools_share_the_loop_across_connections():
    with Client(server) as one:
        first = one.call("loop_id").structured["result"]
    with Client(server) as two:
        second = two.call("loop_id").structured["result"]
    assert first == second


def test_async_tool_can_run_concurrent_tasks_inside_one_call(client):
    assert client.call("gather", n=5).structured == {"result": [0, 1, 4, 9, 16]}


def test_async_tool_error_is_an_error_result_with_the_exact_message(client):
    result = client.call("refuse", message="nope")
    assert result.is_error
    assert result.content[0]["text"] == "nope"


def test_async_tool_exception_is_reported_and_the_next_call_works(client):
    result = client.call("explode")
    assert result.is_error
    assert result.content[0]["text"].startswith("KeyError: ")
    assert client.call("nap", seconds=0).text == "slept 0"


def test_async_tool_receives_the_context(client):
    assert client.call("who").text == "who:2025-11-25"


def test_async_arguments_are_validated_before_the_coroutine_starts(client):
    STARTED.clear()
    result = client.call("nap", seconds="1")
    assert result.is_error
    assert STARTED == []
