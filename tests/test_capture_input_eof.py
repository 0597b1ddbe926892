"""A tool that reads stdin gets end-of-file at once and never consumes protocol bytes."""

import json
import threading

import pytest
from conftest import SERVERS_DIR

INPUT_SERVER = SERVERS_DIR / "capture_input_server.py"


def tool_call(request_id: int, name: str, arguments: dict) -> bytes:
    frame = {
        "jsonrpc": "2.0",
        "id": request_id,
        "method": "tools/call",
        "params": {"name": name, "arguments": arguments},
    }
    return json.dumps(frame).encode() + b"\n"


def echoes(first_id: int, count: int) -> bytes:
    return b"".join(
        tool_call(i, "echo", {"text": f"echo {i}"}) for i in range(first_id, first_id + count)
    )


def collect(server, ids: set, timeout: float) -> dict:
    answers = {}
    while not ids <= answers.keys():
        message = server.recv(timeout)
        assert message is not None, (
            f"stdout closed; unanswered: {sorted(ids - answers.keys())[:10]}"
        )
        answers[message.get("id")] = message
    return answers


def assert_echoes_answered(answers: dict, first_id: int, count: int) -> None:
    for i in range(first_id, first_id + count):
        result = answers[i]["result"]
        assert result["content"] == [{"type": "text", "text": f"echo {i}"}], answers[i]


def test_input_raises_EOFError_and_the_requests_after_it_are_all_answered(spawn):
    server = spawn(INPUT_SERVER)
    server.initialize()
    server.send_bytes(
        tool_call(10, "ask", {})
        + echoes(11, 20)
        + json.dumps({"jsonrpc": "2.0", "id": 31, "method": "ping"}).encode()
        + b"\n"
    )
    answers = collect(server, {10, 31, *range(11, 31)}, timeout=10)
    asked = answers[10]["result"]
    assert asked["isError"] is True, asked
    assert "EOFError" in asked["content"][0]["text"], asked
    assert_echoes_answered(answers, 11, 20)
    assert answers[31]["result"] == {}


# The reader thread stops reading stdin once 1,024 calls are queued, so with a few thousand
# calls behind a sleeping tool, unread protocol bytes are sitting in the stdin pipe when the
# tool reads. If the tool could reach them, requests would go missing.
BACKLOG = 3_000


@pytest.mark.parametrize(
    ("tool", "expect"),
    [
        ("ask_later", "EOFError"),
        ("read_fd0", "b''"),
        ("child_cat", "b''"),
    ],
)
def test_a_tool_reading_stdin_behind_a_backlog_gets_eof_and_steals_no_request(spawn, tool, expect):
    server = spawn(INPUT_SERVER)
    server.initialize()
    server.send_bytes(tool_call(10, tool, {"seconds": 1.0}))
    writer = threading.Thread(target=server.send_bytes, args=(echoes(11, BACKLOG),))
    writer.start()
    answers = collect(server, {10, *range(11, 11 + BACKLOG)}, timeout=30)
    writer.join(30)
    result = answers[10]["result"]
    assert expect in result["content"][0]["text"], result
    assert_echoes_answered(answers, 11, BACKLOG)
    server.close_stdin()
    assert server.wait(10) == 0
