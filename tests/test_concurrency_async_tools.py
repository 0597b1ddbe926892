"""Calls of ``async def`` tools run concurrently (up to ``max_concurrency``), plain tools one at a
time; pings, lists and cancellations are answered at once; and what overlapping calls print is
attributed without guessing: each call's Python-level writes are its own, descriptor-level
writes made while calls overlapped are marked as shared with the others."""

import json
import re
import time

from conftest import SERVERS_DIR

SERVER = SERVERS_DIR / "concurrent_server.py"
ATTACHED = "Output of the tool run:\n"


def call_frame(id_, name, **arguments):
    return {
        "jsonrpc": "2.0",
        "id": id_,
        "method": "tools/call",
        "params": {"name": name, "arguments": arguments},
    }


def send_all(server, frames):
    server.send_bytes(b"".join(json.dumps(f).encode() + b"\n" for f in frames))


def responses(server, count, timeout=15.0):
    got = {}
    for _ in range(count):
        frame = server.recv(timeout)
        got[frame["id"]] = frame
    return got


def attached(result):
    texts = [b["text"] for b in result["content"] if b["text"].startswith(ATTACHED)]
    assert len(texts) == 1, result
    return texts[0][len(ATTACHED) :]


def test_four_async_calls_run_at_the_same_time(spawn):
    server = spawn(SERVER)
    server.initialize()
    send_all(server, [call_frame(i, "meet", n=4) for i in range(4)])
    got = responses(server, 4)
    for i in range(4):
        result = got[i]["result"]
        assert not result.get("isError"), result
        assert result["structuredContent"] == {"result": 4}


def test_max_concurrency_bounds_the_calls_running_at_once(spawn):
    server = spawn(SERVER, "2")
    server.initialize()
    send_all(server, [call_frame(i, "busy", seconds=0.2) for i in range(6)])
    got = responses(server, 6)
    peaks = [got[i]["result"]["structuredContent"]["result"] for i in range(6)]
    assert max(peaks) == 2, peaks


def test_more_calls_than_max_concurrency_wait_and_all_complete(spawn):
    server = spawn(SERVER, "1")
    server.initialize()
    # With one slot, two `meet(n=2)` calls can never meet: each fails alone, in turn.
    send_all(server, [call_frame(i, "meet", n=2) for i in range(2)])
    got = responses(server, 2)
    for i in range(2):
        assert got[i]["result"]["isError"] is True
        assert "only 1 of 2" in got[i]["result"]["content"][0]["text"]


def test_pings_lists_and_cancellations_are_answered_while_every_slot_is_taken(spawn):
    server = spawn(SERVER, "2")
    server.initialize()
    hung = (101, 102, 103)
    send_all(server, [call_frame(i, "hang") for i in hung])  # the third one waits
    assert server.request("ping", timeout=5)["result"] == {}
    tools = server.request("tools/list", timeout=5)["result"]["tools"]
    assert "hang" in {t["name"] for t in tools}
    for i in hung:
        server.notify("notifications/cancelled", {"requestId": i, "reason": "test"})
    # Cancelled calls are never answered; the slots are free again.
    result = server.call("busy", {"seconds": 0.01}, timeout=5)
    assert result["structuredContent"] == {"result": 1}
    server.close_stdin()
    assert server.wait(10) == 0
    ids = [json.loads(line).get("id") for line in server.stdout_lines]
    assert not set(hung) & set(ids), ids


def test_plain_tools_still_run_one_at_a_time(spawn):
    server = spawn(SERVER)
    server.initialize()
    send_all(server, [call_frame(i, "sync_step", tag=f"s{i}") for i in range(4)])
    got = responses(server, 4)
    assert {got[i]["result"]["structuredContent"]["result"] for i in range(4)} == {1}


def test_each_overlapping_call_gets_its_own_python_output(spawn):
    server = spawn(SERVER)
    server.initialize()
    send_all(server, [call_frame(1, "chatty", tag="A"), call_frame(2, "chatty", tag="B")])
    got = responses(server, 2)
    for id_, mine, theirs in ((1, "A", "B"), (2, "B", "A")):
        text = attached(got[id_]["result"])
        own = "\n".join(line for line in text.splitlines() if not line.startswith("[shared with"))
        # In order. (A byte a child writes in the very instant of a print makes that print's
        # line end count as shared, so lines are matched, not split.)
        expected = [f"print {mine}", f"stderr {mine}", f"log logging {mine}", f"done {mine}"]
        positions = [own.find(line) for line in expected]
        assert -1 not in positions and positions == sorted(positions), text
        assert theirs not in own, text


def test_a_childs_output_during_an_overlap_is_marked_as_shared_with_the_other_calls(spawn):
    server = spawn(SERVER)
    server.initialize()
    send_all(server, [call_frame(1, "chatty", tag="A"), call_frame(2, "chatty", tag="B")])
    got = responses(server, 2)
    first = attached(got[1]["result"])
    second = attached(got[2]["result"])
    assert re.search(r"^\[shared with chatty #2\] child A$", first, re.M), first
    assert re.search(r"^\[shared with chatty #1\] child A$", second, re.M), second
    server.close_stdin()
    assert server.wait(10) == 0
    log = server.stderr_text()
    # The log holds each shared line once, labelled with both calls.
    assert log.count("child A\n") == 1, log
    assert "[chatty #1 + chatty #2] child A\n" in log, log
    assert "[chatty #1] print A" in log and "[chatty #2] print B" in log, log


def test_a_plain_call_overlapping_async_calls_keeps_its_own_prints(spawn):
    server = spawn(SERVER)
    server.initialize()
    send_all(
        server,
        [call_frame(1, "chatty", tag="A"), call_frame(2, "sync_step", tag="S", seconds=0.2)],
    )
    got = responses(server, 2)
    plain = attached(got[2]["result"])
    own = "\n".join(line for line in plain.splitlines() if not line.startswith("[shared with"))
    assert "sync S" in own and "A" not in own, plain
    # Its descriptor-level write happened while `chatty` ran: shared, and marked so.
    assert "[shared with chatty #1] sync fd S" in plain, plain
    assert "sync S" not in [line for line in attached(got[1]["result"]).splitlines()]


def test_an_async_tools_traceback_is_attached_to_its_own_call_only(spawn):
    server = spawn(SERVER)
    server.initialize()
    send_all(
        server,
        [call_frame(1, "failing_async", tag="X"), call_frame(2, "chatty", tag="B", pause=0.2)],
    )
    got = responses(server, 2)
    failed = got[1]["result"]
    assert failed["isError"] is True
    text = attached(failed)
    assert "before X" in text and "ValueError: broken X" in text, text
    other = attached(got[2]["result"])
    assert "Traceback" not in other and "before X" not in other, other


def test_end_of_input_lets_running_async_calls_finish_and_answers_them(spawn):
    server = spawn(SERVER)
    server.initialize()
    send_all(server, [call_frame(i, "busy", seconds=0.3) for i in range(3)])
    server.close_stdin()
    got = responses(server, 3)
    assert all("result" in got[i] for i in range(3)), got
    assert server.wait(10) == 0


def test_cancelling_one_overlapping_call_leaves_the_others_serving(spawn):
    server = spawn(SERVER)
    server.initialize()
    send_all(server, [call_frame(101, "hang"), call_frame(102, "busy", seconds=0.1)])
    assert responses(server, 1)[102]["result"]["structuredContent"] == {"result": 1}
    server.notify("notifications/cancelled", {"requestId": 101})
    assert server.call("busy", {"seconds": 0.01}, timeout=5)["structuredContent"] == {"result": 1}


def test_late_output_of_a_child_started_while_calls_overlapped_names_the_call_that_started_it(
    spawn,
):
    server = spawn(SERVER)
    server.initialize()
    # The quiet starter leaves first; the other call ends the shared capture.
    send_all(server, [call_frame(1, "leave_child", tag="A"), call_frame(2, "busy", seconds=0.15)])
    responses(server, 2)
    time.sleep(0.6)
    server.close_stdin()
    assert server.wait(10) == 0
    late = [line for line in server.stderr_text().splitlines() if line.endswith("late from A")]
    assert len(late) == 1, server.stderr_text()
    assert re.match(
        r"^\[(leave_child #1 \+ busy #2|busy #2 \+ leave_child #1), late\] ", late[0]
    ), late


def test_a_print_with_fd_1_moved_after_a_child_ran_goes_where_fd_1_points(spawn, tmp_path):
    log = tmp_path / "tool.log"
    server = spawn(SERVER)
    server.initialize()
    frames = [call_frame(1, "log_after_child", path=str(log)), call_frame(2, "busy", seconds=0.3)]
    send_all(server, frames)
    got = responses(server, 2)
    assert log.read_text() == "to the tool's log\n"
    assert "to the tool's log" not in json.dumps(got[1]["result"]), got[1]
