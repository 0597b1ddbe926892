"""A tool that kills the process with a fatal signal (a fault in C code, an abort) does not take
what it had printed with it: before the process dies, the call's captured output is copied to
the real stderr, and what comes after (``faulthandler``'s traceback) reaches the real stderr
too, not the capture file that dies with the process."""

import signal
import sys

import pytest
from conftest import SERVERS_DIR, call_frame

pytestmark = pytest.mark.skipif(sys.platform == "win32", reason="POSIX signals")

CRASH = SERVERS_DIR / "crash_server.py"
LABEL = "[call still running at exit] "


def crash(spawn, how, *server_args, child=False, lines=0):
    server = spawn(CRASH, *server_args)
    server.initialize()
    assert server.call("add", {"a": 1, "b": 2})["structuredContent"] == {"result": 3}
    # Queued together, the two calls run back to back in the same capture file.
    arguments = {"how": how, "child": child, "lines": lines}
    server.send_bytes(call_frame(101, "chatter", {}) + call_frame("boom", "crash", arguments))
    code = server.wait(15)
    return code, server.stderr_text(), server


@pytest.mark.parametrize(
    ("how", "signum"), [("segv", signal.SIGSEGV), ("abort", signal.SIGABRT)], ids=["segv", "abort"]
)
def test_what_a_call_printed_reaches_stderr_when_it_kills_the_process(spawn, how, signum):
    code, log, server = crash(spawn, how)
    assert code == -signum, (code, log)
    assert f"fatal signal {int(signum)} while a tool call ran" in log, log
    assert f"{LABEL}printed before the crash\n" in log, log
    assert f"{LABEL}written to fd 2 before the crash\n" in log, log
    # Only the running call's output: an earlier call's, answered already, is not repeated.
    assert f"{LABEL}an earlier call printed this" not in log, log
    # Nothing but protocol frames on stdout, and no answer for the call that died.
    assert all(b'"boom"' not in line for line in server.stdout_lines)


def test_what_a_call_printed_after_starting_a_child_reaches_stderr_when_it_kills_the_process(
    spawn,
):
    # Once a call starts a process its output flows through a pipe: what the pipe still holds
    # when the process dies is copied too, after what reached the capture file.
    code, log, _ = crash(spawn, "segv", child=True)
    assert code == -signal.SIGSEGV, (code, log)
    lines = [line for line in log.splitlines() if line.startswith(LABEL)]
    assert lines == [
        f"{LABEL}a child printed this",
        f"{LABEL}printed before the crash",
        f"{LABEL}written to fd 2 before the crash",
    ], log


def test_a_large_write_just_before_the_crash_reaches_stderr_whole(spawn):
    # 40,000 lines in one write (about 800 KB), the process aborting right after: what fds 1
    # and 2 write through (on Linux a pipe that holds 1 MiB) may still hold all of it.
    count = 40_000
    code, log, _ = crash(spawn, "abort", lines=count)
    assert code == -signal.SIGABRT, (code, log)
    numbered = [line for line in log.splitlines() if line.startswith(f"{LABEL}numbered line ")]
    assert numbered == [f"{LABEL}numbered line {n}" for n in range(count)], (
        len(numbered),
        numbered[-3:],
    )


def test_faulthandlers_traceback_reaches_the_real_stderr(spawn):
    code, log, _ = crash(spawn, "segv", "faulthandler")
    assert code == -signal.SIGSEGV, (code, log)
    assert f"{LABEL}printed before the crash\n" in log, log
    assert "Fatal Python error: Segmentation fault" in log, log
    assert "in crash" in log, log  # the traceback names the tool's frame
    # The call's output comes first, then the traceback.
    assert log.index("printed before the crash") < log.index("Fatal Python error"), log
