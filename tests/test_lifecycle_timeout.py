"""Per-tool ``timeout=``: a call that outlives its limit is cancelled and answered with an error.

DESIGN §2 Tools: cancellation by timeout is a tool result with ``isError: true`` and a text
explanation. tests/servers/lifecycle_server.py registers ``limited_async`` (awaits 30 s) and
``limited_check`` (loops on ``ctx.check_cancelled()`` for 30 s), both with ``timeout=0.5``.
"""

import time

import pytest
from conftest import SERVERS_DIR, events

LIFECYCLE = SERVERS_DIR / "lifecycle_server.py"
# The tools would run 30 s; a timed-out answer well before that is what matters.
PROMPT = 5.0


@pytest.mark.parametrize(
    ("tool", "observed"),
    [("limited_async", "cancelled"), ("limited_check", "raised Cancelled")],
    ids=["async-tool-task-is-cancelled", "sync-tool-check_cancelled-raises"],
)
def test_a_call_past_its_timeout_is_cancelled_and_answered_with_a_timed_out_error(
    spawn, tmp_path, tool, observed
):
    server = spawn(LIFECYCLE)
    server.initialize()
    marks = tmp_path / "events"
    started = time.monotonic()
    result = server.call(tool, {"path": str(marks)}, timeout=PROMPT)
    elapsed = time.monotonic() - started
    assert elapsed < PROMPT
    assert result["isError"] is True, result
    text = " ".join(block.get("text", "") for block in result["content"])
    assert "timed out" in text, result
    # The tool itself was told to stop (and did not run to completion).
    assert events(marks) == ["started", observed]
    # The server goes on serving.
    assert server.call("add", {"a": 1, "b": 2}, timeout=PROMPT)["structuredContent"] == {
        "result": 3
    }
