"""Time limits and cancellation stop a sync tool: its thread raises ``Cancelled``, its
``finally`` blocks run, and the server answers (or, for a cancel, stays silent) within a
fraction of a second, not when the tool would have finished.

The tools (tests/servers/contract_server.py) would run 30 s; each records in ``marker`` how it
ended. Bounds below are generous against that 30 s.
"""

from __future__ import annotations

import sys
import time
from pathlib import Path

import pytest
from conftest import SERVERS_DIR, call_frame

CONTRACT = SERVERS_DIR / "contract_server.py"
PROMPT = 5.0


def ended(marker: Path, within: float = PROMPT) -> str:
    deadline = time.monotonic() + within
    while time.monotonic() < deadline:
        if marker.exists() and marker.read_text():
            return marker.read_text()
        time.sleep(0.02)
    return "<still running>"


def text(result: dict) -> str:
    return " ".join(b.get("text", "") for b in result["content"])


@pytest.mark.parametrize("tool", ["sleeps", "spins", "waits_for_child"])
def test_a_sync_tool_past_its_time_limit_is_stopped_and_answered_as_timed_out(
    spawn, tmp_path, tool
):
    server = spawn(CONTRACT)
    server.initialize()
    marker = tmp_path / "marker"
    started = time.monotonic()
    result = server.call(tool, {"marker": str(marker)}, timeout=PROMPT)
    assert time.monotonic() - started < PROMPT
    assert result["isError"] is True
    assert f'Tool "{tool}" timed out after 0.5 s' in text(result)
    assert ended(marker) == "raised Cancelled"
    # The worker is free again at once.
    assert server.call("find", {"name": "one"}, timeout=PROMPT)["structuredContent"] == {
        "result": 1
    }


@pytest.mark.skipif(sys.platform == "win32", reason="libc sleep through ctypes.PyDLL(None)")
def test_a_tool_stuck_in_c_is_answered_at_its_deadline_and_the_limitation_is_said(spawn):
    server = spawn(CONTRACT)
    server.initialize()
    started = time.monotonic()
    result = server.call("stuck_in_c", {"seconds": 4}, timeout=PROMPT)
    answered = time.monotonic() - started
    assert answered < 3.0  # the C call holds the GIL for 4 s
    assert result["isError"] is True
    assert "cannot be interrupted" in text(result)
    # Queued behind the stuck call, the next one is answered once the C call returns; the
    # stuck call's own late result is never sent (ids are matched by the harness).
    assert server.call("find", {"name": "two"}, timeout=10)["structuredContent"] == {"result": 2}
    assert "cannot be interrupted" in server.stderr_text()


def test_a_cancelled_sync_tool_stops_and_is_not_answered(spawn, tmp_path):
    server = spawn(CONTRACT)
    server.initialize()
    marker = tmp_path / "marker"
    server.send_bytes(call_frame(101, "naps", {"marker": str(marker)}))
    time.sleep(0.3)  # the call is running
    server.notify("notifications/cancelled", {"requestId": 101, "reason": "user"})
    assert ended(marker) == "raised Cancelled"
    # The next answer is the next call's: the cancelled one sends nothing.
    result = server.call("find", {"name": "one"}, timeout=PROMPT)
    assert result["structuredContent"] == {"result": 1}


def test_end_of_input_stops_a_running_sync_tool_and_exits_in_order(spawn, tmp_path):
    server = spawn(CONTRACT)
    server.initialize()
    marker = tmp_path / "marker"
    server.send_bytes(call_frame(101, "naps", {"marker": str(marker)}))
    server.send_bytes(call_frame(102, "find", {"name": "one"}))
    time.sleep(0.3)
    closed = time.monotonic()
    server.close_stdin()
    # The default grace (1.5 s) ends before the official clients give up (2 s or more).
    queued = server.recv(timeout=PROMPT)
    assert time.monotonic() - closed < 2.0
    assert queued["id"] == 102
    assert queued["error"]["code"] == -32603
    assert server.wait(timeout=PROMPT) == 0
    assert ended(marker) == "raised Cancelled"
    assert "exiting without it" not in server.stderr_text()
