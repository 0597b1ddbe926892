"""Signals at random moments while a stream of calls is served, each with its documented
outcome: SIGPIPE is ignored and every call is answered; SIGINT, SIGTERM and SIGHUP stop the
server within seconds with exit code 0, no traceback, nothing but whole protocol frames on
stdout, and no request answered twice; a SIGHUP the caller ignores (``nohup``) stays ignored.

The moments come from a seeded generator: a failure names its seed and delays.
"""

from __future__ import annotations

import json
import random
import signal
import sys
import threading
import time

import pytest
from conftest import SERVERS_DIR

pytestmark = pytest.mark.skipif(sys.platform == "win32", reason="POSIX signals")

LIFECYCLE = SERVERS_DIR / "lifecycle_server.py"
CALLS = 1500
PROMPT = 5.0
STOPPING = [signal.SIGINT, signal.SIGTERM, signal.SIGHUP]


def mixed_stream(count: int) -> tuple[bytes, set[int]]:
    """``count`` requests (quick calls, printing failures, short sleeps, pings, lists) and a
    notification between them; returns the bytes and the request ids."""
    frames = []
    for n in range(101, 101 + count):
        kind = n % 5
        if kind == 0:
            params = {"name": "add", "arguments": {"a": n, "b": 1}}
            frames.append({"jsonrpc": "2.0", "id": n, "method": "tools/call", "params": params})
        elif kind == 1:
            params = {"name": "say", "arguments": {"text": f"line {n}"}}
            frames.append({"jsonrpc": "2.0", "id": n, "method": "tools/call", "params": params})
        elif kind == 2:
            params = {"name": "sleep", "arguments": {"seconds": 0.001}}
            frames.append({"jsonrpc": "2.0", "id": n, "method": "tools/call", "params": params})
        elif kind == 3:
            frames.append({"jsonrpc": "2.0", "id": n, "method": "ping"})
        else:
            frames.append({"jsonrpc": "2.0", "id": n, "method": "tools/list"})
            frames.append({"jsonrpc": "2.0", "method": "notifications/progress", "params": {}})
    data = b"".join(json.dumps(f).encode() + b"\n" for f in frames)
    return data, set(range(101, 101 + count))


def write_quietly(server, data: bytes) -> None:
    try:
        server.send_bytes(data)
    except (BrokenPipeError, OSError):
        pass  # the server stopped while we wrote: what it did not read is not answered


def answered_ids(server) -> list[int]:
    ids = []
    for line in server.stdout_lines:
        frame = json.loads(line)  # every stdout line is a whole JSON value
        assert "id" in frame, frame  # nothing but answers: no notification was asked for
        ids.append(frame["id"])
    return ids


def start_stream(spawn):
    server = spawn(LIFECYCLE)
    server.initialize()
    data, ids = mixed_stream(CALLS)
    writer = threading.Thread(target=write_quietly, args=(server, data), daemon=True)
    writer.start()
    return server, ids, writer


@pytest.mark.parametrize("seed", range(3))
def test_sigpipe_at_random_moments_is_ignored_and_every_request_is_answered_once(spawn, seed):
    rng = random.Random(seed)
    delays = [rng.uniform(0, 0.15) for _ in range(5)]
    server, ids, writer = start_stream(spawn)
    for delay in delays:
        time.sleep(delay)
        server.proc.send_signal(signal.SIGPIPE)
    answers = [server.recv(timeout=30) for _ in range(len(ids))]
    writer.join(10)
    assert sorted(a["id"] for a in answers) == sorted(ids), f"seed {seed}, delays {delays}"
    assert server.call("add", {"a": 2, "b": 3})["structuredContent"] == {"result": 5}
    server.close_stdin()
    assert server.wait(10) == 0


@pytest.mark.parametrize("seed", range(3))
@pytest.mark.parametrize("signum", STOPPING, ids=lambda s: signal.Signals(s).name)
def test_a_stopping_signal_at_a_random_moment_ends_the_server_cleanly(spawn, signum, seed):
    delay = random.Random(seed).uniform(0, 0.3)
    server, ids, writer = start_stream(spawn)
    time.sleep(delay)
    signalled_at = time.monotonic()
    server.proc.send_signal(signum)
    code = server.wait(PROMPT + 5)
    elapsed = time.monotonic() - signalled_at
    writer.join(10)
    stderr = server.stderr_text()
    context = f"seed {seed}, delay {delay:.3f} s; stderr:\n{stderr[-2000:]}"
    assert code == 0, f"exit code {code}, {context}"
    assert elapsed < PROMPT, f"exited {elapsed:.1f} s after the signal, {context}"
    assert "Traceback" not in stderr, context
    answered = answered_ids(server)
    assert len(answered) == len(set(answered)), f"a request was answered twice, {context}"
    assert set(answered) <= ids | {1}, context  # 1: the initialize request


def test_a_sighup_ignored_by_the_caller_stays_ignored(spawn):
    # As under `nohup`: the server starts with SIGHUP ignored.
    nohup = (
        "import runpy, signal, sys; signal.signal(signal.SIGHUP, signal.SIG_IGN); "
        f"sys.argv = [{str(LIFECYCLE)!r}]; sys.path.insert(0, {str(SERVERS_DIR)!r}); "
        "runpy.run_path(sys.argv[0], run_name='__main__')"
    )
    server = spawn("-c", nohup)
    server.initialize()
    server.proc.send_signal(signal.SIGHUP)
    assert server.call("add", {"a": 2, "b": 3})["structuredContent"] == {"result": 5}
    server.close_stdin()
    assert server.wait(10) == 0
