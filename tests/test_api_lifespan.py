"""``Server(lifespan=...)``: a context manager (plain or async) entered once before the first
request is read and exited when serving ends, whose value every call sees as
``Context.lifespan``; a failure to enter is one line on stderr and exit status 1."""

from __future__ import annotations

import contextlib
import json
import signal
import sys

import mcpline
import pytest
from conftest import SERVERS_DIR, call_frame, events, host_environ, wait_for_event
from mcpline.testing import Client

SERVER = SERVERS_DIR / "lifespan_server.py"


def test_a_call_sees_what_a_plain_lifespan_yielded_between_its_entry_and_exit(spawn, tmp_path):
    notes = tmp_path / "events"
    server = spawn(SERVER, "sync", str(notes))
    server.initialize()
    assert events(notes) == ["entered"]  # before the first request was read
    result = server.call("state")
    assert result["content"][0]["text"] == "{'db': 'connection of lifespan'}"
    server.call("state")
    server.close_stdin()
    assert server.wait(10) == 0
    assert events(notes) == ["entered", "call", "call", "exited"]


def test_an_async_lifespan_runs_on_the_loop_of_the_async_tools(spawn, tmp_path):
    notes = tmp_path / "events"
    server = spawn(SERVER, "async", str(notes))
    server.initialize()
    # An asyncio.Queue made in the lifespan works in an async tool: the same loop.
    assert server.call("take")["content"][0]["text"] == "from the lifespan"
    server.close_stdin()
    assert server.wait(10) == 0
    assert events(notes) == ["entered", "call", "exited"]
    assert "Traceback" not in server.stderr_text()


@pytest.mark.skipif(sys.platform == "win32", reason="POSIX signals")
@pytest.mark.parametrize("signame", ["SIGTERM", "SIGINT"])
def test_a_stopping_signal_exits_the_lifespan(spawn, tmp_path, signame):
    notes = tmp_path / "events"
    server = spawn(SERVER, "async", str(notes))
    server.initialize()
    server.proc.send_signal(getattr(signal, signame))
    assert server.wait(10) == 0
    assert events(notes) == ["entered", "exited"]


def test_a_server_leaving_a_stuck_tool_behind_still_exits_its_lifespan(spawn, tmp_path):
    # End of input while a tool ignores its cancellation: after the grace period the server
    # ends the process itself, and exits the lifespan first.
    notes = tmp_path / "events"
    server = spawn(SERVER, "sync", str(notes))
    server.initialize()
    server.send_bytes(call_frame(101, "hang", {}))
    wait_for_event(notes, "call")
    server.close_stdin()
    assert server.wait(15) == 0
    assert events(notes) == ["entered", "call", "exited"]
    assert "exiting without it" in server.stderr_text()


def test_a_lifespan_that_fails_to_start_is_one_line_on_stderr_and_exit_status_1(spawn, tmp_path):
    server = spawn(SERVER, "failing", str(tmp_path / "events"))
    server.close_stdin()
    assert server.wait(10) == 1
    assert server.stdout_lines == []
    lines = server.stderr_text().splitlines()
    assert len(lines) == 1, lines
    assert lines[0].startswith(
        "[mcpline] lifespan failed to start: RuntimeError: no database at db.example:5432 (at "
    )
    assert "lifespan_server.py" in lines[0]


def test_what_a_lifespan_prints_goes_to_stderr_never_to_the_protocol(spawn, tmp_path):
    notes = tmp_path / "events"
    server = spawn(SERVER, "noisy", str(notes))
    server.initialize()
    assert server.call("state")["content"][0]["text"] == "'noisy'"
    server.close_stdin()
    assert server.wait(10) == 0
    for line in server.stdout_lines:
        json.loads(line)
    log = server.stderr_text()
    for said in ("connecting", "child connecting", "disconnecting"):
        assert f"[lifespan] {said}" in log, log
    assert events(notes) == ["entered", "call", "exited"]


def test_the_testing_client_enters_the_lifespan_and_exits_it_when_closed():
    steps: list[str] = []

    @contextlib.contextmanager
    def lifespan(server: mcpline.Server):
        steps.append(f"enter {server.name}")
        yield 42
        steps.append("exit")

    server = mcpline.Server("s", lifespan=lifespan)

    @server.tool
    def answer(ctx: mcpline.Context) -> int:
        return ctx.lifespan

    with Client(server) as client:
        assert steps == ["enter s"]
        assert client.call("answer").structured == {"result": 42}
    assert steps == ["enter s", "exit"]


def test_prompts_and_resource_reads_see_the_lifespan_too():
    @contextlib.contextmanager
    def lifespan(server: mcpline.Server):
        yield "db"

    server = mcpline.Server("s", lifespan=lifespan)

    @server.prompt
    def ask(ctx: mcpline.Context) -> str:
        return f"prompt sees {ctx.lifespan}"

    @server.resource("state://{key}")
    def state(key: str, ctx: mcpline.Context) -> str:
        return f"{key} sees {ctx.lifespan}"

    with Client(server) as client:
        assert client.get_prompt("ask")["messages"][0]["content"]["text"] == "prompt sees db"
        assert client.read_resource("state://read")[0]["text"] == "read sees db"


def test_without_a_lifespan_the_context_says_none():
    server = mcpline.Server("s")

    @server.tool
    def look(ctx: mcpline.Context) -> str:
        return repr(ctx.lifespan)

    with Client(server) as client:
        assert client.call("look").text == "None"


def test_a_lifespan_that_returns_no_context_manager_is_refused_clearly():
    server = mcpline.Server("s", lifespan=lambda server: 42)
    with pytest.raises(Exception, match="lifespan must return a context manager"):
        Client(server)


def test_an_async_lifespan_failing_to_start_is_refused_with_its_reason():
    @contextlib.asynccontextmanager
    async def lifespan(server: mcpline.Server):
        raise ConnectionError("refused")
        yield

    server = mcpline.Server("s", lifespan=lifespan)
    with pytest.raises(Exception, match="lifespan failed to start: ConnectionError: refused"):
        Client(server)


@pytest.mark.skipif(sys.platform == "win32", reason="POSIX process model")
def test_a_server_whose_parent_dies_exits_its_lifespan(tmp_path):
    import os
    import subprocess
    import time

    from test_lifecycle_parent_death import INTERMEDIATE, is_running, read_line

    notes = tmp_path / "events"
    stdin_r, stdin_w = os.pipe()
    stdout_r, stdout_w = os.pipe()
    env = host_environ()
    descriptors = map(str, (stdin_r, stdout_w, 2))
    server = [sys.executable, str(SERVER), "sync", str(notes)]
    intermediate = subprocess.Popen(
        [sys.executable, "-c", INTERMEDIATE, *descriptors, *server],
        stdin=subprocess.DEVNULL,
        stdout=subprocess.PIPE,
        pass_fds=(stdin_r, stdout_w),
        env=env,
    )
    os.close(stdin_r)
    os.close(stdout_w)
    server_pid = None
    try:
        assert intermediate.stdout is not None
        server_pid = int(read_line(intermediate.stdout.fileno(), 10))
        wait_for_event(notes, "entered")
        intermediate.kill()
        intermediate.wait(10)
        deadline = time.monotonic() + 10
        while is_running(server_pid) and time.monotonic() < deadline:
            time.sleep(0.05)
        assert not is_running(server_pid)
        assert events(notes) == ["entered", "exited"]
    finally:
        if server_pid is not None and is_running(server_pid):
            os.kill(server_pid, signal.SIGKILL)
        if intermediate.poll() is None:
            intermediate.kill()
        if intermediate.stdout is not None:
            intermediate.stdout.close()
        os.close(stdin_w)
        os.close(stdout_r)
