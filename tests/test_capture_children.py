"""What child processes of a tool print is captured: never on stdout, attached or labelled."""

import json

import pytest
from conftest import SERVERS_DIR

CHILDREN_SERVER = SERVERS_DIR / "capture_children_server.py"
CHILD_LINES = ("child-out", "child-err", "sys-out")


def assert_stdout_is_only_protocol(server) -> None:
    for line in server.stdout_lines:
        assert line.endswith(b"\n"), line
        message = json.loads(line)
        assert message["jsonrpc"] == "2.0", line


def call(server, name: str):
    response = server.request("tools/call", {"name": name, "arguments": {}})
    assert "result" in response, response
    return response["id"], response["result"]


def test_child_process_output_never_reaches_the_protocol_stdout(spawn):
    server = spawn(CHILDREN_SERVER)
    server.initialize()
    assert call(server, "children_default")[1]["content"][0]["text"] == "ok"
    assert call(server, "children_result")[1]["content"][0]["text"] == "ok"
    server.close_stdin()
    assert server.wait(10) == 0
    assert_stdout_is_only_protocol(server)
    assert len(server.stdout_lines) == 3
    default_answer = server.stdout_lines[1]
    for line in CHILD_LINES:
        assert line.encode() not in default_answer, default_answer


def test_output_result_attaches_what_the_children_printed(spawn):
    server = spawn(CHILDREN_SERVER)
    server.initialize()
    _, result = call(server, "children_result")
    assert result.get("isError") is not True, result
    assert result["content"][0] == {"type": "text", "text": "ok"}
    attached = "\n".join(c["text"] for c in result["content"][1:])
    attached_lines = attached.splitlines()
    for line in CHILD_LINES:
        assert line in attached_lines, result["content"]


def test_default_mode_attaches_nothing_and_labels_child_output_on_stderr(spawn):
    server = spawn(CHILDREN_SERVER)
    server.initialize()
    request_id, result = call(server, "children_default")
    assert result["content"] == [{"type": "text", "text": "ok"}], result
    assert "isError" not in result or result["isError"] is False, result
    server.close_stdin()
    assert server.wait(10) == 0
    stderr_lines = server.stderr_text().splitlines()
    for line in CHILD_LINES:
        assert f"[children_default #{request_id}] {line}" in stderr_lines, stderr_lines


# A fresh server each time: the first call that starts a process also starts the thread that
# empties the pipe its output flows through.
@pytest.mark.parametrize("run", range(6))
def test_a_childs_output_larger_than_a_pipe_holds_reaches_the_log_whole(spawn, run):
    lines = 20_000  # 360 KB
    server = spawn(CHILDREN_SERVER)
    server.initialize()
    response = server.request("tools/call", {"name": "child_floods", "arguments": {"lines": lines}})
    assert response["result"]["content"][0]["text"] == "ok", response
    server.close_stdin()
    assert server.wait(10) == 0
    label = f"[child_floods #{response['id']}] "
    copied = [
        line[len(label) :] for line in server.stderr_text().splitlines() if line.startswith(label)
    ]
    assert copied == [f"child line {n:06d}" for n in range(lines)] + ["parent after"], copied[-3:]
