"""When the client stops reading the server's stdout, the server ends cleanly and quietly.

DESIGN §2 Framing: the loop ends at end of input or a dead output channel. Here the client
closes its (reading) end of the server's stdout while keeping stdin open, then sends requests:
the server must exit by itself within a few seconds (exit code 0) without a storm of
tracebacks on stderr.
"""

import json
import select
import subprocess
import sys
import time
from pathlib import Path

import pytest
from conftest import SERVERS_DIR, host_environ

LIFECYCLE = SERVERS_DIR / "lifecycle_server.py"
FAULTS = SERVERS_DIR / "fault_server.py"
EXIT_WITHIN = 5.0
MAX_STDERR_LINES = 20

INITIALIZE = {
    "jsonrpc": "2.0",
    "id": 0,
    "method": "initialize",
    "params": {
        "protocolVersion": "2025-11-25",
        "capabilities": {},
        "clientInfo": {"name": "dead-output", "version": "1"},
    },
}


def line(obj) -> bytes:
    return json.dumps(obj).encode() + b"\n"


def call(request_id, name: str, arguments: dict, meta: dict | None = None) -> bytes:
    params: dict = {"name": name, "arguments": arguments}
    if meta is not None:
        params["_meta"] = meta
    return line({"jsonrpc": "2.0", "id": request_id, "method": "tools/call", "params": params})


def start(stderr_path: Path, server: Path = LIFECYCLE) -> subprocess.Popen:
    # As a host starts a server: Python's stdout block-buffered (no PYTHONUNBUFFERED).
    env = host_environ()
    with open(stderr_path, "wb") as stderr:
        return subprocess.Popen(
            [sys.executable, str(server)],
            env=env,
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            stderr=stderr,
        )


def handshake(proc: subprocess.Popen) -> None:
    assert proc.stdin is not None and proc.stdout is not None
    proc.stdin.write(
        line(INITIALIZE) + line({"jsonrpc": "2.0", "method": "notifications/initialized"})
    )
    proc.stdin.flush()
    ready, _, _ = select.select([proc.stdout], [], [], 10)
    assert ready, "no initialize answer within 10 s"
    assert "result" in json.loads(proc.stdout.readline())


def send_quietly(proc: subprocess.Popen, data: bytes) -> bool:
    """Writes to the server's stdin; False once the server has gone away."""
    assert proc.stdin is not None
    try:
        proc.stdin.write(data)
        proc.stdin.flush()
    except (BrokenPipeError, OSError):
        return False
    return True


def stop(proc: subprocess.Popen) -> None:
    if proc.poll() is None:
        proc.kill()
    proc.wait(10)
    for stream in (proc.stdin, proc.stdout):
        if stream is not None and not stream.closed:
            try:
                stream.close()
            except OSError:
                pass


def assert_ended_cleanly(proc: subprocess.Popen, since: float, stderr_path: Path) -> None:
    try:
        code = proc.wait(EXIT_WITHIN + 1)
    except subprocess.TimeoutExpired:
        code = None
    elapsed = time.monotonic() - since
    stderr = stderr_path.read_text(errors="replace")
    assert code is not None, f"still running {elapsed:.1f} s later; stderr:\n{stderr}"
    assert elapsed < EXIT_WITHIN, f"exited only after {elapsed:.1f} s; stderr:\n{stderr}"
    assert code == 0, f"exit code {code}; stderr:\n{stderr}"
    lines = stderr.splitlines()
    assert len(lines) < MAX_STDERR_LINES, f"{len(lines)} lines on stderr:\n{stderr}"
    assert "Traceback" not in stderr, stderr


def test_requests_after_the_client_closed_the_output_end_the_server_cleanly(tmp_path):
    stderr_path = tmp_path / "stderr.txt"
    proc = start(stderr_path)
    try:
        handshake(proc)
        assert proc.stdout is not None
        proc.stdout.close()  # the client stops reading; stdin stays open
        since = time.monotonic()
        for n in range(1, 51):
            request = (
                line({"jsonrpc": "2.0", "id": n, "method": "ping"})
                if n % 2
                else call(n, "add", {"a": n, "b": n})
            )
            if not send_quietly(proc, request):
                break
            time.sleep(0.01)
        assert_ended_cleanly(proc, since, stderr_path)
    finally:
        stop(proc)


@pytest.mark.parametrize(
    ("tool", "arguments", "meta"),
    [
        ("sleep", {"seconds": 0.5}, None),
        ("chatter", {"seconds": 2.0}, {"progressToken": "tok"}),
    ],
    ids=["then-its-result-cannot-be-written", "then-its-progress-cannot-be-written"],
)
def test_output_closed_while_a_tool_runs_ends_the_server_cleanly(tmp_path, tool, arguments, meta):
    stderr_path = tmp_path / "stderr.txt"
    marks = tmp_path / "events"
    proc = start(stderr_path)
    try:
        handshake(proc)
        assert send_quietly(proc, call(1, tool, {**arguments, "path": str(marks)}, meta))
        deadline = time.monotonic() + 10
        while not marks.exists():
            assert time.monotonic() < deadline, "the tool never started"
            time.sleep(0.02)
        assert proc.stdout is not None
        proc.stdout.close()  # closed while the tool runs; stdin stays open, nothing more is sent
        since = time.monotonic()
        assert_ended_cleanly(proc, since, stderr_path)
    finally:
        stop(proc)


def test_output_closed_in_the_middle_of_a_response_ends_the_server_cleanly(tmp_path):
    # A 50 MiB answer fills the pipe; the client reads a little of it and closes its end, so
    # the server's write fails with EPIPE part-way through one frame.
    stderr_path = tmp_path / "stderr.txt"
    proc = start(stderr_path, FAULTS)
    try:
        handshake(proc)
        assert send_quietly(proc, call(1, "huge", {"mib": 50}))
        assert proc.stdout is not None
        ready, _, _ = select.select([proc.stdout], [], [], 30)
        assert ready, "no answer began within 30 s"
        head = proc.stdout.read1(64 * 1024)
        assert head.startswith(b'{"jsonrpc":"2.0","id":1,"result":')
        proc.stdout.close()
        since = time.monotonic()
        assert_ended_cleanly(proc, since, stderr_path)
    finally:
        stop(proc)
