"""End of input: everything already read is answered, in order; a hung tool cannot keep the
process alive past the grace period.

DESIGN §2 Concurrency: at end of input every request already read is still answered (queued
calls run in order). If a tool still runs when the grace period has passed, it is told to
cancel, the calls still queued are answered with an error, and the process exits 0 even if the
tool hangs.
"""

import time

from conftest import SERVERS_DIR, call_frame, events, wait_for_event

LIFECYCLE = SERVERS_DIR / "lifecycle_server.py"
CALLS = 20


def read_to_end(server, timeout: float = 10.0) -> list[dict]:
    frames = []
    while (message := server.recv(timeout)) is not None:
        frames.append(message)
    return frames


def test_twenty_calls_then_end_of_input_get_exactly_twenty_answers_in_order_then_exit_0(spawn):
    server = spawn(LIFECYCLE)
    server.initialize()
    ids = [f"call-{n}" for n in range(CALLS)]
    server.send_bytes(
        b"".join(call_frame(ids[n], "add", {"a": n, "b": 1000}) for n in range(CALLS))
    )
    server.close_stdin()
    frames = read_to_end(server)
    assert server.wait(10) == 0
    assert [f.get("id") for f in frames] == ids
    for n, frame in enumerate(frames):
        assert frame["result"]["structuredContent"] == {"result": n + 1000}, frame


def test_a_hung_sync_tool_does_not_keep_the_process_alive_after_end_of_input(spawn, tmp_path):
    server = spawn(LIFECYCLE, "1.0")  # eof_grace=1.0
    server.initialize()
    hung, queued = tmp_path / "hung", tmp_path / "queued"
    server.send_bytes(call_frame("hung", "sleep", {"seconds": 30, "path": str(hung)}))
    wait_for_event(hung, "started")
    server.send_bytes(
        call_frame("queued-1", "note", {"path": str(queued), "text": "one"})
        + call_frame("queued-2", "add", {"a": 1, "b": 2})
    )
    time.sleep(0.2)  # both read and queued before end of input
    started = time.monotonic()
    server.close_stdin()
    assert server.wait(15) == 0
    elapsed = time.monotonic() - started
    assert elapsed < 6.0, f"exited {elapsed:.1f} s after end of input (grace 1 s, tool 30 s)"
    answers = {f.get("id"): f for f in read_to_end(server, 5)}
    # The calls queued behind the hung tool are answered with an error, not run.
    assert "error" in answers.get("queued-1", {}), answers
    assert "error" in answers.get("queued-2", {}), answers
    assert not queued.exists()
    # The hung call itself: no answer, or an isError result; never a success.
    if "hung" in answers:
        assert answers["hung"].get("result", {}).get("isError") is True, answers["hung"]
    assert "finished" not in events(hung)
