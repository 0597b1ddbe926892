"""Output written by C code (printf left in the C buffer, raw write(2)) is captured per call.

A tiny extension is built with cffi (API mode) into a temporary folder: ``c_printf(text)`` calls
``printf("%s", text)`` with no newline and no ``fflush`` (the bytes sit in the C stdout buffer
until someone flushes it) and ``c_write(fd, text)`` calls ``write(fd, text, strlen(text))``.
"""

import json
import os
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest
from conftest import SERVERS_DIR

C_SERVER = SERVERS_DIR / "capture_c_server.py"

BUILD_SCRIPT = textwrap.dedent(
    r'''
    import sys
    import cffi

    ffi = cffi.FFI()
    ffi.cdef("void c_printf(const char *text); void c_write(int fd, const char *text);")
    ffi.set_source(
        "_capture_c",
        """
        #include <stdio.h>
        #include <string.h>
        #include <unistd.h>
        void c_printf(const char *text) { printf("%s", text); }
        void c_write(int fd, const char *text) { (void)!write(fd, text, strlen(text)); }
        """,
    )
    ffi.compile(tmpdir=sys.argv[1])
    '''
)


@pytest.fixture(scope="module")
def c_dir(tmp_path_factory) -> Path:
    """A folder holding the compiled ``_capture_c`` module (built in a subprocess)."""
    folder = tmp_path_factory.mktemp("capture_c")
    built = subprocess.run(
        [sys.executable, "-c", BUILD_SCRIPT, str(folder)],
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert built.returncode == 0, built.stderr
    assert list(folder.glob("_capture_c*.so")), list(folder.iterdir())
    return folder


def c_env(c_dir: Path) -> dict[str, str]:
    return {**os.environ, "CAPTURE_C_DIR": str(c_dir)}


def assert_stdout_is_only_protocol(server) -> None:
    for line in server.stdout_lines:
        assert line.endswith(b"\n"), line
        message = json.loads(line)
        assert message["jsonrpc"] == "2.0", line


def attached(result) -> str:
    """The text blocks after the tool's own answer (the attached output)."""
    return "\n".join(c["text"] for c in result["content"][1:] if c["type"] == "text")


def test_c_printf_and_raw_writes_never_reach_the_protocol_stdout(spawn, c_dir):
    server = spawn(C_SERVER, env=c_env(c_dir))
    server.initialize()
    for marker in ("ONE", "TWO", "THREE"):
        result = server.call("c_noise_default", {"marker": marker})
        assert result["content"] == [{"type": "text", "text": "ok"}], result
    # the result-mode tool too: its output may only travel inside a JSON string
    assert server.call("c_noise", {"marker": "FOUR"})["content"][0]["text"] == "ok"
    assert server.call("quiet")["content"] == [{"type": "text", "text": "quiet"}]
    server.close_stdin()
    assert server.wait(10) == 0
    assert_stdout_is_only_protocol(server)
    assert len(server.stdout_lines) == 6  # initialize + five calls, nothing else
    stdout = b"".join(server.stdout_lines)
    for marker in (b"ONE-", b"TWO-", b"THREE-"):
        assert marker not in stdout, stdout
    stderr = server.stderr_text()
    for marker in ("ONE-printf-unflushed", "TWO-write1", "THREE-write2"):
        assert marker in stderr, stderr


def test_unflushed_printf_and_fd_writes_from_c_are_attached_to_the_result(spawn, c_dir):
    server = spawn(C_SERVER, env=c_env(c_dir))
    server.initialize()
    result = server.call("c_noise", {"marker": "CEXT"})
    assert result.get("isError") is not True, result
    assert result["content"][0] == {"type": "text", "text": "ok"}
    text = attached(result)
    for marker in ("CEXT-printf-unflushed", "CEXT-write1", "CEXT-write2"):
        assert marker in text, result["content"]


def test_unflushed_c_printf_is_attributed_to_the_call_that_printed_it(spawn, c_dir):
    server = spawn(C_SERVER, env=c_env(c_dir))
    server.initialize()
    first = server.call("c_noise", {"marker": "FIRST"})
    second = server.call("quiet")
    assert "FIRST-printf-unflushed" in attached(first), first["content"]
    # nothing was left in the C buffer to leak into the next call's capture
    assert second["content"] == [{"type": "text", "text": "quiet"}], second["content"]


CONTEXT_SCRIPT = textwrap.dedent(
    """
    import json, sys
    sys.path.insert(0, sys.argv[1])
    import mcpline
    from _capture_c import lib

    lib.c_printf(b"PRE-printf-unflushed|")  # in the C buffer when the capture begins
    with mcpline.capture() as out:
        lib.c_printf(b"CM-printf-unflushed")
        lib.c_write(1, b"CM-write1\\n")
        lib.c_write(2, b"CM-write2\\n")
    lib.c_write(1, b"AFTER-write1\\n")
    with open(sys.argv[2], "w") as report:
        json.dump({"text": out.text, "total_bytes": out.total_bytes}, report)
    """
)


def test_capture_context_manager_captures_c_output_into_text(c_dir, tmp_path):
    report = tmp_path / "report.json"
    ran = subprocess.run(
        [sys.executable, "-c", CONTEXT_SCRIPT, str(c_dir), str(report)],
        capture_output=True,
        timeout=60,
    )
    assert ran.returncode == 0, ran.stderr
    captured = json.loads(report.read_text())
    text = captured["text"]
    for marker in ("CM-printf-unflushed", "CM-write1\n", "CM-write2\n"):
        assert marker in text, text
    expected_bytes = len(b"CM-printf-unflushed" + b"CM-write1\n" + b"CM-write2\n")
    assert captured["total_bytes"] == expected_bytes, captured
    assert len(text.encode()) == expected_bytes, text
    # the C buffer was flushed to the real stdout before redirecting, nothing captured leaked
    # out, and later C writes reach the real stdout again
    assert "PRE-printf" not in text, text
    assert b"CM-" not in ran.stdout + ran.stderr, (ran.stdout, ran.stderr)
    assert ran.stdout == b"PRE-printf-unflushed|AFTER-write1\n", ran.stdout
