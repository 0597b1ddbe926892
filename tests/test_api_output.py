"""``output=``: what a tool run prints is captured and attached to results as documented."""

import os
import sys

import pytest
from mcpline import McplineError, Server, ToolError
from mcpline.testing import Client


# pytest replaces sys.stdout/sys.stderr with objects that never reach fds 1 and 2 (and puts
# them back before each test phase); the interpreter's original streams do reach them, and a
# server captures at the descriptor level. Real print() is covered through subprocesses in
# test_e2e_stdio.py.
def out(text: str) -> None:
    print(text, file=sys.__stdout__)


def err(text: str) -> None:
    print(text, file=sys.__stderr__)


def chatty(marker: str) -> None:
    out(f"{marker}-print")
    os.write(1, f"{marker}-fd1\n".encode())
    err(f"{marker}-stderr")


def build(**server_options) -> Server:
    server = Server("output", **server_options)

    @server.tool
    def quiet_ok() -> str:
        return "ok"

    @server.tool
    def noisy_ok() -> str:
        chatty("NOISY-OK")
        return "ok"

    @server.tool
    def noisy_fail() -> str:
        chatty("NOISY-FAIL")
        raise ToolError("failed")

    @server.tool(output="result")
    def noisy_ok_result() -> str:
        chatty("RESULT-MODE")
        return "ok"

    @server.tool(output="off")
    def noisy_fail_off() -> str:
        chatty("OFF-MODE")
        raise ToolError("failed")

    @server.tool(output="result")
    def flood() -> str:
        out("FIRST-LINE")
        for i in range(5000):
            out(f"filler line {i:05d} " + "x" * 40)
        out("LAST-LINE")
        return "ok"

    return server


def texts(result) -> list[str]:
    return [c["text"] for c in result.content if c["type"] == "text"]


def test_default_mode_attaches_nothing_to_a_successful_result():
    with Client(build()) as client:
        result = client.call("noisy_ok")
    assert result.content == [{"type": "text", "text": "ok"}]


def test_default_mode_attaches_the_printed_output_to_an_error_result():
    with Client(build()) as client:
        result = client.call("noisy_fail")
    assert result.is_error
    assert result.content[0] == {"type": "text", "text": "failed"}
    attached = "\n".join(texts(result)[1:])
    for marker in ("NOISY-FAIL-print", "NOISY-FAIL-fd1", "NOISY-FAIL-stderr"):
        assert marker in attached, result.content


def test_result_mode_attaches_the_printed_output_to_a_successful_result():
    with Client(build()) as client:
        result = client.call("noisy_ok_result")
    assert not result.is_error
    assert result.content[0] == {"type": "text", "text": "ok"}
    attached = "\n".join(texts(result)[1:])
    for marker in ("RESULT-MODE-print", "RESULT-MODE-fd1", "RESULT-MODE-stderr"):
        assert marker in attached, result.content


def test_server_default_output_result_applies_to_every_tool():
    with Client(build(output="result")) as client:
        result = client.call("noisy_ok")
    assert result.content[0] == {"type": "text", "text": "ok"}
    assert "NOISY-OK-print" in "\n".join(texts(result)[1:])


def test_a_quiet_tool_gets_no_attachment_even_in_result_mode():
    with Client(build(output="result")) as client:
        result = client.call("quiet_ok")
    assert result.content == [{"type": "text", "text": "ok"}]


def test_off_mode_attaches_nothing_even_to_an_error_result():
    with Client(build()) as client:
        result = client.call("noisy_fail_off")
    assert result.is_error
    assert result.content == [{"type": "text", "text": "failed"}]


def test_attached_output_is_bounded_keeping_the_tail():
    with Client(build(attach_limit=1024)) as client:
        result = client.call("flood")
    attached = "\n".join(texts(result)[1:])
    assert "LAST-LINE" in attached
    assert "FIRST-LINE" not in attached
    assert len(attached.encode()) < 4096


def test_an_unknown_server_output_mode_is_a_setup_error():
    with pytest.raises(McplineError, match="bogus"):
        Server("x", output="bogus")  # type: ignore[arg-type]


def test_an_unknown_tool_output_mode_is_a_setup_error():
    def tool() -> str:
        return "x"

    server = Server("x")
    with pytest.raises(McplineError, match="bogus"):
        server.tool(output="bogus")(tool)  # type: ignore[arg-type]
    assert server.tool_names == []
