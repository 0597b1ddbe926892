"""Faults a long-lived server meets, each with its documented outcome, through a real
subprocess server: the process survives and goes on serving."""

from __future__ import annotations

import json
import time

import pytest
from conftest import SERVERS_DIR, call_frame

FAULTS = SERVERS_DIR / "fault_server.py"


@pytest.fixture
def server(spawn):
    process = spawn(FAULTS)
    process.initialize()
    return process


def still_serving(server) -> None:
    assert server.call("add", {"a": 2, "b": 3})["structuredContent"] == {"result": 5}


def text(result: dict) -> str:
    return "\n".join(b.get("text", "") for b in result["content"])


@pytest.mark.parametrize(
    ("tool", "arguments", "outcome"),
    [
        ("out_of_memory", {}, "MemoryError"),
        ("recurse", {}, "RecursionError: maximum recursion depth exceeded"),
        ("not_a_number", {"which": "nan"}, "not JSON data: NaN is not representable in JSON"),
        ("not_a_number", {"which": "inf"}, "not JSON data: inf is not representable in JSON"),
        ("unserialisable", {}, "cannot convert a value of type _thread.lock to JSON"),
        ("deep", {"depth": 100_000}, "not JSON data: the value is nested more than 200 levels"),
    ],
)
def test_a_failing_tool_is_an_error_result_and_the_server_goes_on(server, tool, arguments, outcome):
    result = server.call(tool, arguments, timeout=60)
    assert result["isError"] is True
    assert outcome in text(result)
    still_serving(server)


def test_a_50_mib_result_is_sent_whole_in_one_line(server):
    result = server.call("huge", {"mib": 50}, timeout=120)
    assert len(result["content"][0]["text"]) == 50 * 1024 * 1024
    still_serving(server)


def test_a_thread_left_printing_never_reaches_the_protocol_and_its_lines_reach_stderr(server):
    assert text(server.call("chatter_thread")) == "started"
    for _ in range(20):
        still_serving(server)
        time.sleep(0.05)
    time.sleep(1.2)
    server.close_stdin()
    assert server.wait(10) == 0
    # Every stdout line is a protocol frame.
    for line in server.stdout_lines:
        json.loads(line)
    log = server.stderr_text()
    assert "chatter 99" in log


def test_half_a_line_then_end_of_input_is_answered_and_the_server_exits_0(server):
    server.send_bytes(b'{"jsonrpc":"2.0","id":9,"method":"pi')
    server.close_stdin()
    assert server.wait(10) == 0
    frames = [json.loads(line) for line in server.stdout_lines]
    assert frames[-1]["error"]["code"] == -32700


def test_a_line_over_the_cap_followed_by_requests_is_refused_and_they_are_answered(spawn):
    # A 100 MiB line against the 64 MiB default cap; searching it for its end once per read
    # used to take minutes.
    process = spawn(FAULTS)
    process.initialize()
    big = b'{"jsonrpc":"2.0","id":77,"method":"ping","params":{"x":"' + b"y" * (100 * 1024 * 1024)
    process.send_bytes(big + b'"}}\n')
    refused = process.recv(timeout=30)
    assert refused["id"] == 77 and refused["error"]["code"] == -32600
    still_serving(process)


def test_a_tool_calling_sys_exit_is_an_error_result_and_the_server_goes_on(server):
    result = server.call("leave", {"code": 3})
    assert result["isError"] is True
    assert text(result) == "SystemExit: the tool called sys.exit(3); the server keeps serving"
    still_serving(server)


def test_a_tool_raising_keyboardinterrupt_stops_the_server_after_answering_everything_read(
    server,
):
    # KeyboardInterrupt is what a SIGINT arriving while a tool runs raises in it: the call is
    # answered, the calls read behind it are refused without running, pings read meanwhile
    # are answered, and the server exits 0.
    behind = range(102, 122)
    server.send_bytes(
        call_frame(101, "interrupt", {})
        + b"".join(
            call_frame(n, "add", {"a": n, "b": 1})
            if n % 2
            else b'{"jsonrpc":"2.0","id":%d,"method":"ping"}\n' % n
            for n in behind
        )
    )
    assert server.wait(10) == 0
    answers = {frame["id"]: frame for frame in map(json.loads, server.stdout_lines[1:])}
    assert sorted(answers) == [101, *behind]
    assert text(answers[101]["result"]).startswith("KeyboardInterrupt: the server was interrupted")
    for n in behind:
        if n % 2:
            assert answers[n]["error"]["code"] == -32603
            assert "this call was not run" in answers[n]["error"]["message"]
        else:
            assert answers[n]["result"] == {}
    assert "Traceback" not in server.stderr_text()
