"""The server's own log lines go to the real stderr even while a tool's output is being
captured: a line logged by the reader thread during a call is neither in that call's captured
output nor labelled with its name."""

from conftest import SERVERS_DIR, wait_for_event

LIFECYCLE_SERVER = SERVERS_DIR / "lifecycle_server.py"
RESPONSE_LOG = "[mcpline] ignored a response from the client"


def test_a_log_line_written_during_a_call_is_not_captured_with_it(spawn, tmp_path):
    events = tmp_path / "events"
    server = spawn(LIFECYCLE_SERVER)
    server.initialize()
    server.send(
        {
            "jsonrpc": "2.0",
            "id": 7,
            "method": "tools/call",
            "params": {"name": "sleep", "arguments": {"seconds": 0.5, "path": str(events)}},
        }
    )
    wait_for_event(events, "started")
    server.send({"jsonrpc": "2.0", "id": 4242, "result": {}})  # response-shaped: logged
    response = server.recv()
    assert response["id"] == 7 and response["result"]["content"] == [
        {"type": "text", "text": "slept"}
    ]
    server.close_stdin()
    assert server.wait(10) == 0
    lines = server.stderr_text().splitlines()
    assert any(line.startswith(RESPONSE_LOG) for line in lines), lines
    assert not any(line.startswith("[sleep #7]") for line in lines), lines
