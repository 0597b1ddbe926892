"""A tool that raises, exits or closes its descriptors cannot leave the server mute or leaky.

After such a call the next call's output is still captured and attached, the server's own
stderr logging reaches the real stderr (fd 2 was restored), and stdout carries only protocol.
"""

import json

from conftest import SERVERS_DIR

RAISE_SERVER = SERVERS_DIR / "capture_raise_server.py"
RESPONSE_LOG = "[mcpline] ignored a response from the client"


def assert_stdout_is_only_protocol(server) -> None:
    for line in server.stdout_lines:
        assert line.endswith(b"\n"), line
        message = json.loads(line)
        assert message["jsonrpc"] == "2.0", line


def attached(result) -> str:
    return "\n".join(c["text"] for c in result["content"][1:] if c["type"] == "text")


def call(server, name: str, **arguments):
    response = server.request("tools/call", {"name": name, "arguments": arguments})
    assert "result" in response, response
    return response["id"], response["result"]


def assert_next_call_is_captured(server, marker: str) -> int:
    request_id, result = call(server, "chatty", marker=marker)
    assert result.get("isError") is not True, result
    assert result["content"][0] == {"type": "text", "text": "ok"}
    lines = attached(result).splitlines()
    assert f"{marker}-print" in lines, result["content"]
    assert f"{marker}-fd2" in lines, result["content"]
    return request_id


def assert_server_stderr_works(server, marker: str) -> None:
    """Own log line, an uncaptured tool's writes and a labelled copy all reach the real stderr."""
    server.send({"jsonrpc": "2.0", "id": 4242, "result": {}})  # response-shaped: logged
    assert call(server, "live", marker=marker)[1]["content"][0]["text"] == "ok"
    labelled_id = assert_next_call_is_captured(server, f"{marker}-LABELLED")
    assert server.request("ping")["result"] == {}
    server.close_stdin()
    assert server.wait(10) == 0
    lines = server.stderr_text().splitlines()
    assert any(line.startswith(RESPONSE_LOG) for line in lines), lines
    assert f"{marker}-live-stderr" in lines, lines
    assert f"{marker}-live-fd2" in lines, lines
    assert f"[chatty #{labelled_id}] {marker}-LABELLED-print" in lines, lines


def test_a_raising_tool_gets_its_output_attached_and_the_next_call_is_captured(spawn):
    server = spawn(RAISE_SERVER)
    server.initialize()
    _, result = call(server, "boom")
    assert result["isError"] is True
    assert result["content"][0] == {"type": "text", "text": "RuntimeError: boom"}
    text = attached(result)
    for marker in ("BOOM-PRINT", "BOOM-FD2", "Traceback", "RuntimeError: boom"):
        assert marker in text, result["content"]
    assert_next_call_is_captured(server, "AFTER-BOOM")
    assert_next_call_is_captured(server, "AFTER-BOOM-2")


def test_a_tool_calling_sys_exit_does_not_stop_the_server_or_its_capture(spawn):
    server = spawn(RAISE_SERVER)
    server.initialize()
    _, result = call(server, "bail")
    assert result["isError"] is True
    assert "sys.exit(3)" in result["content"][0]["text"], result
    assert "BAIL-PRINT" in attached(result).splitlines(), result["content"]
    assert server.proc.poll() is None
    assert_next_call_is_captured(server, "AFTER-BAIL")


def test_after_raise_and_exit_the_server_own_stderr_logging_still_works(spawn):
    server = spawn(RAISE_SERVER)
    server.initialize()
    assert call(server, "boom")[1]["isError"] is True
    assert call(server, "bail")[1]["isError"] is True
    assert_server_stderr_works(server, "AFTER-RAISES")


def test_after_raise_and_exit_stdout_carries_only_protocol(spawn):
    server = spawn(RAISE_SERVER)
    server.initialize()
    call(server, "boom")
    call(server, "bail")
    assert_next_call_is_captured(server, "PURE")
    server.close_stdin()
    assert server.wait(10) == 0
    assert_stdout_is_only_protocol(server)
    assert len(server.stdout_lines) == 4
    for name in (b"BOOM-PRINT", b"BAIL-PRINT", b"PURE-print"):
        for line in server.stdout_lines:
            if name in line:  # only inside an attached text block of a result
                message = json.loads(line)
                assert any(name.decode() in c["text"] for c in message["result"]["content"])


def test_a_tool_closing_fds_1_and_2_before_raising_does_not_leave_the_server_mute(spawn):
    server = spawn(RAISE_SERVER)
    server.initialize()
    _, result = call(server, "close_and_raise")
    assert result["isError"] is True
    assert result["content"][0]["text"] == "OSError: closed fds 1 and 2", result
    assert_next_call_is_captured(server, "AFTER-CLOSE")
    assert_server_stderr_works(server, "AFTER-CLOSE-LOG")
    assert_stdout_is_only_protocol(server)
