"""Streamable HTTP as a client meets it on the wire: ``mcpline serve --http`` started as a user
starts it, driven byte by byte with ``http.client`` (statuses, content types, session ids,
SSE framing, the guards), plus what concurrency over HTTP means for calls and their output.
"""

from __future__ import annotations

import http.client
import json
import socket
import subprocess
import sys
import threading
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from conftest import host_environ

REPO = Path(__file__).resolve().parent.parent
SERVER = REPO / "tests" / "servers" / "http_server.py"
MODERN = "2026-07-28"
ACCEPT_BOTH = "application/json, text/event-stream"


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


def wait_listening(port: int, proc: subprocess.Popen[bytes], timeout: float = 30.0) -> None:
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if proc.poll() is not None:
            raise AssertionError(f"the server exited: {proc.stderr.read().decode()[-2000:]}")  # type: ignore[union-attr]
        try:
            socket.create_connection(("127.0.0.1", port), timeout=0.2).close()
            return
        except OSError:
            time.sleep(0.05)
    raise AssertionError("the server did not listen within 30 s")


class Served:
    def __init__(self, argv: list[str], port: int, env: dict[str, str] | None = None) -> None:
        environ = host_environ()
        environ.update(env or {})
        self.port = port
        self.proc = subprocess.Popen(
            argv,
            cwd=REPO,
            env=environ,
            stdin=subprocess.DEVNULL,
            stdout=subprocess.DEVNULL,
            stderr=subprocess.PIPE,
        )
        wait_listening(port, self.proc)

    def stop(self) -> str:
        self.proc.terminate()
        try:
            _, err = self.proc.communicate(timeout=15)
        except subprocess.TimeoutExpired:
            self.proc.kill()
            _, err = self.proc.communicate()
        return err.decode(errors="replace")


def serve_cli(*extra: str, env: dict[str, str] | None = None) -> Served:
    port = free_port()
    argv = [sys.executable, "-m", "mcpline", "serve", str(SERVER), "--http", f"127.0.0.1:{port}"]
    return Served([*argv, *extra], port, env)


@pytest.fixture(scope="module")
def lifespan_log(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return tmp_path_factory.mktemp("http") / "lifespan.log"


@pytest.fixture(scope="module")
def served(lifespan_log: Path) -> Iterator[Served]:
    server = serve_cli(env={"MCPLINE_TEST_LIFESPAN_LOG": str(lifespan_log)})
    yield server
    server.stop()


class Reply:
    def __init__(self, response: http.client.HTTPResponse) -> None:
        self.status = response.status
        self.headers = {k.lower(): v for k, v in response.getheaders()}
        self.body = response.read()

    @property
    def json(self) -> Any:
        assert self.headers.get("content-type", "").startswith("application/json"), self.headers
        return json.loads(self.body)

    @property
    def events(self) -> list[Any]:
        assert self.headers.get("content-type") == "text/event-stream", self.headers
        frames = []
        for block in self.body.decode().split("\n\n"):
            data = [line[5:].strip() for line in block.splitlines() if line.startswith("data:")]
            if data:
                frames.append(json.loads("\n".join(data)))
        return frames


def post(
    port: int, body: Any, headers: dict[str, str] | None = None, timeout: float = 30.0
) -> Reply:
    conn = http.client.HTTPConnection("127.0.0.1", port, timeout=timeout)
    raw = body if isinstance(body, bytes) else json.dumps(body).encode()
    sent = {"Content-Type": "application/json", "Accept": ACCEPT_BOTH, **(headers or {})}
    conn.request("POST", "/mcp", raw, sent)
    try:
        return Reply(conn.getresponse())
    finally:
        conn.close()


def modern(id_: int, method: str, params: dict[str, Any] | None = None) -> tuple[Any, dict]:
    params = dict(params or {})
    meta = dict(params.pop("_meta", {}))
    meta.update(
        {
            "io.modelcontextprotocol/protocolVersion": MODERN,
            "io.modelcontextprotocol/clientCapabilities": {},
        }
    )
    params["_meta"] = meta
    headers = {"MCP-Protocol-Version": MODERN, "Mcp-Method": method}
    if "name" in params:
        headers["Mcp-Name"] = params["name"]
    return {"jsonrpc": "2.0", "id": id_, "method": method, "params": params}, headers


def call(port: int, id_: int, tool: str, arguments: dict[str, Any], **kw: Any) -> Reply:
    body, headers = modern(id_, "tools/call", {"name": tool, "arguments": arguments, **kw})
    return post(port, body, headers)


def text_of(result: dict[str, Any]) -> str:
    return "\n".join(c["text"] for c in result["content"] if c["type"] == "text")


# -- 2026-07-28: stateless ---------------------------------------------------------------------


def test_a_lone_response_is_json_and_no_session_is_minted(served: Served) -> None:
    reply = call(served.port, 1, "add", {"a": 2, "b": 3})
    assert reply.status == 200
    assert "mcp-session-id" not in reply.headers
    assert reply.json["id"] == 1
    assert reply.json["result"]["structuredContent"] == {"result": 5}


def test_progress_before_the_response_makes_an_sse_stream(served: Served) -> None:
    reply = call(served.port, 2, "steps", {"n": 3}, _meta={"progressToken": "tok"})
    assert reply.status == 200
    assert reply.headers["x-accel-buffering"] == "no"
    frames = reply.events
    assert [f.get("method") for f in frames] == ["notifications/progress"] * 3 + [None]
    assert [f["params"]["progress"] for f in frames[:3]] == [1, 2, 3]
    assert frames[-1]["id"] == 2 and text_of(frames[-1]["result"]) == "3 steps"


def test_a_client_that_takes_no_sse_gets_only_the_response(served: Served) -> None:
    body, headers = modern(3, "tools/call", {"name": "steps", "arguments": {"n": 2}})
    body["params"]["_meta"]["progressToken"] = "tok"
    reply = post(served.port, body, {**headers, "Accept": "application/json"})
    assert reply.status == 200
    assert reply.json["id"] == 3 and text_of(reply.json["result"]) == "2 steps"


def test_mismatched_headers_are_400_with_the_request_id(served: Served) -> None:
    body, headers = modern(4, "tools/call", {"name": "add", "arguments": {"a": 1, "b": 1}})
    reply = post(served.port, body, {**headers, "Mcp-Name": "pid"})
    assert reply.status == 400
    assert reply.json["id"] == 4 and reply.json["error"]["code"] == -32020


def test_an_unknown_method_is_404(served: Served) -> None:
    body, headers = modern(5, "ping")
    reply = post(served.port, body, headers)
    assert (reply.status, reply.json["error"]["code"]) == (404, -32601)


def test_many_clients_may_send_the_same_id_at_once(served: Served) -> None:
    results: dict[int, Any] = {}

    def one(n: int) -> None:
        results[n] = call(served.port, 1, "add", {"a": n, "b": 1000}).json

    threads = [threading.Thread(target=one, args=(n,)) for n in range(12)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert {n: r["result"]["structuredContent"]["result"] for n, r in results.items()} == {
        n: n + 1000 for n in range(12)
    }


# -- handshake revisions: sessions ----------------------------------------------------------


def initialize(port: int, version: str = "2025-11-25") -> str:
    reply = post(
        port,
        {
            "jsonrpc": "2.0",
            "id": 0,
            "method": "initialize",
            "params": {
                "protocolVersion": version,
                "capabilities": {},
                "clientInfo": {"name": "t", "version": "1"},
            },
        },
    )
    assert reply.status == 200
    assert reply.json["result"]["protocolVersion"] == version
    return reply.headers["mcp-session-id"]


def test_initialize_mints_a_session_that_delete_ends(served: Served) -> None:
    sid = initialize(served.port)
    assert all(0x21 <= ord(c) <= 0x7E for c in sid) and len(sid) >= 32
    headers = {"Mcp-Session-Id": sid, "MCP-Protocol-Version": "2025-11-25"}
    note = {"jsonrpc": "2.0", "method": "notifications/initialized"}
    assert post(served.port, note, headers).status == 202
    listed = post(served.port, {"jsonrpc": "2.0", "id": 1, "method": "tools/list"}, headers)
    assert "add" in {t["name"] for t in listed.json["result"]["tools"]}
    called = post(
        served.port,
        {
            "jsonrpc": "2.0",
            "id": 2,
            "method": "tools/call",
            "params": {"name": "add", "arguments": {"a": 1, "b": 2}},
        },
        headers,
    )
    assert called.json["result"]["structuredContent"] == {"result": 3}
    conn = http.client.HTTPConnection("127.0.0.1", served.port, timeout=10)
    conn.request("DELETE", "/mcp", headers={"Mcp-Session-Id": sid})
    assert conn.getresponse().status == 200
    conn.close()
    gone = post(served.port, {"jsonrpc": "2.0", "id": 3, "method": "tools/list"}, headers)
    assert gone.status == 404


def test_a_request_of_an_unknown_session_is_404_and_one_without_a_session_400(
    served: Served,
) -> None:
    listing = {"jsonrpc": "2.0", "id": 1, "method": "tools/list"}
    assert post(served.port, listing, {"Mcp-Session-Id": "f" * 32}).status == 404
    assert post(served.port, listing).status == 400


def test_a_cancel_posted_in_the_session_stops_the_call(served: Served, tmp_path: Path) -> None:
    sid = initialize(served.port, "2025-06-18")
    headers = {"Mcp-Session-Id": sid, "MCP-Protocol-Version": "2025-06-18"}
    noted = tmp_path / "linger.log"
    call_body = {
        "jsonrpc": "2.0",
        "id": "long",
        "method": "tools/call",
        "params": {"name": "linger", "arguments": {"path": str(noted)}},
    }
    replies: list[Reply] = []
    caller = threading.Thread(target=lambda: replies.append(post(served.port, call_body, headers)))
    caller.start()
    time.sleep(0.5)
    cancel = {
        "jsonrpc": "2.0",
        "method": "notifications/cancelled",
        "params": {"requestId": "long"},
    }
    assert post(served.port, cancel, headers).status == 202
    caller.join(10)
    assert not caller.is_alive()
    assert replies[0].status == 202 and replies[0].body == b""  # cancelled: never answered
    # The task notes its cancellation on the tools' loop, maybe just after the reply.
    deadline = time.monotonic() + 10
    while time.monotonic() < deadline and not noted.exists():
        time.sleep(0.05)
    assert noted.read_text() == "cancelled\n"


def test_get_is_405(served: Served) -> None:
    conn = http.client.HTTPConnection("127.0.0.1", served.port, timeout=10)
    conn.request("GET", "/mcp", headers={"Accept": "text/event-stream"})
    response = conn.getresponse()
    assert response.status == 405
    assert "POST" in (response.getheader("Allow") or "")
    conn.close()


# -- guards ---------------------------------------------------------------------------------


def test_a_foreign_host_or_origin_is_403(served: Served) -> None:
    body, headers = modern(1, "tools/list")
    assert post(served.port, body, {**headers, "Host": "evil.example.com"}).status == 403
    assert post(served.port, body, {**headers, "Origin": "http://evil.example.com"}).status == 403
    local = {**headers, "Origin": f"http://localhost:{served.port}"}
    assert post(served.port, body, local).status == 200


def test_a_closed_stream_cancels_its_call(served: Served, tmp_path: Path) -> None:
    noted = tmp_path / "linger.log"
    body, headers = modern(1, "tools/call", {"name": "linger", "arguments": {"path": str(noted)}})
    conn = http.client.HTTPConnection("127.0.0.1", served.port, timeout=10)
    conn.request(
        "POST",
        "/mcp",
        json.dumps(body).encode(),
        {"Content-Type": "application/json", "Accept": ACCEPT_BOTH, **headers},
    )
    time.sleep(0.5)
    conn.sock.shutdown(socket.SHUT_RDWR)  # type: ignore[union-attr]
    conn.close()
    deadline = time.monotonic() + 10
    while time.monotonic() < deadline and not noted.exists():
        time.sleep(0.05)
    assert noted.read_text() == "cancelled\n"


# -- concurrency and output --------------------------------------------------------------------


def run_together(port: int, calls: list[tuple[str, dict[str, Any]]]) -> tuple[float, list[Any]]:
    results: list[Any] = [None] * len(calls)

    def one(i: int) -> None:
        results[i] = call(port, i, calls[i][0], calls[i][1]).json

    threads = [threading.Thread(target=one, args=(i,)) for i in range(len(calls))]
    start = time.monotonic()
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    return time.monotonic() - start, results


def test_async_calls_run_side_by_side(served: Served) -> None:
    took, results = run_together(served.port, [("doze", {"seconds": 0.6})] * 6)
    assert all(text_of(r["result"]) == "dozed 0.6" for r in results)
    assert took < 6 * 0.6 / 2, f"six 0.6 s async calls took {took:.2f} s"


def test_sync_calls_run_side_by_side_in_the_pool(served: Served) -> None:
    took, results = run_together(served.port, [("nap", {"seconds": 0.6})] * 4)
    assert all(text_of(r["result"]) == "napped 0.6" for r in results)
    assert took < 4 * 0.6 / 2, f"four 0.6 s sync calls took {took:.2f} s"


def test_each_call_gets_only_its_own_prints_while_calls_overlap(served: Served) -> None:
    # Other requests run meanwhile, so the server logs access lines while these calls print:
    # those go to stderr, never into a call's output.
    chants = [("chant", {"marker": m, "lines": 15}) for m in "XYZ"]
    _, results = run_together(served.port, [*chants, *[("add", {"a": 1, "b": 2})] * 6])
    for marker, result in zip("XYZ", results[:3], strict=True):
        printed = [f"{marker} {i}" for i in range(15)]
        expected = f"{marker} done\nOutput of the tool run:\n" + "\n".join(printed)
        assert text_of(result["result"]).rstrip("\n") == expected


def test_the_lifespan_is_entered_once_and_its_value_reaches_calls(
    served: Served, lifespan_log: Path
) -> None:
    assert text_of(call(served.port, 1, "held", {}).json["result"]) == "the held value"
    assert lifespan_log.read_text() == "entered\n"


# -- the bare ASGI application ---------------------------------------------------------------


@pytest.fixture(scope="module")
def guarded() -> Iterator[Served]:
    port = free_port()
    argv = [
        sys.executable,
        "-m",
        "uvicorn",
        "http_server:app",
        "--app-dir",
        str(SERVER.parent),
        "--port",
        str(port),
        "--log-level",
        "warning",
    ]
    server = Served(argv, port)
    yield server
    server.stop()


def test_a_request_without_a_token_is_401_naming_the_resource_metadata(guarded: Served) -> None:
    body, headers = modern(1, "tools/list")
    reply = post(guarded.port, body, headers)
    assert reply.status == 401
    challenge = reply.headers["www-authenticate"]
    assert challenge.startswith("Bearer")
    assert 'resource_metadata="https://auth.example.com/' in challenge


def test_a_refused_token_is_401_invalid_token_and_a_good_one_is_served(guarded: Served) -> None:
    body, headers = modern(1, "tools/list")
    refused = post(guarded.port, body, {**headers, "Authorization": "Bearer wrong"})
    assert refused.status == 401
    assert 'error="invalid_token"' in refused.headers["www-authenticate"]
    good = post(guarded.port, body, {**headers, "Authorization": "Bearer s3cret"})
    assert good.status == 200 and good.json["result"]["tools"]


def test_a_body_over_the_cap_is_413_and_serving_goes_on(guarded: Served) -> None:
    auth = {"Authorization": "Bearer s3cret"}
    body, headers = modern(1, "tools/call", {"name": "add", "arguments": {"a": 1, "b": 2}})
    body["params"]["padding"] = "x" * (70 * 1024)
    reply = post(guarded.port, body, {**headers, **auth})
    assert reply.status == 413
    body["params"].pop("padding")
    assert post(guarded.port, body, {**headers, **auth}).status == 200


@pytest.mark.skipif(
    sys.platform == "win32", reason="terminate() is TerminateProcess there: nothing can run"
)
def test_the_lifespan_is_exited_when_the_server_stops(lifespan_log: Path, tmp_path: Path) -> None:
    log = tmp_path / "lifespan.log"
    server = serve_cli(env={"MCPLINE_TEST_LIFESPAN_LOG": str(log)})
    assert call(server.port, 1, "add", {"a": 1, "b": 1}).status == 200
    err = server.stop()
    assert log.read_text() == "entered\nexited\n", err
    assert "Traceback" not in err


def test_workers_serve_stateless_requests_from_several_processes() -> None:
    server = serve_cli("--workers", "2")
    pids: set[int] = set()
    try:
        # The port answers once the first worker is up; the second may start a moment later.
        deadline = time.monotonic() + 20
        while len(pids) < 2 and time.monotonic() < deadline:
            _, results = run_together(server.port, [("pid", {"wait": 0.2})] * 16)
            pids |= {r["result"]["structuredContent"]["result"] for r in results}
    finally:
        err = server.stop()
    assert server.proc.pid not in pids  # the workers answer, not the supervisor
    assert len(pids) == 2, f"concurrent requests were answered by {len(pids)} process(es)"
    assert "Traceback" not in err
