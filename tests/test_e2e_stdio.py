"""End to end over real pipes: a server subprocess speaking newline-delimited JSON-RPC."""

import json
import os
import signal
import sys
import time

import pytest
from conftest import BASIC_SERVER, SERVERS_DIR

HANG_SERVER = SERVERS_DIR / "hang_server.py"

INIT_PARAMS = {
    "protocolVersion": "2025-11-25",
    "capabilities": {},
    "clientInfo": {"name": "e2e", "version": "1"},
}


def frame(request_id, method: str, params: dict | None = None) -> bytes:
    message: dict = {"jsonrpc": "2.0", "id": request_id, "method": method}
    if params is not None:
        message["params"] = params
    return json.dumps(message).encode()


def assert_stdout_is_only_protocol(server) -> None:
    for line in server.stdout_lines:
        assert line.endswith(b"\n"), line
        message = json.loads(line)
        assert isinstance(message, (dict, list)), line
        for item in message if isinstance(message, list) else [message]:
            assert item["jsonrpc"] == "2.0", line


def test_full_session_initialize_list_call(spawn):
    server = spawn(BASIC_SERVER)
    init = server.initialize()
    assert init["protocolVersion"] == "2025-11-25"
    assert init["serverInfo"]["name"] == "basic"
    assert init["instructions"] == "A server for tests."

    listing = server.request("tools/list")
    names = [t["name"] for t in listing["result"]["tools"]]
    assert names == sorted(names)
    assert {"add", "echo", "fail", "crash", "printer", "slow"} <= set(names)

    result = server.call("add", {"a": 2, "b": 40})
    assert result["structuredContent"] == {"result": 42}
    assert result["content"] == [{"type": "text", "text": "42"}]

    failed = server.call("fail", {"message": "nope"})
    assert failed["isError"] is True
    assert failed["content"][0] == {"type": "text", "text": "nope"}

    crashed = server.call("crash")
    assert crashed["isError"] is True
    assert crashed["content"][0]["text"] == "RuntimeError: kaboom"

    assert server.call("echo", {"text": "still here"})["content"][0]["text"] == "still here"
    server.close_stdin()
    assert server.wait(10) == 0
    assert_stdout_is_only_protocol(server)


def test_output_is_one_compact_line_per_message_with_newlines_escaped(spawn):
    server = spawn(BASIC_SERVER)
    server.initialize()
    text = "line one\nline two\u2028end"
    result = server.call("echo", {"text": text})
    assert result["content"][0]["text"] == text
    server.close_stdin()
    assert server.wait(10) == 0
    assert all(line.count(b"\n") == 1 for line in server.stdout_lines)


def test_prints_and_fd_writes_inside_a_tool_never_reach_stdout(spawn):
    server = spawn(BASIC_SERVER)
    server.initialize()
    result = server.call("printer")
    assert result["content"][0] == {"type": "text", "text": "ok"}
    assert server.call("echo", {"text": "after"})["content"][0]["text"] == "after"
    server.close_stdin()
    assert server.wait(10) == 0
    assert_stdout_is_only_protocol(server)
    stdout = b"".join(server.stdout_lines)
    for marker in (b"PRINTED-TO-STDOUT", b"FD1-WRITE", b"PRINTED-TO-STDERR", b"FD2-WRITE"):
        assert marker not in stdout


def test_prints_and_fd_writes_inside_a_tool_appear_on_stderr(spawn):
    server = spawn(BASIC_SERVER)
    server.send_bytes(
        frame(1, "initialize", INIT_PARAMS)
        + b"\n"
        + frame(2, "tools/call", {"name": "printer", "arguments": {}})
        + b"\n"
    )
    server.close_stdin()
    assert server.wait(10) == 0
    stderr = server.stderr_text()
    for marker in ("PRINTED-TO-STDOUT", "FD1-WRITE", "PRINTED-TO-STDERR", "FD2-WRITE"):
        assert marker in stderr, stderr


def test_a_tool_reading_stdin_gets_end_of_file_at_once(spawn):
    server = spawn(BASIC_SERVER)
    server.initialize()
    result = server.call("prompt", timeout=5)
    assert result["content"][0]["text"] == "''"
    assert server.call("add", {"a": 1, "b": 1})["structuredContent"] == {"result": 2}


def test_non_json_line_is_a_parse_error_and_the_next_request_is_answered(spawn):
    server = spawn(BASIC_SERVER)
    server.initialize()
    server.send_bytes(b"this is not json\n")
    error = server.recv(5)
    assert error["jsonrpc"] == "2.0"
    assert error["error"]["code"] == -32700
    assert "id" not in error
    assert server.call("echo", {"text": "alive"})["content"][0]["text"] == "alive"


def test_invalid_utf8_line_is_a_parse_error_and_the_next_request_is_answered(spawn):
    server = spawn(BASIC_SERVER)
    server.initialize()
    server.send_bytes(b'{"jsonrpc":"2.0","id":9,"method":"ping","x":"\xff\xfe"}\n')
    error = server.recv(5)
    assert error["error"]["code"] == -32700
    assert server.request("ping")["result"] == {}


def test_crlf_line_endings_are_tolerated(spawn):
    server = spawn(BASIC_SERVER)
    server.send_bytes(frame(1, "initialize", INIT_PARAMS) + b"\r\n")
    assert server.recv(5)["result"]["protocolVersion"] == "2025-11-25"
    server.send_bytes(
        frame(2, "tools/call", {"name": "add", "arguments": {"a": 1, "b": 2}}) + b"\r\n"
    )
    answer = server.recv(5)
    assert answer["id"] == 2
    assert answer["result"]["structuredContent"] == {"result": 3}


def test_leading_utf8_bom_is_tolerated(spawn):
    server = spawn(BASIC_SERVER)
    server.send_bytes(b"\xef\xbb\xbf" + frame(1, "initialize", INIT_PARAMS) + b"\n")
    answer = server.recv(5)
    assert answer["id"] == 1
    assert answer["result"]["protocolVersion"] == "2025-11-25"


def test_blank_lines_are_skipped_without_an_answer(spawn):
    server = spawn(BASIC_SERVER)
    server.send_bytes(b"\n\r\n   \n" + frame(1, "ping") + b"\n")
    assert server.recv(5) == {"jsonrpc": "2.0", "id": 1, "result": {}}
    server.close_stdin()
    assert server.wait(10) == 0
    assert len(server.stdout_lines) == 1


def test_two_messages_in_one_write_are_both_answered(spawn):
    server = spawn(BASIC_SERVER)
    server.send_bytes(frame(1, "ping") + b"\n" + frame(2, "ping") + b"\n")
    assert {server.recv(5)["id"], server.recv(5)["id"]} == {1, 2}


def test_a_message_split_across_writes_is_reassembled(spawn):
    server = spawn(BASIC_SERVER)
    data = frame("split", "ping") + b"\n"
    server.send_bytes(data[:10])
    time.sleep(0.1)
    server.send_bytes(data[10:])
    assert server.recv(5) == {"jsonrpc": "2.0", "id": "split", "result": {}}


def test_nothing_is_written_to_stdout_without_a_request(spawn):
    server = spawn(BASIC_SERVER)
    server.close_stdin()
    assert server.wait(10) == 0
    assert server.stdout_lines == []


def test_closing_stdin_makes_the_server_exit_0_promptly(spawn):
    server = spawn(BASIC_SERVER)
    server.initialize()
    server.call("add", {"a": 1, "b": 1})
    started = time.monotonic()
    server.close_stdin()
    assert server.wait(10) == 0
    assert time.monotonic() - started < 3.0


def test_requests_read_before_end_of_input_are_still_answered(spawn):
    server = spawn(BASIC_SERVER)
    server.send_bytes(
        frame(1, "initialize", INIT_PARAMS)
        + b"\n"
        + frame(2, "tools/call", {"name": "slow", "arguments": {"seconds": 0.3}})
        + b"\n"
        + frame(3, "tools/call", {"name": "add", "arguments": {"a": 1, "b": 2}})
        + b"\n"
    )
    server.close_stdin()
    answers = {}
    while (message := server.recv(10)) is not None:
        answers[message["id"]] = message
    assert server.wait(10) == 0
    assert answers[2]["result"]["content"][0]["text"] == "done"
    assert answers[3]["result"]["structuredContent"] == {"result": 3}


def test_a_hanging_tool_does_not_keep_the_process_alive_after_end_of_input(spawn):
    server = spawn(HANG_SERVER)  # eof_grace=0.5
    server.send_bytes(
        frame(1, "initialize", INIT_PARAMS)
        + b"\n"
        + frame(2, "tools/call", {"name": "hang", "arguments": {"seconds": 60}})
        + b"\n"
        + frame(3, "tools/call", {"name": "add", "arguments": {"a": 1, "b": 2}})
        + b"\n"
    )
    assert server.recv(5)["id"] == 1
    time.sleep(0.2)  # let the hanging call start
    started = time.monotonic()
    server.close_stdin()
    assert server.wait(10) == 0
    assert time.monotonic() - started < 5.0
    answers = {}
    while (message := server.recv(5)) is not None:
        answers[message["id"]] = message
    assert "error" in answers[3], answers
    assert 2 not in answers or answers[2]["result"].get("isError") is True


@pytest.mark.skipif(sys.platform == "win32", reason="POSIX signal")
def test_sigterm_stops_an_idle_server_with_exit_0(spawn):
    server = spawn(BASIC_SERVER)
    server.initialize()
    started = time.monotonic()
    server.proc.send_signal(signal.SIGTERM)
    assert server.wait(10) == 0
    assert time.monotonic() - started < 3.0
    assert_stdout_is_only_protocol(server)


@pytest.mark.skipif(sys.platform == "win32", reason="POSIX signal")
def test_sigterm_during_a_tool_answers_the_call_and_exits_0(spawn):
    server = spawn(BASIC_SERVER)
    server.initialize()
    server.send_bytes(
        frame(2, "tools/call", {"name": "slow", "arguments": {"seconds": 30}}) + b"\n"
    )
    time.sleep(0.3)
    started = time.monotonic()
    server.proc.send_signal(signal.SIGTERM)
    answer = server.recv(5)
    assert answer["id"] == 2
    assert answer["result"]["isError"] is True
    assert server.wait(10) == 0
    assert time.monotonic() - started < 3.0


def test_a_whole_session_works_with_path_emptied(spawn):
    env = {"PATH": ""}
    if sys.platform == "win32":
        env["SYSTEMROOT"] = os.environ.get("SYSTEMROOT", "")
    server = spawn(BASIC_SERVER, env=env)
    assert server.initialize()["serverInfo"]["name"] == "basic"
    assert "add" in [t["name"] for t in server.request("tools/list")["result"]["tools"]]
    assert server.call("add", {"a": 20, "b": 22})["structuredContent"] == {"result": 42}
    assert server.call("fail", {"message": "m"})["isError"] is True
    server.close_stdin()
    assert server.wait(10) == 0
    assert_stdout_is_only_protocol(server)
