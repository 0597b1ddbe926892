"""While the server waits for the next request, fds 1 and 2 point at the real stderr again
within a few milliseconds of the last call (until then they stay on its capture file, in case
another request follows at once, and what lands there goes to the log labelled as background
output): what a background thread writes between calls reaches the log then, not when the next
call comes."""

import time

from conftest import SERVERS_DIR

SERVER = SERVERS_DIR / "idle_output_server.py"


def test_output_written_while_the_server_waits_reaches_stderr_without_another_call(spawn):
    server = spawn(SERVER)
    server.initialize()
    result = server.call("quiet_then_later", {"delay": 0.2})
    assert result["content"][0]["text"] == "ok"
    deadline = time.monotonic() + 5
    while "WRITTEN-WHILE-IDLE" not in server.stderr_text() and time.monotonic() < deadline:
        time.sleep(0.05)
    # Written straight to the real stderr, not reported later as background output.
    assert "WRITTEN-WHILE-IDLE" in server.stderr_text().splitlines()
    server.close_stdin()
    assert server.wait(10) == 0
