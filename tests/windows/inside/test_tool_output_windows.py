"""Windows: what a tool run writes to descriptors 1 and 2 is captured and attached to its result.

Run by the Windows CPython under wine (tests/windows/run.sh), in process through
``mcpline.testing.Client`` (the real Rust core). Every path of ../servers/writers.py's
``WRITERS`` writes one line; the attached text must hold each, and an error result must carry it
too. Over real stdio pipes (and that none of it reaches the protocol stdout) is checked from Linux
in linux/test_roundtrip_from_linux.py.
"""

import sys
from pathlib import Path

import pytest
from mcpline.testing import Client

# The writers and the server these tests share with the Linux side.
sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "servers"))

from windows_server import server
from writers import WRITERS, expected_line

# print() must reach descriptor 1: pytest's own capture (anything but -s) replaces sys.stdout.
pytestmark = pytest.mark.skipif(
    sys.stdout is not sys.__stdout__, reason="needs pytest -s (tests/windows/run.sh passes it)"
)


def attached_lines(result) -> list[str]:
    """The lines of the text blocks after the first (the attached output)."""
    return "\n".join(c["text"] for c in result.content[1:] if c["type"] == "text").splitlines()


@pytest.fixture(scope="module")
def client():
    with Client(server, timeout=120) as connected:
        yield connected


@pytest.fixture(scope="module")
def result_mode_call(client):
    return client.call("write_all", marker="RESULT-MODE")


@pytest.fixture(scope="module")
def failing_call(client):
    return client.call("write_all_then_fail", marker="FAILING")


def test_a_result_mode_tool_answers_its_own_text_first(result_mode_call):
    assert not result_mode_call.is_error, result_mode_call.content
    assert result_mode_call.content[0] == {"type": "text", "text": "ok"}


@pytest.mark.parametrize("writer", list(WRITERS))
def test_a_result_mode_tool_result_carries_the_line_each_path_wrote(result_mode_call, writer):
    assert expected_line(writer, "RESULT-MODE") in attached_lines(result_mode_call)


def test_a_failing_tool_answers_an_error_with_its_message_first(failing_call):
    assert failing_call.is_error
    assert failing_call.content[0] == {"type": "text", "text": "failed on purpose"}


@pytest.mark.parametrize("writer", list(WRITERS))
def test_a_failing_tool_error_result_carries_the_line_each_path_wrote(failing_call, writer):
    assert expected_line(writer, "FAILING") in attached_lines(failing_call)


def test_each_call_attaches_only_its_own_output(client):
    said = client.call("say", text="SAID-ALONE")
    assert said.content[0] == {"type": "text", "text": "SAID-ALONE"}
    # output="error" (the default) attaches nothing to a success...
    assert said.content[1:] == []
    # ...and a result-mode call attaches what it wrote, none of the calls before it.
    again = attached_lines(client.call("write_all", marker="SECOND"))
    assert "SAID-ALONE" not in again
    assert [line for line in again if "RESULT-MODE" in line or "FAILING" in line] == []
    assert expected_line("print", "SECOND") in again
