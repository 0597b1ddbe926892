"""What a tool prints is attached in the order it was written, and nothing Python buffers on
stdout ever reaches the protocol stream: not before ``run()``, not in ``output="off"``, not at exit.

The servers run as a host starts them (``spawn``): stdout a pipe and no ``PYTHONUNBUFFERED``,
so ``sys.stdout`` is block-buffered unless mcpline changes that.
"""

import json
import os
import sys

import pytest
from conftest import SERVERS_DIR, call_frame

ORDERING_SERVER = SERVERS_DIR / "ordering_server.py"


def host_env(**extra: str) -> dict[str, str]:
    return {**os.environ, **extra}


def assert_stdout_is_only_protocol(server) -> None:
    for line in server.stdout_lines:
        message = json.loads(line)
        assert message.get("jsonrpc") == "2.0", line


@pytest.mark.skipif(sys.platform == "win32", reason="the child is sh")
def test_prints_and_child_output_are_attached_in_the_order_written(spawn):
    server = spawn(ORDERING_SERVER, env=host_env())
    server.initialize()
    result = server.call("steps")
    assert result["isError"] is True, result
    attached = "\n".join(c["text"] for c in result["content"][1:])
    positions = [attached.find(s) for s in ("step 1", "step 2", "step 3", "step 4 failed")]
    assert -1 not in positions, attached
    assert positions == sorted(positions), attached


@pytest.mark.parametrize("flags", [(), ("-u",)], ids=["buffered", "PYTHONUNBUFFERED"])
def test_a_printed_line_arrives_whole_even_where_python_writes_through(spawn, flags):
    # Many host configurations set PYTHONUNBUFFERED (here its flag, -u): a print is then one
    # write per piece, and a descriptor write could land between the pieces of a line.
    server = spawn(*flags, ORDERING_SERVER, env=host_env())
    server.initialize()
    result = server.call("pieces")
    assert not result.get("isError"), result
    assert result["content"][0]["text"] == "True False", "line-buffered, not write-through"
    attached = "\n".join(c["text"] for c in result["content"][1:])
    for fd in (1, 2):
        assert f"line on {fd} in pieces\n" in attached, attached
        assert f"[fd {fd} between pieces]\n" in attached, attached


def test_a_print_before_run_goes_to_stderr_not_the_protocol(spawn):
    server = spawn(ORDERING_SERVER, env=host_env(PRINT_BEFORE_RUN="1"))
    server.initialize()
    server.close_stdin()
    assert server.wait(10) == 0
    assert_stdout_is_only_protocol(server)
    assert "printed at import, before run()" in server.stderr_text()


def test_what_an_uncaptured_tool_printed_never_reaches_the_protocol_at_exit(spawn):
    server = spawn(ORDERING_SERVER, env=host_env())
    server.initialize()
    assert server.call("uncaptured")["content"][0]["text"] == "done"
    server.close_stdin()
    assert server.wait(10) == 0
    assert_stdout_is_only_protocol(server)
    assert "printed by a tool with output off" in server.stderr_text()


def test_a_stdout_a_tool_installed_itself_is_flushed_into_that_call(spawn):
    # Each call replaces sys.stdout with a new block-buffered stream and leaves its print in it:
    # the call's end flushes whichever stream sys.stdout holds then, so every call gets its own
    # line (not the next one, when the dropped stream would flush as it is freed).
    server = spawn(ORDERING_SERVER, env=host_env())
    server.initialize()
    server.send_bytes(
        b"".join(call_frame(word, "own_stdout", {"word": word}) for word in ("one", "two", "three"))
    )
    frames = {frame["id"]: frame for frame in (server.recv() for _ in range(3))}
    for word in ("one", "two", "three"):
        attached = "\n".join(c["text"] for c in frames[word]["result"]["content"][1:])
        said = [line for line in attached.splitlines() if "own stdout says" in line]
        assert said == [f"own stdout says {word}"], frames[word]
    assert_stdout_is_only_protocol(server)
