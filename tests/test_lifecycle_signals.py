"""SIGTERM and SIGINT stop the server promptly and cleanly: exit code 0, no Python traceback.

``Server.run()`` turns SIGINT/SIGTERM into a clean stop (python/mcpline/_server.py), idle or
while a tool (sync or async) runs on the main thread.
"""

import json
import signal
import sys
import time

import pytest
from conftest import SERVERS_DIR, call_frame, events, wait_for_event

pytestmark = pytest.mark.skipif(sys.platform == "win32", reason="POSIX signals")

LIFECYCLE = SERVERS_DIR / "lifecycle_server.py"
PROMPT = 5.0
SIGNALS = [signal.SIGTERM, signal.SIGINT]


def assert_stopped_cleanly(server, signalled_at: float) -> None:
    code = server.wait(15)
    elapsed = time.monotonic() - signalled_at
    stderr = server.stderr_text()
    assert code == 0, f"exit code {code}; stderr:\n{stderr}"
    assert elapsed < PROMPT, f"exited {elapsed:.1f} s after the signal"
    assert "Traceback" not in stderr, stderr
    for line in server.stdout_lines:
        json.loads(line)  # stdout carried only protocol frames


@pytest.mark.parametrize("signum", SIGNALS, ids=lambda s: signal.Signals(s).name)
def test_a_signal_stops_an_idle_server_promptly_with_exit_0_and_no_traceback(spawn, signum):
    server = spawn(LIFECYCLE)
    server.initialize()
    assert server.request("ping")["result"] == {}
    signalled_at = time.monotonic()
    server.proc.send_signal(signum)
    assert_stopped_cleanly(server, signalled_at)


@pytest.mark.parametrize("signum", SIGNALS, ids=lambda s: signal.Signals(s).name)
@pytest.mark.parametrize(
    "tool", ["sleep", "busy", "async_wait"], ids=["time.sleep", "busy-loop", "async-tool"]
)
def test_a_signal_stops_a_server_running_a_tool_promptly_with_exit_0(spawn, tmp_path, signum, tool):
    server = spawn(LIFECYCLE)
    server.initialize()
    marks = tmp_path / "events"
    server.send_bytes(call_frame("long", tool, {"seconds": 30, "path": str(marks)}))
    wait_for_event(marks, "started")
    time.sleep(0.2)
    signalled_at = time.monotonic()
    server.proc.send_signal(signum)
    assert_stopped_cleanly(server, signalled_at)
    assert "finished" not in events(marks)
