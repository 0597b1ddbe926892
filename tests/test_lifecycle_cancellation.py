"""``notifications/cancelled`` over real pipes: a cancelled request is never answered.

DESIGN §2 Concurrency: a cancel for a queued call drops it (it never runs); for a running call
it sets the call's cancellation flag (and cancels an async tool's task); no response is sent for
a cancelled request. Tools record what they observe in a side-effect file
(tests/servers/lifecycle_server.py), so a test can tell what ran even when nothing is answered.
"""

import json
import time
from typing import Any

import pytest
from conftest import SERVERS_DIR, STATELESS_VERSION, events, wait_for_event

LIFECYCLE = SERVERS_DIR / "lifecycle_server.py"
VERSION_KEY = "io.modelcontextprotocol/protocolVersion"
CAPS_KEY = "io.modelcontextprotocol/clientCapabilities"


def call_frame(request_id, name: str, arguments: dict, meta: dict | None = None) -> bytes:
    params: dict[str, Any] = {"name": name, "arguments": arguments}
    if meta is not None:
        params["_meta"] = meta
    message = {"jsonrpc": "2.0", "id": request_id, "method": "tools/call", "params": params}
    return json.dumps(message).encode() + b"\n"


def cancel(server, request_id) -> None:
    server.notify("notifications/cancelled", {"requestId": request_id, "reason": "test"})


def frames_written(server) -> list[dict]:
    """Every frame the server wrote so far, in order."""
    return [json.loads(line) for line in server.stdout_lines]


def responses_for(server, request_id) -> list[dict]:
    return [
        f
        for f in frames_written(server)
        if f.get("id") == request_id and ("result" in f or "error" in f)
    ]


def call_add(server, a: int, b: int, timeout: float = 10.0) -> None:
    result = server.call("add", {"a": a, "b": b}, timeout=timeout)
    assert result["structuredContent"] == {"result": a + b}, result


def test_a_cancelled_queued_call_never_runs_and_is_never_answered(spawn, tmp_path):
    server = spawn(LIFECYCLE)
    server.initialize()
    blocker, queued = tmp_path / "blocker", tmp_path / "queued"
    server.send_bytes(call_frame("blocker", "watch_flag", {"path": str(blocker), "seconds": 20}))
    wait_for_event(blocker, "started")
    server.send_bytes(call_frame("queued", "note", {"path": str(queued), "text": "ran"}))
    cancel(server, "queued")
    cancel(server, "blocker")  # frees the worker; the queued call is next in line
    wait_for_event(blocker, "cancelled")
    call_add(server, 1, 2)  # queued behind both: the worker has passed them
    time.sleep(0.5)
    assert not queued.exists(), events(queued)
    assert responses_for(server, "queued") == []
    assert responses_for(server, "blocker") == []


@pytest.mark.parametrize(
    ("tool", "observed"),
    [("watch_flag", "cancelled"), ("check_loop", "raised Cancelled")],
    ids=["ctx.cancelled-becomes-true", "check_cancelled-raises"],
)
def test_a_cancelled_running_sync_tool_observes_it_and_is_never_answered(
    spawn, tmp_path, tool, observed
):
    server = spawn(LIFECYCLE)
    server.initialize()
    marks = tmp_path / "events"
    server.send_bytes(call_frame("running", tool, {"path": str(marks), "seconds": 20}))
    wait_for_event(marks, "started")
    cancel(server, "running")
    wait_for_event(marks, observed, timeout=5)
    call_add(server, 2, 3)  # the next request's response arrives...
    time.sleep(1.0)  # ...and nothing for the cancelled id a second after the tool returned
    assert responses_for(server, "running") == []
    assert "finished" not in events(marks)


def test_a_cancelled_tool_that_ignores_the_cancellation_is_still_never_answered(spawn, tmp_path):
    server = spawn(LIFECYCLE)
    server.initialize()
    marks = tmp_path / "events"
    server.send_bytes(call_frame("deaf", "sleep", {"seconds": 1.5, "path": str(marks)}))
    wait_for_event(marks, "started")
    cancel(server, "deaf")
    call_add(server, 3, 4)  # runs once the deaf tool has returned its (discarded) result
    assert events(marks) == ["started", "finished"]
    time.sleep(1.0)
    assert responses_for(server, "deaf") == []


def test_cancelling_an_async_tool_cancels_its_task(spawn, tmp_path):
    server = spawn(LIFECYCLE)
    server.initialize()
    marks = tmp_path / "events"
    server.send_bytes(call_frame("async", "async_wait", {"path": str(marks), "seconds": 20}))
    wait_for_event(marks, "started")
    started = time.monotonic()
    cancel(server, "async")
    wait_for_event(marks, "cancelled", timeout=5)  # the tool saw asyncio.CancelledError
    call_add(server, 4, 5, timeout=5)
    assert time.monotonic() - started < 5.0
    time.sleep(1.0)
    assert responses_for(server, "async") == []
    assert "finished" not in events(marks)


def test_in_the_stateless_era_no_progress_or_response_follows_a_cancel(spawn, tmp_path):
    server = spawn(LIFECYCLE)  # no initialize: every request carries the _meta envelope
    envelope = {VERSION_KEY: STATELESS_VERSION, CAPS_KEY: {}}
    marks = tmp_path / "events"
    server.send_bytes(
        call_frame(
            "chatty",
            "chatter",
            {"path": str(marks), "seconds": 2.0},
            meta={**envelope, "progressToken": "tok"},
        )
    )
    # Progress flows before the cancel.
    first = server.recv(10)
    assert first["method"] == "notifications/progress", first
    assert first["params"]["progressToken"] == "tok"
    cancel(server, "chatty")
    # The reader handles frames in order: once this answer is out, the cancel was applied.
    marker = server.request("tools/list", {"_meta": envelope}, timeout=5)
    assert "result" in marker, marker
    wait_for_event(marks, "finished", timeout=10)  # the tool kept reporting until the end
    assert "cancelled" in events(marks)
    time.sleep(1.0)

    frames = frames_written(server)
    marker_at = next(i for i, f in enumerate(frames) if f.get("id") == marker["id"])
    after_marker = frames[marker_at + 1 :]
    assert [f for f in after_marker if f.get("method") == "notifications/progress"] == []
    assert responses_for(server, "chatty") == []


FINISHED = object()  # stands for the id of a call that was already answered


@pytest.mark.parametrize(
    "params",
    [
        {"requestId": 12345, "reason": "never sent"},
        {"requestId": "no-such-request"},
        {"requestId": FINISHED},
        {"reason": "no requestId at all"},
        None,
    ],
    ids=["unknown-int", "unknown-str", "finished", "missing-requestId", "no-params"],
)
def test_cancelling_an_unknown_or_finished_request_is_harmless(spawn, params):
    server = spawn(LIFECYCLE)
    server.initialize()
    finished = server.request("tools/call", {"name": "add", "arguments": {"a": 1, "b": 1}})
    assert "result" in finished, finished
    if params is not None and params.get("requestId") is FINISHED:
        params = {**params, "requestId": finished["id"]}
    server.notify("notifications/cancelled", params)
    assert server.request("ping", timeout=5)["result"] == {}
    call_add(server, 20, 22, timeout=5)
    assert server.request("tools/list", timeout=5)["result"]["tools"]
    # The finished call was answered exactly once; the notification itself got no answer.
    assert len(responses_for(server, finished["id"])) == 1
    assert [f for f in frames_written(server) if "error" in f] == []
