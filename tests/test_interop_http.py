"""Interop over Streamable HTTP: the official Python and TypeScript MCP SDK clients drive
tests/servers/interop_server.py served by ``mcpline serve TARGET --http 127.0.0.1:PORT``.

The server is started the way a user starts it: ``python -m mcpline serve ... --http`` as a
subprocess on a free port, without ``PYTHONUNBUFFERED``, stdin ``/dev/null`` (as a service
manager runs it). One server serves the whole module, except for the cancellation tests, which
get one each (a failure there can leave a server unable to run sync tools). Each is stopped with
SIGTERM at the end and must shut down and exit with code 0.

The Python side talks only through the SDK's ``streamable_http_client`` + ``ClientSession``
(``mcp`` 2.x), on an ``httpx2`` client whose event hooks record every HTTP exchange, so the tests
can also check what went over the wire (session ids, the DELETE, the protocol-version header).
Results are compared in wire form (``model_dump(by_alias=True)``) as in
tests/test_interop_python_sdk.py; the expected values are the ones of the stdio interop tests.
Both eras are driven: the handshake revisions (``initialize``, then ``Mcp-Session-Id``) and
2026-07-28 (``server/discover``, then stateless requests), which the SDK speaks over HTTP too.

The TypeScript side runs tests/interop/ts_http_client.mjs once against the same server and
asserts on the one JSON summary it prints. It needs ``node`` and ``tests/interop/node_modules``
(``make node``); without them those tests skip locally but FAIL when ``CI`` is set.

Not covered: progress notifications (the SSE form of a response), because interop_server.py has
no tool that reports progress; every response here is a single JSON body.
"""

from __future__ import annotations

import asyncio
import json
import socket
import subprocess
import sys
import time
from collections.abc import Awaitable, Callable, Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, TypeVar

import anyio
import httpx2
import pytest
from conftest import host_environ, run_node_client
from mcp import ClientSession, types
from mcp.client.streamable_http import streamable_http_client

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
INTEROP = REPO / "tests" / "interop"
TS_CLIENT = INTEROP / "ts_http_client.mjs"
TOOL_NAMES = ["add", "crash", "echo", "fail", "slow", "wait"]
# Streamable HTTP exists since 2025-03-26; 2024-11-05 clients spoke HTTP+SSE instead.
HTTP_HANDSHAKE_REVISIONS = ["2025-03-26", "2025-06-18", "2025-11-25"]
STATELESS_REVISION = "2026-07-28"
METHOD_NOT_FOUND = -32601
ECHO_TEXT = 'line one\nline "two"\t\\ é ✓ 😀 日本語'
TS_ECHO_TEXT = 'héllo\n"wörld" ✓ 日本'  # the text ts_http_client.mjs sends to echo
# Generous: a session is a handful of local round trips.
SESSION_TIMEOUT = 60
STARTUP_TIMEOUT = 30
STOP_TIMEOUT = 20
# Server.asgi_app's default sync_workers: the threads that run calls of sync tools.
SYNC_WORKERS = 8
CANCEL_ROUNDS = 3

T = TypeVar("T")

needs_sdk2 = pytest.mark.skipif(
    not hasattr(ClientSession, "adopt"),
    reason="needs the mcp>=2 client (ClientSession.adopt/discover)",
)


# --- the server -------------------------------------------------------------------------------


@dataclass
class HttpServer:
    """The ``mcpline serve --http`` subprocess and the file its stdout and stderr go to."""

    url: str
    proc: subprocess.Popen[bytes]
    log: Path

    def log_text(self) -> str:
        return self.log.read_bytes().decode("utf-8", errors="replace")


def free_port() -> int:
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as probe:
        probe.bind(("127.0.0.1", 0))
        port: int = probe.getsockname()[1]
        return port


def wait_until_accepting(server: HttpServer, port: int) -> None:
    deadline = time.monotonic() + STARTUP_TIMEOUT
    while True:
        if server.proc.poll() is not None:
            code = server.proc.returncode
            pytest.fail(f"the server exited with {code} at start\n{server.log_text()}")
        try:
            with socket.create_connection(("127.0.0.1", port), timeout=0.5):
                return
        except OSError:
            if time.monotonic() > deadline:
                pytest.fail(f"the server took no connection within {STARTUP_TIMEOUT} s")
            time.sleep(0.05)


def serve_http(log: Path) -> Iterator[HttpServer]:
    """Starts ``mcpline serve`` on a free port, yields it once it takes connections, then sends
    SIGTERM and checks that it shut down cleanly: uvicorn's shutdown ran and the exit code is 0
    (what SIGTERM gives over stdio, tests/test_lifecycle_signals.py)."""
    port = free_port()
    env = host_environ()
    with log.open("wb") as out:
        proc = subprocess.Popen(
            [sys.executable, "-m", "mcpline", "serve", str(SERVER), "--http", f"127.0.0.1:{port}"],
            cwd=REPO,
            env=env,
            stdin=subprocess.DEVNULL,
            stdout=out,
            stderr=subprocess.STDOUT,
        )
    server = HttpServer(url=f"http://127.0.0.1:{port}/mcp", proc=proc, log=log)
    try:
        wait_until_accepting(server, port)
        yield server
    finally:
        if proc.poll() is None:
            proc.terminate()
        try:
            code = proc.wait(STOP_TIMEOUT)
        except subprocess.TimeoutExpired:
            proc.kill()
            proc.wait(10)
            why = f"the server did not stop within {STOP_TIMEOUT} s of SIGTERM"
            pytest.fail(f"{why}\n{server.log_text()}")
    if sys.platform == "win32":
        return  # terminate() is TerminateProcess there: no graceful stop to check
    text = server.log_text()
    assert "Application shutdown complete" in text, text
    how = f"was killed by signal {-code}" if code < 0 else f"exited with {code}"
    assert code == 0, f"on SIGTERM the server {how} (expected: exit code 0)\n{text}"


@pytest.fixture(scope="module")
def http_server(tmp_path_factory: pytest.TempPathFactory) -> Iterator[HttpServer]:
    """The server most tests share."""
    yield from serve_http(tmp_path_factory.mktemp("http") / "server.log")


@pytest.fixture
def own_http_server(tmp_path: Path) -> Iterator[HttpServer]:
    """A server for one test, for tests whose failure could leave the server unable to serve
    the tests after them (its threads for sync tools all stuck)."""
    yield from serve_http(tmp_path / "server.log")


# --- the Python SDK client ----------------------------------------------------------------------


@dataclass
class Exchange:
    """One HTTP request and its response status and headers, as the client saw them."""

    method: str
    request_headers: dict[str, str]
    request_body: Any  # the JSON a POST carried; None for GET and DELETE
    status: int
    response_headers: dict[str, str]


@dataclass
class Traffic:
    exchanges: list[Exchange] = field(default_factory=list)

    async def record(self, response: httpx2.Response) -> None:
        request = response.request
        self.exchanges.append(
            Exchange(
                method=request.method,
                request_headers={k.lower(): v for k, v in request.headers.items()},
                request_body=json.loads(request.content) if request.content else None,
                status=response.status_code,
                response_headers={k.lower(): v for k, v in response.headers.items()},
            )
        )

    def posts(self) -> list[Exchange]:
        return [e for e in self.exchanges if e.method == "POST"]

    def session_ids(self) -> set[str]:
        """Every ``Mcp-Session-Id`` the server handed out in these responses."""
        return {
            e.response_headers["mcp-session-id"]
            for e in self.exchanges
            if "mcp-session-id" in e.response_headers
        }


def http_client(traffic: Traffic) -> httpx2.AsyncClient:
    # The SDK's default timeouts; trust_env off so a proxy setting cannot reroute 127.0.0.1.
    return httpx2.AsyncClient(
        timeout=httpx2.Timeout(30, read=300),
        trust_env=False,
        event_hooks={"response": [traffic.record]},
    )


def wire(model: Any) -> Any:
    """A pydantic model from the SDK as the JSON it stands for."""
    return model.model_dump(by_alias=True, mode="json", exclude_none=True)


def text_of(result: dict[str, Any]) -> list[str]:
    return [block["text"] for block in result["content"] if block["type"] == "text"]


async def open_session(
    url: str,
    body: Callable[[ClientSession], Awaitable[T]],
    traffic: Traffic,
    *,
    initialize: bool = True,
) -> T:
    """One SDK session on ``url`` (initialized unless told not to) running ``body``; leaving it
    sends DELETE for a handshake-era session (``terminate_on_close``, the SDK's default)."""
    async with http_client(traffic) as client:
        async with streamable_http_client(url, http_client=client) as (read, write):
            async with ClientSession(read, write) as session:
                if initialize:
                    await session.initialize()
                return await body(session)


def run(
    server: HttpServer,
    main: Callable[[], Awaitable[T]],
) -> T:
    """Runs ``main`` under a deadline; the server's log is attached to any failure."""

    async def bounded() -> T:
        with anyio.fail_after(SESSION_TIMEOUT):
            return await main()

    try:
        return anyio.run(bounded)
    except BaseException:
        sys.stderr.write(f"--- mcpline serve --http log ---\n{server.log_text()}\n---\n")
        raise


def run_session(
    server: HttpServer,
    body: Callable[[ClientSession], Awaitable[T]],
    *,
    initialize: bool = True,
    traffic: Traffic | None = None,
) -> T:
    traffic = traffic if traffic is not None else Traffic()
    return run(server, lambda: open_session(server.url, body, traffic, initialize=initialize))


async def negotiate(session: ClientSession, requested: str) -> dict[str, Any]:
    """Run the initialize handshake offering ``requested`` instead of the SDK's default."""
    result = await session.send_request(
        types.InitializeRequest(
            params=types.InitializeRequestParams(
                protocol_version=requested,
                capabilities=types.ClientCapabilities(),
                client_info=types.Implementation(name="interop-http-test", version="0"),
            ),
        ),
        types.InitializeResult,
    )
    session.adopt(result)
    await session.send_notification(types.InitializedNotification())
    return wire(result)


def server_notes(server: HttpServer) -> str:
    """The server's log without uvicorn's access lines."""
    lines = server.log_text().splitlines()
    return "\n".join(line for line in lines if not line.startswith("INFO:     127.0.0.1:"))


async def cancel_rounds(session: ClientSession) -> list[dict[str, Any]]:
    """``CANCEL_ROUNDS`` times: ``SYNC_WORKERS`` calls of ``wait`` (30 s unless cancelled) at
    once, cancelled after 1 s by cancelling the caller's scope; then ``SYNC_WORKERS`` calls of
    ``add`` at once, each of which must be answered within 10 s. A cancelled tool that kept its
    thread, or a thread left unable to run the next call, leaves an add unanswered."""
    rounds: list[dict[str, Any]] = []
    for n in range(CANCEL_ROUNDS):
        unexpected: list[Any] = []
        seen: dict[str, Any] = {"round": n, "unexpected": unexpected}

        async def doomed(unexpected: list[Any] = unexpected) -> None:
            unexpected.append(wire(await session.call_tool("wait", {"seconds": 30})))

        with anyio.move_on_after(1.0) as scope:
            async with anyio.create_task_group() as tg:
                for _ in range(SYNC_WORKERS):
                    tg.start_soon(doomed)
        seen["cancelled"] = scope.cancelled_caught
        with anyio.move_on_after(10) as late:
            answers = await asyncio.gather(
                *(session.call_tool("add", {"a": n, "b": i}) for i in range(SYNC_WORKERS))
            )
            seen["adds"] = [wire(answer)["structuredContent"] for answer in answers]
        seen["adds_unanswered_after_10_s"] = late.cancelled_caught
        rounds.append(seen)
        if late.cancelled_caught:
            break
    return rounds


def check_cancel_rounds(server: HttpServer, rounds: list[dict[str, Any]]) -> None:
    for seen in rounds:
        n = seen["round"]
        why = f"round {n}: {seen}\n--- server log ---\n{server_notes(server)}"
        assert seen["cancelled"] is True, why
        assert seen["unexpected"] == [], why
        assert seen["adds_unanswered_after_10_s"] is False, why
        assert seen["adds"] == [{"result": n + i} for i in range(SYNC_WORKERS)], why
    assert len(rounds) == CANCEL_ROUNDS


# --- handshake era: a session under Mcp-Session-Id --------------------------------------------


def test_initialize_negotiates_latest_handshake_revision_and_hands_out_a_session_id(
    http_server: HttpServer,
) -> None:
    traffic = Traffic()

    async def body(session: ClientSession) -> dict[str, Any]:
        await session.send_ping()  # a request after the handshake, inside the session
        return wire(await session.initialize())  # cached: the result of the handshake

    result = run_session(http_server, body, traffic=traffic)
    assert result["serverInfo"] == {"name": "interop", "version": "1.0.0"}
    assert result["protocolVersion"] == LATEST_HANDSHAKE_VERSION
    assert "tools" in result["capabilities"]
    assert result.get("instructions") == "Test server."

    posts = traffic.posts()
    initialize, later = posts[0], posts[1:]
    assert initialize.status == 200
    session_id = initialize.response_headers.get("mcp-session-id")
    assert session_id, initialize
    assert all(c.isascii() and 0x21 <= ord(c) <= 0x7E for c in session_id), session_id
    assert later, "no request after initialize"
    for exchange in later:  # notifications/initialized (202) and the ping (200)
        assert exchange.request_headers.get("mcp-session-id") == session_id
        assert exchange.request_headers.get("mcp-protocol-version") == LATEST_HANDSHAKE_VERSION
        assert exchange.status in (200, 202), exchange


def test_list_tools_gives_the_same_tools_as_over_stdio(http_server: HttpServer) -> None:
    async def body(session: ClientSession) -> dict[str, Any]:
        return wire(await session.list_tools())

    result = run_session(http_server, body)
    tools = {tool["name"]: tool for tool in result["tools"]}
    assert [tool["name"] for tool in result["tools"]] == TOOL_NAMES
    assert "nextCursor" not in result
    add = tools["add"]
    assert add["description"] == "Add two integers."
    schema = add["inputSchema"]
    assert schema["properties"]["a"]["type"] == "integer"
    assert schema["properties"]["b"]["type"] == "integer"
    assert sorted(schema["required"]) == ["a", "b"]
    assert add["outputSchema"]["properties"]["result"]["type"] == "integer"
    assert tools["echo"]["annotations"]["readOnlyHint"] is True


def test_call_tool_returns_structured_content_and_text(http_server: HttpServer) -> None:
    async def body(session: ClientSession) -> dict[str, Any]:
        # Listing first lets the SDK validate structuredContent against add's outputSchema.
        await session.list_tools()
        return wire(await session.call_tool("add", {"a": 1, "b": 2}))

    result = run_session(http_server, body)
    assert not result.get("isError", False)
    assert result["structuredContent"] == {"result": 3}
    assert text_of(result) == ["3"]


def test_echo_round_trips_non_ascii_text_that_needs_escaping(http_server: HttpServer) -> None:
    async def body(session: ClientSession) -> dict[str, Any]:
        return wire(await session.call_tool("echo", {"text": ECHO_TEXT}))

    result = run_session(http_server, body)
    assert not result.get("isError", False)
    assert text_of(result) == [ECHO_TEXT]


def test_tool_errors_become_is_error_results_and_the_session_keeps_working(
    http_server: HttpServer,
) -> None:
    async def body(session: ClientSession) -> tuple[Any, Any, Any]:
        failed = wire(await session.call_tool("fail", {"message": "boom"}))
        crashed = wire(await session.call_tool("crash", {}))
        after = wire(await session.call_tool("add", {"a": 20, "b": 22}))
        return failed, crashed, after

    failed, crashed, after = run_session(http_server, body)
    assert failed["isError"] is True
    assert text_of(failed) == ["boom"]
    assert crashed["isError"] is True
    assert any("RuntimeError: kaboom" in text for text in text_of(crashed)), crashed
    assert text_of(after) == ["42"]


def test_unknown_tool_is_json_rpc_method_not_found(http_server: HttpServer) -> None:
    async def body(session: ClientSession) -> tuple[int, dict[str, Any]]:
        with pytest.raises(MCPError) as caught:
            await session.call_tool("no_such_tool", {})
        # The session stays usable after a JSON-RPC error.
        return caught.value.error.code, wire(await session.send_ping())

    code, pong = run_session(http_server, body)
    assert code == METHOD_NOT_FOUND
    assert pong == {}


def test_resources_and_templates_are_listed_and_read(http_server: HttpServer) -> None:
    async def body(session: ClientSession) -> tuple[Any, ...]:
        listed = wire(await session.list_resources())
        templates = wire(await session.list_resource_templates())
        config = wire(await session.read_resource("config://app"))
        user = wire(await session.read_resource("users://7/name"))
        with pytest.raises(MCPError) as caught:
            await session.read_resource("missing://x")
        missing = (caught.value.error.code, caught.value.error.data)
        return listed, templates, config, user, missing

    listed, templates, config, user, missing = run_session(http_server, body)
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
    assert user["contents"] == [
        {"uri": "users://7/name", "mimeType": "text/plain", "text": "user-7"}
    ]
    assert missing == (-32002, {"uri": "missing://x"})


def test_prompts_are_listed_and_got_with_string_arguments(http_server: HttpServer) -> None:
    async def body(session: ClientSession) -> tuple[Any, Any, Any, Any]:
        listed = wire(await session.list_prompts())
        review = wire(await session.get_prompt("review", {"code": "x = 1", "focus": "style"}))
        dialogue = wire(await session.get_prompt("dialogue", {"topic": "tides"}))
        with pytest.raises(MCPError) as caught:
            await session.get_prompt("review", {})
        missing = (caught.value.error.code, caught.value.error.message)
        return listed, review, dialogue, missing

    listed, review, dialogue, missing = run_session(http_server, body)
    prompts = {prompt["name"]: prompt for prompt in listed["prompts"]}
    assert sorted(prompts) == ["dialogue", "review"]
    assert prompts["review"]["title"] == "Code review"
    assert prompts["review"]["arguments"] == [
        {"name": "code", "description": "The code to review.", "required": True},
        {"name": "focus", "description": "What to look for.", "required": False},
    ]
    assert review["messages"] == [
        {"role": "user", "content": {"type": "text", "text": "Review this code for style:\nx = 1"}}
    ]
    assert [m["role"] for m in dialogue["messages"]] == ["user", "assistant"]
    assert dialogue["messages"][0]["content"]["text"] == "Tell me about tides."
    assert missing[0] == -32602 and "code" in missing[1]


def test_prompt_arguments_are_completed_from_their_declared_values(
    http_server: HttpServer,
) -> None:
    async def body(session: ClientSession) -> Any:
        reference = types.PromptReference(type="ref/prompt", name="review")
        return wire(await session.complete(reference, {"name": "focus", "value": "s"}))

    result = run_session(http_server, body)
    assert result["completion"] == {"values": ["style", "speed"], "total": 2, "hasMore": False}


def test_concurrent_calls_over_one_session_are_each_answered_correctly(
    http_server: HttpServer,
) -> None:
    slow_seconds = 1.5
    slow_calls = 4  # within SYNC_WORKERS, so they may all run at once

    async def body(session: ClientSession) -> dict[str, Any]:
        await session.list_tools()
        started = anyio.current_time()
        results = await asyncio.gather(
            *(session.call_tool("add", {"a": i, "b": 100 * i}) for i in range(12)),
            *(session.call_tool("echo", {"text": f"écho {i} ✓"}) for i in range(6)),
            *(session.call_tool("slow", {"seconds": slow_seconds}) for _ in range(slow_calls)),
            session.call_tool("fail", {"message": "concurrent boom"}),
            session.list_tools(),
            session.read_resource("users://42/name"),
            session.send_ping(),
        )
        return {
            "results": [wire(r) for r in results],
            "seconds": anyio.current_time() - started,
        }

    seen = run_session(http_server, body)
    results = seen["results"]
    adds, results = results[:12], results[12:]
    echoes, results = results[:6], results[6:]
    slows, results = results[:slow_calls], results[slow_calls:]
    failed, listed, user, pong = results
    assert [a["structuredContent"] for a in adds] == [{"result": 101 * i} for i in range(12)]
    assert [text_of(e) for e in echoes] == [[f"écho {i} ✓"] for i in range(6)]
    assert [text_of(s) for s in slows] == [["done"]] * slow_calls
    assert failed["isError"] is True and text_of(failed) == ["concurrent boom"]
    assert [tool["name"] for tool in listed["tools"]] == TOOL_NAMES
    assert user["contents"][0]["text"] == "user-42"
    assert pong == {}
    # The slow calls ran side by side, not one after another (that would take 6 s).
    assert seen["seconds"] < slow_seconds * slow_calls - 1.5, seen["seconds"]


def test_ping_completes_while_a_long_call_is_in_flight(http_server: HttpServer) -> None:
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

    seen = run_session(http_server, body)
    assert seen["ping"] == {}
    assert seen["ping_seconds"] < 2
    assert seen["call_pending_after_ping"] is True
    assert text_of(seen["call"]) == ["done"]


def test_cancelled_calls_stop_in_the_server_and_every_later_call_is_answered(
    own_http_server: HttpServer,
) -> None:
    # Cancelling the caller's scope makes the SDK POST notifications/cancelled for each call.
    async def body(session: ClientSession) -> tuple[list[dict[str, Any]], Any]:
        rounds = await cancel_rounds(session)
        return rounds, wire(await session.send_ping())

    rounds, pong = run_session(own_http_server, body)
    check_cancel_rounds(own_http_server, rounds)
    assert pong == {}


@needs_sdk2
@pytest.mark.parametrize("revision", HTTP_HANDSHAKE_REVISIONS)
def test_each_http_handshake_revision_is_echoed_and_shapes_results(
    http_server: HttpServer, revision: str
) -> None:
    traffic = Traffic()

    async def body(session: ClientSession) -> tuple[dict[str, Any], dict[str, Any], dict[str, Any]]:
        init = await negotiate(session, revision)
        # The SDK validates each result against the negotiated revision's schema.
        listed = wire(await session.list_tools())
        added = wire(await session.call_tool("add", {"a": 1, "b": 2}))
        return init, listed, added

    init, listed, added = run_session(http_server, body, initialize=False, traffic=traffic)
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
    assert len(traffic.session_ids()) == 1, traffic.exchanges


def test_a_session_deleted_by_the_client_is_gone_and_a_new_session_is_served(
    http_server: HttpServer,
) -> None:
    first, second = Traffic(), Traffic()

    async def add(session: ClientSession) -> dict[str, Any]:
        return wire(await session.call_tool("add", {"a": 4, "b": 5}))

    async def main() -> dict[str, Any]:
        seen: dict[str, Any] = {}
        # Leaving the session sends DELETE with its Mcp-Session-Id (terminate_on_close).
        seen["first"] = await open_session(http_server.url, add, first)
        (old,) = first.session_ids()
        async with http_client(Traffic()) as client:
            stale = await client.post(
                http_server.url,
                json={"jsonrpc": "2.0", "id": 1, "method": "tools/list"},
                headers={
                    "accept": "application/json, text/event-stream",
                    "mcp-session-id": old,
                    "mcp-protocol-version": LATEST_HANDSHAKE_VERSION,
                },
            )
        seen["stale"] = (stale.status_code, stale.json() if stale.content else None)
        seen["second"] = await open_session(http_server.url, add, second)
        return seen

    seen = run(http_server, main)
    (old,) = first.session_ids()
    deletes = [e for e in first.exchanges if e.method == "DELETE"]
    assert len(deletes) == 1, first.exchanges
    assert deletes[0].request_headers.get("mcp-session-id") == old
    assert deletes[0].status in (200, 204), deletes[0]
    assert seen["first"]["structuredContent"] == {"result": 9}

    # A request in the deleted session: 404, so a client knows to initialize again.
    status, answer = seen["stale"]
    assert status == 404, seen["stale"]
    if answer is not None:
        assert "error" in answer and "result" not in answer, answer

    (new,) = second.session_ids()
    assert new != old
    assert seen["second"]["structuredContent"] == {"result": 9}


# --- stateless era (2026-07-28) ---------------------------------------------------------------


@needs_sdk2
def test_stateless_revision_via_discover_uses_no_session(http_server: HttpServer) -> None:
    traffic = Traffic()

    async def body(session: ClientSession) -> dict[str, Any]:
        discovered = wire(await session.discover())
        listed = wire(await session.list_tools())
        added = wire(await session.call_tool("add", {"a": 1, "b": 2}))
        echoed = wire(await session.call_tool("echo", {"text": ECHO_TEXT}))
        failed = wire(await session.call_tool("fail", {"message": "boom"}))
        with pytest.raises(MCPError) as caught:
            await session.call_tool("no_such_tool", {})
        user = wire(await session.read_resource("users://7/name"))
        review = wire(await session.get_prompt("review", {"code": "x = 1"}))
        reference = types.PromptReference(type="ref/prompt", name="review")
        completion = wire(await session.complete(reference, {"name": "focus", "value": "s"}))
        return {
            "version": session.protocol_version,
            "server_info": wire(session.server_info) if session.server_info else None,
            "discovered": discovered,
            "listed": listed,
            "added": added,
            "echoed": echoed,
            "failed": failed,
            "unknown_code": caught.value.error.code,
            "user": user,
            "review": review,
            "completion": completion,
        }

    seen = run_session(http_server, body, initialize=False, traffic=traffic)
    assert seen["version"] == STATELESS_REVISION
    assert STATELESS_REVISION in seen["discovered"]["supportedVersions"]
    assert seen["discovered"].get("instructions") == "Test server."
    if seen["server_info"] is not None:  # the _meta serverInfo stamp is a SHOULD
        assert seen["server_info"]["name"] == "interop"
    assert [tool["name"] for tool in seen["listed"]["tools"]] == TOOL_NAMES
    assert seen["added"]["structuredContent"] == {"result": 3}
    assert text_of(seen["echoed"]) == [ECHO_TEXT]
    assert seen["failed"]["isError"] is True
    assert text_of(seen["failed"]) == ["boom"]
    assert seen["unknown_code"] == METHOD_NOT_FOUND
    assert seen["user"]["contents"][0]["text"] == "user-7"
    assert seen["review"]["messages"][0]["content"]["text"] == "Review this code for bugs:\nx = 1"
    assert seen["completion"]["completion"]["values"] == ["style", "speed"]

    # Stateless: no session id handed out, none sent, so nothing to DELETE; every POST says
    # which revision it speaks and is answered 200 (the unknown tool's error too: the method,
    # tools/call, exists; the SDK read the JSON-RPC error from the body).
    assert traffic.session_ids() == set(), traffic.exchanges
    assert [e.method for e in traffic.exchanges] == ["POST"] * len(traffic.exchanges)
    for exchange in traffic.posts():
        assert "mcp-session-id" not in exchange.request_headers
        assert exchange.request_headers.get("mcp-protocol-version") == STATELESS_REVISION
        assert exchange.status == 200, exchange


@needs_sdk2
def test_stateless_concurrent_calls_are_each_answered_correctly(http_server: HttpServer) -> None:
    async def body(session: ClientSession) -> list[Any]:
        await session.discover()
        answers = await asyncio.gather(
            *(session.call_tool("add", {"a": i, "b": i}) for i in range(10)),
            *(session.call_tool("echo", {"text": f"é{i}"}) for i in range(5)),
            session.read_resource("users://3/name"),
        )
        return [wire(a) for a in answers]

    answers = run_session(http_server, body, initialize=False)
    assert [a["structuredContent"] for a in answers[:10]] == [{"result": 2 * i} for i in range(10)]
    assert [text_of(a) for a in answers[10:15]] == [[f"é{i}"] for i in range(5)]
    assert answers[15]["contents"][0]["text"] == "user-3"


@needs_sdk2
def test_stateless_cancelled_calls_stop_in_the_server_and_every_later_call_is_answered(
    own_http_server: HttpServer,
) -> None:
    # At 2026-07-28 the SDK cancels a call by closing its POST's response stream.
    async def body(session: ClientSession) -> list[dict[str, Any]]:
        await session.discover()
        return await cancel_rounds(session)

    check_cancel_rounds(own_http_server, run_session(own_http_server, body, initialize=False))


# --- the TypeScript SDK client ----------------------------------------------------------------


@pytest.fixture(scope="module")
def ts_summary(request: pytest.FixtureRequest) -> dict[str, Any]:
    http_server: HttpServer = request.getfixturevalue("http_server")
    log = f"--- mcpline serve --http log ---\n{http_server.log_text()}"
    return run_node_client(TS_CLIENT, http_server.url, server_log=log)


def test_typescript_initialize_negotiates_a_session(ts_summary: dict[str, Any]) -> None:
    assert ts_summary["serverVersion"] == {"name": "interop", "version": "1.0.0"}
    # SDK 1.32.2 offers 2025-11-25, which the server supports and must echo.
    assert ts_summary["protocolVersion"] == "2025-11-25"
    assert "tools" in ts_summary["capabilities"]
    assert ts_summary["instructions"] == "Test server."
    assert ts_summary["sessionId"], ts_summary


def test_typescript_list_tools(ts_summary: dict[str, Any]) -> None:
    assert ts_summary["tools"] == TOOL_NAMES
    schema = ts_summary["addTool"]["inputSchema"]
    assert schema["properties"]["a"]["type"] == "integer"
    assert sorted(schema["required"]) == ["a", "b"]


def test_typescript_call_add_and_echo(ts_summary: dict[str, Any]) -> None:
    add = ts_summary["add"]
    assert not add.get("isError", False)
    assert add["structuredContent"] == {"result": 3}
    assert add["content"] == [{"type": "text", "text": "3"}]
    assert ts_summary["echo"]["content"] == [{"type": "text", "text": TS_ECHO_TEXT}]


def test_typescript_tool_error_is_error_result(ts_summary: dict[str, Any]) -> None:
    assert ts_summary["fail"]["isError"] is True
    assert ts_summary["fail"]["content"] == [{"type": "text", "text": "boom"}]


def test_typescript_unknown_tool_is_method_not_found(ts_summary: dict[str, Any]) -> None:
    assert "unexpectedResult" not in ts_summary["unknownError"], ts_summary["unknownError"]
    assert ts_summary["unknownError"]["code"] == METHOD_NOT_FOUND


def test_typescript_resources_are_listed_and_read(ts_summary: dict[str, Any]) -> None:
    assert [r["uri"] for r in ts_summary["resources"]] == ["config://app"]
    assert [t["uriTemplate"] for t in ts_summary["resourceTemplates"]] == ["users://{user_id}/name"]
    assert ts_summary["config"]["contents"] == [
        {"uri": "config://app", "mimeType": "application/json", "text": '{\n  "debug": false\n}'}
    ]
    assert ts_summary["userName"]["contents"] == [
        {"uri": "users://7/name", "mimeType": "text/plain", "text": "user-7"}
    ]


def test_typescript_prompts_are_listed_got_and_completed(ts_summary: dict[str, Any]) -> None:
    assert sorted(p["name"] for p in ts_summary["prompts"]) == ["dialogue", "review"]
    assert ts_summary["review"]["messages"] == [
        {"role": "user", "content": {"type": "text", "text": "Review this code for style:\nx = 1"}}
    ]
    assert ts_summary["completion"]["completion"] == {
        "values": ["style", "speed"],
        "total": 2,
        "hasMore": False,
    }


def test_typescript_concurrent_calls_are_each_answered_correctly(
    ts_summary: dict[str, Any],
) -> None:
    concurrent = ts_summary["concurrent"]
    assert [r["structuredContent"] for r in concurrent["adds"]] == [
        {"result": 101 * i} for i in range(10)
    ]
    assert [r["content"] for r in concurrent["echoes"]] == [
        [{"type": "text", "text": f"écho {i}"}] for i in range(5)
    ]
    assert concurrent["ping"] == {}


def test_typescript_terminated_session_is_gone_and_a_new_client_is_served(
    ts_summary: dict[str, Any],
) -> None:
    terminate = ts_summary["terminate"]
    assert terminate["sessionIdAfter"] is None, terminate  # the SDK saw DELETE succeed
    assert terminate["staleStatus"] == 404, terminate
    again = ts_summary["again"]
    assert again["sessionId"] and again["sessionId"] != ts_summary["sessionId"], again
    assert again["add"]["structuredContent"] == {"result": 9}
