"""While a tool runs, the reader still answers at once; tool calls run one at a time, in order.

DESIGN §2 Concurrency: one reader thread answers ``ping`` and ``tools/list`` even while a tool
runs (also one that holds the GIL in a pure-Python loop); tool calls run one at a time, in
arrival order. Everything goes through a real server subprocess
(tests/servers/lifecycle_server.py).
"""

import json
import time

import pytest
from conftest import SERVERS_DIR, call_frame, events, wait_for_event

LIFECYCLE = SERVERS_DIR / "lifecycle_server.py"
# Generous on a loaded 2-core machine; the tool keeps running for 20 s.
PROMPT = 5.0
TOOL_SECONDS = 20


def ids_written(server) -> list:
    """Ids of every response the server wrote so far (in order)."""
    frames = [json.loads(line) for line in server.stdout_lines]
    return [f.get("id") for f in frames if "result" in f or "error" in f]


@pytest.mark.parametrize(
    "tool",
    ["sleep", "busy"],
    ids=["time.sleep", "pure-python-busy-loop-holding-the-gil"],
)
def test_ping_and_tools_list_are_answered_promptly_while_a_sync_tool_runs(spawn, tmp_path, tool):
    server = spawn(LIFECYCLE)
    server.initialize()
    marks = tmp_path / "events"
    server.send_bytes(call_frame("long", tool, {"seconds": TOOL_SECONDS, "path": str(marks)}))
    wait_for_event(marks, "started")
    time.sleep(0.2)  # well inside the tool now

    started = time.monotonic()
    pong = server.request("ping", timeout=PROMPT)
    ping_seconds = time.monotonic() - started
    assert pong["result"] == {}, pong
    assert ping_seconds < PROMPT

    started = time.monotonic()
    listing = server.request("tools/list", timeout=PROMPT)
    list_seconds = time.monotonic() - started
    assert list_seconds < PROMPT
    names = [t["name"] for t in listing["result"]["tools"]]
    assert tool in names and names == sorted(names)

    # Both answers came while the tool was still running.
    assert "long" not in ids_written(server)
    assert "finished" not in events(marks)


def test_three_queued_tool_calls_run_one_at_a_time_and_are_answered_in_arrival_order(
    spawn, tmp_path
):
    server = spawn(LIFECYCLE)
    server.initialize()
    marks = tmp_path / "events"
    # One write: all three are queued before the first finishes.
    server.send_bytes(
        call_frame(1, "sleep", {"seconds": 0.5, "path": str(marks)})
        + call_frame(2, "note", {"path": str(marks), "text": "second"})
        + call_frame(3, "note", {"path": str(marks), "text": "third"})
    )
    answers = [server.recv(10) for _ in range(3)]
    assert [a["id"] for a in answers] == [1, 2, 3], answers
    assert answers[0]["result"]["content"][0]["text"] == "slept"
    assert answers[1]["result"]["content"][0]["text"] == "second"
    assert answers[2]["result"]["content"][0]["text"] == "third"
    # The second call started only after the first had finished: no overlap.
    assert events(marks) == ["started", "finished", "second", "third"]
