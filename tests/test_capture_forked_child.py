"""A child process forked by a tool never comes back into the server loop: whatever way it
leaves the tool, it exits at once with a line saying so, and the parent's call is answered once.
"""

import json
import sys

import pytest
from conftest import SERVERS_DIR

pytestmark = pytest.mark.skipif(sys.platform == "win32", reason="os.fork is POSIX only")

FORK_SERVER = SERVERS_DIR / "fork_server.py"


def responses_to(server, request_id) -> list[dict]:
    return [m for m in map(json.loads, server.stdout_lines) if m.get("id") == request_id]


@pytest.mark.parametrize("tool", ["child_raises", "child_exits", "child_returns_uncaptured"])
def test_a_forked_child_leaving_the_tool_exits_instead_of_serving(spawn, tool):
    server = spawn(FORK_SERVER)
    server.initialize()
    response = server.request("tools/call", {"name": tool, "arguments": {}})
    result = response["result"]
    assert result.get("isError") is not True, result
    assert result["content"][0]["text"] == "parent waited; child exit status 1", result
    # The server goes on serving, on its own.
    assert server.call("ping")["content"][0]["text"] == "pong"
    server.close_stdin()
    # No child holds the protocol pipes: the server's end of input ends the process tree.
    assert server.wait(10) == 0
    assert len(responses_to(server, response["id"])) == 1, server.stdout_lines
    said = f"a child process forked by tool {tool!r}".replace("'", '"')
    attached = "\n".join(c["text"] for c in result["content"][1:])
    assert said in attached or said in server.stderr_text(), (attached, server.stderr_text())


def test_the_child_line_is_attached_to_the_parents_result_when_captured(spawn):
    server = spawn(FORK_SERVER)
    server.initialize()
    result = server.call("child_raises")
    attached = "\n".join(c["text"] for c in result["content"][1:])
    assert 'a child process forked by tool "child_raises"' in attached, result
    assert "instead of serving" in attached, result
