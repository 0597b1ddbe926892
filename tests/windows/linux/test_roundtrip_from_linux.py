"""Full stdio round trips with a Windows server, driven from Linux through wine's pipes.

The server (tests/windows/servers/windows_server.py) runs in the Windows CPython under wine, with
the Windows build of mcpline's extension; this process is its MCP host: it writes JSON-RPC lines
to the server's stdin pipe and reads its stdout pipe, where nothing but protocol frames may appear.
"""

import json
import re
import sys
import time
from pathlib import Path
from typing import Any

import pytest

# The writers the Windows server's tools run (importable here: the UCRT loads only when used).
sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "servers"))

from writers import WRITERS, expected_line

WRITER_NAMES = list(WRITERS)


def call_frame(request_id: Any, name: str, arguments: dict[str, Any], meta=None) -> bytes:
    params: dict[str, Any] = {"name": name, "arguments": arguments}
    if meta is not None:
        params["_meta"] = meta
    frame = {"jsonrpc": "2.0", "id": request_id, "method": "tools/call", "params": params}
    return json.dumps(frame).encode() + b"\n"


def attached_lines(result: dict[str, Any]) -> list[str]:
    return "\n".join(c["text"] for c in result["content"][1:] if c["type"] == "text").splitlines()


def assert_stdout_is_only_protocol(server) -> None:
    for line in server.stdout_lines:
        assert line.endswith(b"\n"), line
        assert json.loads(line)["jsonrpc"] == "2.0", line


def responses_for(server, request_id: Any) -> list[dict[str, Any]]:
    return [
        frame
        for frame in server.frames_written()
        if frame.get("id") == request_id and ("result" in frame or "error" in frame)
    ]


def cancel(server, request_id: Any) -> None:
    server.notify("notifications/cancelled", {"requestId": request_id, "reason": "test"})


def wait_for_progress(server, token: Any, timeout: float = 60.0) -> dict[str, Any]:
    """Reads frames until the first progress notification for ``token``."""
    while True:
        message = server.recv(timeout)
        assert message is not None, "stdout closed before the tool reported progress"
        if message.get("method") == "notifications/progress":
            assert message["params"]["progressToken"] == token, message
            return message


# ----- the handshake and the tool list -----


def test_initialize_answers_with_the_server_identity_and_the_requested_revision(
    spawn_windows_server,
):
    server = spawn_windows_server()
    result = server.initialize("2025-06-18")
    assert result["protocolVersion"] == "2025-06-18"
    assert result["serverInfo"]["name"] == "windows"
    assert result["serverInfo"]["version"] == "1.0.0"
    assert "tools" in result["capabilities"]


def test_tools_list_describes_every_tool_with_its_input_schema(spawn_windows_server):
    server = spawn_windows_server()
    server.initialize()
    tools = {t["name"]: t for t in server.request(1, "tools/list")["result"]["tools"]}
    assert set(tools) == {
        "add",
        "write_all",
        "write_all_then_fail",
        "ask",
        "echo",
        "say",
        "sleep",
        "wait_for_cancel",
        "check_until_cancelled",
        "crash",
        "abort_now",
        "spin",
        "start_late_writer",
        "start_late_writer_from_c",
        "trickle",
    }
    add = tools["add"]["inputSchema"]
    assert add["properties"] == {"a": {"type": "integer"}, "b": {"type": "integer"}}
    assert sorted(add["required"]) == ["a", "b"]


def test_tools_call_answers_the_structured_result_and_its_text(spawn_windows_server):
    server = spawn_windows_server()
    server.initialize()
    result = server.request(1, "tools/call", {"name": "add", "arguments": {"a": 2, "b": 40}})
    assert result["result"]["structuredContent"] == {"result": 42}
    assert result["result"]["content"] == [{"type": "text", "text": "42"}]


def test_arguments_that_fail_the_schema_give_an_error_result(spawn_windows_server):
    server = spawn_windows_server()
    server.initialize()
    result = server.request(1, "tools/call", {"name": "add", "arguments": {"a": "2", "b": 1}})
    assert result["result"]["isError"] is True, result
    assert "a" in result["result"]["content"][0]["text"]


# ----- what tools write -----


@pytest.fixture
def written_then_ended(spawn_windows_server):
    """A server that ran write_all (id 1) and write_all_then_fail (id 2), then saw end of input.

    Returns (server, result of 1, result of 2); the server has exited with 0.
    """
    server = spawn_windows_server()
    server.initialize()
    ok = server.request(1, "tools/call", {"name": "write_all", "arguments": {"marker": "OK"}})
    failed = server.request(
        2, "tools/call", {"name": "write_all_then_fail", "arguments": {"marker": "FAIL"}}
    )
    server.close_stdin()
    assert server.read_to_end() == []
    assert server.wait() == 0
    return server, ok["result"], failed["result"]


def test_a_result_mode_tool_run_attaches_every_line_it_wrote(written_then_ended):
    _, ok, _ = written_then_ended
    assert ok.get("isError") is not True, ok
    assert ok["content"][0] == {"type": "text", "text": "ok"}
    missing = [w for w in WRITER_NAMES if expected_line(w, "OK") not in attached_lines(ok)]
    assert missing == [], ok["content"]


def test_a_failing_tool_error_result_carries_every_line_it_wrote(written_then_ended):
    _, _, failed = written_then_ended
    assert failed["isError"] is True, failed
    assert failed["content"][0] == {"type": "text", "text": "failed on purpose"}
    missing = [w for w in WRITER_NAMES if expected_line(w, "FAIL") not in attached_lines(failed)]
    assert missing == [], failed["content"]


def test_nothing_a_tool_writes_reaches_the_protocol_stdout(written_then_ended):
    server, _, _ = written_then_ended
    # Every line written there is one JSON-RPC frame: initialize's answer and the two calls'.
    assert_stdout_is_only_protocol(server)
    assert len(server.stdout_lines) == 3, server.stdout_lines


def test_the_server_log_labels_every_line_a_tool_wrote(written_then_ended):
    server, _, _ = written_then_ended
    log = server.stderr_text().splitlines()
    for request_id, tool, marker in ((1, "write_all", "OK"), (2, "write_all_then_fail", "FAIL")):
        missing = [
            w
            for w in WRITER_NAMES
            if f"[{tool} #{request_id}] {expected_line(w, marker)}" not in log
        ]
        assert missing == [], log


def test_input_reads_end_of_file_and_the_requests_behind_it_are_answered(spawn_windows_server):
    server = spawn_windows_server()
    server.initialize()
    echoes = b"".join(call_frame(i, "echo", {"text": f"echo {i}"}) for i in range(11, 31))
    ping = json.dumps({"jsonrpc": "2.0", "id": 31, "method": "ping"}).encode() + b"\n"
    server.send_bytes(call_frame(10, "ask", {}) + echoes + ping)
    answers = server.responses_to({10, 31, *range(11, 31)})
    asked = answers[10]["result"]
    assert asked["isError"] is True, asked
    assert "EOFError" in asked["content"][0]["text"], asked
    for i in range(11, 31):
        answer = answers[i]["result"]
        assert answer["content"] == [{"type": "text", "text": f"echo {i}"}], answer
    assert answers[31]["result"] == {}
    server.close_stdin()
    assert server.wait() == 0
    assert_stdout_is_only_protocol(server)


# ----- cancellation -----


@pytest.mark.parametrize(
    ("tool", "observed"),
    [("wait_for_cancel", "saw the cancellation"), ("check_until_cancelled", "raised Cancelled")],
    ids=["ctx.cancelled-becomes-true", "check_cancelled-raises"],
)
def test_a_cancelled_running_call_observes_it_and_is_never_answered(
    spawn_windows_server, tool, observed
):
    server = spawn_windows_server()
    server.initialize()
    server.send_bytes(call_frame(100, tool, {"seconds": 120}, meta={"progressToken": "run"}))
    wait_for_progress(server, "run")
    cancel(server, 100)
    # One worker runs the calls in turn: this answer means the cancelled tool has returned.
    added = server.request(101, "tools/call", {"name": "add", "arguments": {"a": 1, "b": 2}})
    assert added["result"]["structuredContent"] == {"result": 3}
    server.close_stdin()
    assert server.read_to_end() == []
    assert server.wait() == 0
    assert responses_for(server, 100) == []
    assert f"[{tool} #100] 100 {observed}" in server.stderr_text().splitlines()


def test_a_sync_tool_past_its_time_limit_is_stopped_and_answered_as_timed_out(
    spawn_windows_server,
):
    server = spawn_windows_server()
    server.initialize()
    answer = server.request(300, "tools/call", {"name": "spin", "arguments": {}})
    result = answer["result"]
    assert result["isError"] is True, result
    assert 'Tool "spin" timed out after 0.5 s' in result["content"][0]["text"], result
    # Stopped by an exception raised in the tool's thread, not left spinning.
    assert server.request(301, "ping")["result"] == {}
    server.close_stdin()
    assert server.wait() == 0
    assert "[spin #300] 300 spin stopped: Cancelled" in server.stderr_text().splitlines()


def test_a_cancelled_queued_call_never_runs_and_is_never_answered(spawn_windows_server):
    server = spawn_windows_server()
    server.initialize()
    server.send_bytes(
        call_frame(200, "wait_for_cancel", {"seconds": 120}, meta={"progressToken": "blocker"})
    )
    wait_for_progress(server, "blocker")
    server.send_bytes(call_frame(201, "say", {"text": "QUEUED-CALL-RAN"}))
    cancel(server, 201)
    cancel(server, 200)  # frees the worker; the queued call would be next
    added = server.request(202, "tools/call", {"name": "add", "arguments": {"a": 2, "b": 2}})
    assert added["result"]["structuredContent"] == {"result": 4}
    server.close_stdin()
    assert server.read_to_end() == []
    assert server.wait() == 0
    assert responses_for(server, 200) == []
    assert responses_for(server, 201) == []
    assert "QUEUED-CALL-RAN" not in server.stderr_text()


# ----- end of input -----


def test_requests_pipelined_before_end_of_input_are_all_answered_in_order_then_exit_0(
    spawn_windows_server,
):
    server = spawn_windows_server()
    server.initialize()
    frames = [call_frame(1, "sleep", {"seconds": 0.5})]
    frames += [call_frame(n, "add", {"a": n, "b": 1000}) for n in range(2, 12)]
    server.send_bytes(b"".join(frames))
    server.close_stdin()
    answers = server.read_to_end()
    assert server.wait() == 0
    assert [a["id"] for a in answers] == list(range(1, 12))
    assert answers[0]["result"]["content"] == [{"type": "text", "text": "slept"}]
    for answer in answers[1:]:
        assert answer["result"]["structuredContent"] == {"result": answer["id"] + 1000}
    assert_stdout_is_only_protocol(server)


def test_after_the_eof_grace_a_running_tool_is_cancelled_and_answered_once_queued_calls_fail(
    spawn_windows_server,
):
    # As the core's end-of-input tests specify: after the grace the running call is told to
    # cancel and answered exactly once (a tool that returns normally gets its result sent), and
    # the calls queued behind it get -32603 without running.
    server = spawn_windows_server("1.0")  # eof_grace=1.0
    server.initialize()
    server.send_bytes(
        call_frame(1, "wait_for_cancel", {"seconds": 120}, meta={"progressToken": "long"})
    )
    wait_for_progress(server, "long")
    server.send_bytes(call_frame(2, "say", {"text": "QUEUED-AT-EOF-RAN"}))
    # The reader answers a ping while the tool runs, in input order: the call is queued.
    assert server.request(3, "ping")["result"] == {}
    server.close_stdin()
    answers = {a["id"]: a for a in server.read_to_end(timeout=60)}
    assert server.wait() == 0
    assert answers[2]["error"]["code"] == -32603, answers
    assert "QUEUED-AT-EOF-RAN" not in server.stderr_text()
    assert "[wait_for_cancel #1] 1 saw the cancellation" in server.stderr_text().splitlines()
    assert len(responses_for(server, 1)) == 1, server.stdout_lines


# ----- a fatal exception, an abort -----


def test_a_tool_that_faults_leaves_what_it_wrote_on_the_real_stderr(spawn_windows_server):
    server = spawn_windows_server()
    server.initialize()
    server.send_bytes(call_frame("boom", "crash", {}))
    # The process ends; its exit status is wine's debugger's to decide (0 when winedbg handles
    # the fault, the exception code otherwise), so only the ending is checked.
    server.wait(60)
    log = server.stderr_text()
    assert "fatal exception 0xC0000005 while a tool call ran" in log, log
    assert "[call still running at exit] printed before the crash" in log.splitlines(), log
    assert "[call still running at exit] written to fd 2 before the crash" in log.splitlines(), log
    assert responses_for(server, "boom") == []
    assert_stdout_is_only_protocol(server)


@pytest.mark.parametrize("traceback", [False, True], ids=["plain", "faulthandler"])
def test_a_tool_that_aborts_leaves_what_it_wrote_on_the_real_stderr(
    spawn_windows_server, traceback
):
    server = spawn_windows_server()
    server.initialize()
    server.send_bytes(call_frame("gone", "abort_now", {"traceback": traceback}))
    server.wait(60)
    log = server.stderr_text()
    assert "[mcpline] abort() while a tool call ran; what it had written:" in log, log
    assert "[call still running at exit] printed before the abort" in log.splitlines(), log
    assert "[call still running at exit] written to fd 2 before the abort" in log.splitlines(), log
    assert ("Fatal Python error: Aborted" in log) == traceback, log
    assert responses_for(server, "gone") == []
    assert_stdout_is_only_protocol(server)


# ----- output that outlives its call, output past the capture cap -----


def wait_for_lines(server, lines: set[str], timeout: float = 60.0) -> list[str]:
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        log = server.stderr_text().splitlines()
        if lines <= set(log):
            return log
        time.sleep(0.1)
    return server.stderr_text().splitlines()


def test_a_childs_late_output_reaches_the_log_as_its_calls_without_another_request(
    spawn_windows_server,
):
    server = spawn_windows_server()
    server.initialize()
    started = server.request(
        "start", "tools/call", {"name": "start_late_writer", "arguments": {"tag": "A"}}, timeout=60
    )
    assert started["result"]["content"][0]["text"] == "started"
    label = '[start_late_writer #"start", late] '
    expected = {f"{label}late from A", f"{label}later from A"}
    log = wait_for_lines(server, expected)
    assert expected <= set(log), log
    # The file the child writes to is never a later call's.
    later = server.request(2, "tools/call", {"name": "say", "arguments": {"text": "mine"}})
    assert "late from" not in json.dumps(later), later
    server.close_stdin()
    assert server.wait(60) == 0
    assert_stdout_is_only_protocol(server)


def test_late_output_of_a_child_a_c_library_started_is_its_calls_not_the_next_calls(
    spawn_windows_server,
):
    server = spawn_windows_server()
    server.initialize()
    started = server.request(
        "start",
        "tools/call",
        {"name": "start_late_writer_from_c", "arguments": {"tag": "C", "delay": 1.5}},
        timeout=60,
    )
    assert started["result"]["content"][0]["text"] == "started"
    # The child writes while this call runs: the call's capture must not receive it.
    later = server.request(
        2, "tools/call", {"name": "sleep", "arguments": {"seconds": 4}}, timeout=60
    )
    assert "late from" not in json.dumps(later), later
    label = '[start_late_writer_from_c #"start", late] '
    expected = {f"{label}late from C", f"{label}later from C"}
    log = wait_for_lines(server, expected)
    assert expected <= set(log), log
    assert [line for line in log if "late from C" in line] == [f"{label}late from C"], log
    server.close_stdin()
    assert server.wait(60) == 0
    assert_stdout_is_only_protocol(server)


def test_a_capture_past_its_cap_moves_its_front_to_the_log_while_the_call_runs(
    spawn_windows_server,
):
    cap = 64 * 1024
    batches, lines = 30, 1000  # 30 x 14 KB: about 6 caps
    total = batches * lines
    server = spawn_windows_server("5", str(cap))
    server.initialize()
    server.send_bytes(call_frame("t", "trickle", {"batches": batches, "lines": lines}))
    response = server.response_to("t", timeout=120)
    attached = response["result"]["content"][1]["text"]
    assert attached.endswith(f"line {total - 1:08d}\n"), attached[-200:]
    hidden = int(re.search(r"\[… (\d+) earlier bytes not shown …\]", attached).group(1))
    shown = len(attached.split("…]\n", 1)[1].encode())
    assert hidden + shown == total * len("line 00000000\n"), (hidden, shown)
    server.close_stdin()
    assert server.wait(60) == 0
    label = '[trickle #"t"] '
    copied = [
        line[len(label) :] for line in server.stderr_text().splitlines() if line.startswith(label)
    ]
    # Every line once, in order: the copy at the end of the call goes on where the watcher's
    # copies while it ran stopped.
    numbered = [line for line in copied if line.startswith("line ")]
    assert numbered == [f"line {n:08d}" for n in range(total)], (len(numbered), copied[:3])
    assert any(f"passed its cap of {cap} bytes" in line for line in copied), copied[:5]
    assert_stdout_is_only_protocol(server)
