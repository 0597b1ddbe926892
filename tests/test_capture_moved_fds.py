"""A tool that moves or closes fds 1 and 2 cannot take the next call's output with it, and writes
through ``/dev/stdout`` or ``/dev/stderr`` leave the capture intact (POSIX)."""

import json
import sys
import time

import pytest
from conftest import SERVERS_DIR, call_frame

pytestmark = pytest.mark.skipif(sys.platform == "win32", reason="POSIX descriptors and sh")

SERVER = SERVERS_DIR / "moved_fds_server.py"


def answers(server, count: int) -> dict:
    frames = [server.recv() for _ in range(count)]
    return {frame["id"]: frame for frame in frames}


def attached(result: dict) -> str:
    return "\n".join(c["text"] for c in result["content"][1:])


@pytest.mark.parametrize("mover", ["log_to", "close_std"])
def test_the_call_queued_behind_a_tool_that_moved_fds_1_and_2_keeps_its_output(
    spawn, tmp_path, mover
):
    log = tmp_path / "tool.log"
    server = spawn(SERVER)
    server.initialize()
    args = {"path": str(log)} if mover == "log_to" else {}
    # Sent together, so the second call is queued when the first one ends (the capture cell
    # would leave fds 1 and 2 where they are for it).
    server.send_bytes(
        call_frame("mover", mover, args) + call_frame("speaker", "speak", {"word": "mine"})
    )
    got = answers(server, 2)
    assert got["mover"]["result"].get("isError") is not True, got["mover"]
    text = attached(got["speaker"]["result"])
    assert "python says mine" in text, got["speaker"]
    assert "child says mine" in text, got["speaker"]
    assert not log.exists() or "mine" not in log.read_text(), log.read_text()
    # And the server still serves, with its stderr intact.
    assert server.call("speak", {"word": "later"})["content"][0]["text"] == "later"
    server.close_stdin()
    assert server.wait(10) == 0
    assert '[speak #"speaker"] python says mine' in server.stderr_text()


def test_a_child_writes_to_the_log_a_tool_pointed_fd_1_at_and_its_stderr_is_captured(
    spawn, tmp_path
):
    log = tmp_path / "tool.log"
    server = spawn(SERVER)
    server.initialize()
    text = attached(server.call("child_logs_to", {"path": str(log)}))
    assert "child to the capture" in text, text
    assert "child to the log" not in text, text
    assert log.read_text() == "child to the log\n"


def test_a_child_of_a_tool_that_closed_fd_1_has_its_stderr_captured(spawn):
    server = spawn(SERVER)
    server.initialize()
    text = attached(server.call("child_without_stdout", {}))
    assert "child to stderr" in text, text
    # fd 1 is restored for the next call.
    text = attached(server.call("speak", {"word": "next"}))
    assert "python says next" in text, text
    assert "child says next" in text, text


def test_a_child_started_after_a_tool_put_fd_1_back_keeps_its_late_output_out_of_later_calls(
    spawn,
):
    server = spawn(SERVER)
    server.initialize()
    # Queued right behind it, so the next call would take the file over if it could.
    burst = [call_frame("start", "child_after_fd_1_back", {"tag": "A"})]
    burst += [call_frame(f"s{n}", "speak", {"word": f"w{n}"}) for n in range(3)]
    server.send_bytes(b"".join(burst))
    results = [server.recv(10) for _ in burst]
    deadline = time.monotonic() + 0.8
    while time.monotonic() < deadline:
        results.append(server.call("speak", {"word": "later"}))
        time.sleep(0.05)
    server.close_stdin()
    assert server.wait(10) == 0
    for result in results:
        assert "late from" not in json.dumps(result), result
    assert '[child_after_fd_1_back #"start", late] late from A\n' in server.stderr_text()


def last_attached_lines(spawn, tool: str, arguments: dict[str, str]) -> list[str]:
    """The last four non-blank lines attached to one call of ``tool`` on a fresh server,
    checked to hold no NUL byte (what a write over a hole would leave)."""
    server = spawn(SERVER)
    server.initialize()
    text = attached(server.call(tool, arguments))
    assert "\x00" not in text, json.dumps(text)
    return [line for line in text.splitlines() if line.strip()][-4:]


@pytest.mark.parametrize("redirect", [">>", ">"])
def test_writing_through_dev_stderr_loses_nothing(spawn, redirect):
    # `>` opens the capture anew with truncation: a shell script's `echo x > /dev/stderr`.
    lines = last_attached_lines(spawn, "dev_stderr", {"redirect": redirect})
    assert lines == ["python before", "shell one", "shell two", "python after"]


@pytest.mark.parametrize("mode", ["a", "w"])
def test_python_writing_through_its_own_open_of_dev_stderr_loses_nothing(spawn, mode):
    lines = last_attached_lines(spawn, "python_dev_stderr", {"mode": mode})
    assert lines == ["python before", "direct one", "direct two", "python after"]


@pytest.mark.parametrize("how", ["system", "fopen"])
def test_c_code_opening_dev_stderr_with_truncation_loses_nothing(spawn, how):
    # Nothing tells the interpreter: C's own system() and fopen() bypass subprocess and open().
    # On Linux such an open reaches the pipe outlet; on macOS the system makes it a dup of fd 2.
    lines = last_attached_lines(spawn, "c_dev_stderr", {"how": how})
    assert lines == ["python before", "c one", "c two", "python after"]


# Queued together, the second call's capture goes on in the file the first one filled, and
# what the first call printed stays its own.
@pytest.mark.parametrize("lines_before", [200, 1])
def test_truncating_through_dev_stderr_behind_a_chatty_call_loses_nothing(spawn, lines_before):
    server = spawn(SERVER)
    server.initialize()
    server.send_bytes(
        call_frame(101, "chatter", {"lines": lines_before})
        + call_frame(102, "dev_stderr", {"redirect": ">"})
    )
    got = answers(server, 2)
    assert f"chatter line {lines_before - 1}" in attached(got[101]["result"])
    text = attached(got[102]["result"])
    assert "\x00" not in text, json.dumps(text)
    lines = [line for line in text.splitlines() if line.strip()]
    assert lines[-4:] == ["python before", "shell one", "shell two", "python after"], text
    assert "chatter line" not in text, json.dumps(text)
    assert server.call("chatter", {"lines": 1})["content"][0]["text"] == "done"
