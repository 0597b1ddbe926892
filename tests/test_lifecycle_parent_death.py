"""The server exits when the process that started it dies, even though its stdin stays open.

DESIGN §2 Concurrency: "The server also exits when its parent dies." An intermediate process
starts the server and is then SIGKILLed; the server's stdin is a pipe whose write end this test
keeps open the whole time, so end of input cannot be what ends it.
"""

import json
import os
import select
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest
from conftest import SERVERS_DIR

pytestmark = pytest.mark.skipif(sys.platform == "win32", reason="POSIX process model")

LIFECYCLE = SERVERS_DIR / "lifecycle_server.py"
EXIT_WITHIN = 8.0
SETTLE = 1.0

# argv: stdin fd, stdout fd, stderr fd, server argv...  Starts the server on those descriptors,
# keeps its own copies open, prints the server's pid and waits to be killed.
INTERMEDIATE = """
import subprocess, sys, time
stdin_fd, stdout_fd, stderr_fd = map(int, sys.argv[1:4])
child = subprocess.Popen(sys.argv[4:], stdin=stdin_fd, stdout=stdout_fd, stderr=stderr_fd)
print(child.pid, flush=True)
time.sleep(600)
"""


def is_running(pid: int) -> bool:
    """Whether ``pid`` is a live process (a zombie nobody reaped counts as exited)."""
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:
        return True
    try:
        stat = Path(f"/proc/{pid}/stat").read_text()
    except OSError:
        return True
    return stat.rpartition(")")[2].split()[0] != "Z"


def read_line(fd: int, timeout: float) -> bytes:
    data = b""
    deadline = time.monotonic() + timeout
    while not data.endswith(b"\n"):
        remaining = deadline - time.monotonic()
        assert remaining > 0, f"no complete line within {timeout} s (got {data!r})"
        ready, _, _ = select.select([fd], [], [], remaining)
        if ready:
            chunk = os.read(fd, 65536)
            assert chunk, f"end of output after {data!r}"
            data += chunk
    return data


def test_the_server_exits_when_its_parent_is_killed_while_its_stdin_stays_open(tmp_path):
    stdin_r, stdin_w = os.pipe()
    stdout_r, stdout_w = os.pipe()
    stderr_path = tmp_path / "server-stderr.txt"
    stderr_fd = os.open(stderr_path, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o600)
    intermediate = subprocess.Popen(
        [
            sys.executable,
            "-c",
            INTERMEDIATE,
            str(stdin_r),
            str(stdout_w),
            str(stderr_fd),
            sys.executable,
            str(LIFECYCLE),
        ],
        stdin=subprocess.DEVNULL,
        stdout=subprocess.PIPE,
        pass_fds=(stdin_r, stdout_w, stderr_fd),
    )
    # Only the intermediate (and the server) hold these ends now; we keep stdin_w open.
    for fd in (stdin_r, stdout_w, stderr_fd):
        os.close(fd)
    server_pid = None
    try:
        assert intermediate.stdout is not None
        server_pid = int(read_line(intermediate.stdout.fileno(), 10))

        # The server is up and serving through the pipes we hold.
        os.write(stdin_w, b'{"jsonrpc":"2.0","id":1,"method":"ping"}\n')
        assert json.loads(read_line(stdout_r, 10)) == {"jsonrpc": "2.0", "id": 1, "result": {}}
        # The steady state: the parent dies once the server has served for a while (a parent
        # dying within the first milliseconds of serving is a different, start-up case).
        time.sleep(SETTLE)
        os.write(stdin_w, b'{"jsonrpc":"2.0","id":2,"method":"ping"}\n')
        assert json.loads(read_line(stdout_r, 10))["id"] == 2

        intermediate.send_signal(signal.SIGKILL)
        intermediate.wait(10)
        killed_at = time.monotonic()
        while is_running(server_pid) and time.monotonic() - killed_at < EXIT_WITHIN + 5:
            time.sleep(0.05)
        elapsed = time.monotonic() - killed_at
        stderr = stderr_path.read_text(errors="replace")
        assert not is_running(server_pid), (
            f"server {server_pid} still running {elapsed:.1f} s after its parent was killed "
            f"(its stdin is still open); stderr:\n{stderr}"
        )
        assert elapsed < EXIT_WITHIN, f"took {elapsed:.1f} s; stderr:\n{stderr}"
        assert "Traceback" not in stderr, stderr
    finally:
        if server_pid is not None and is_running(server_pid):
            os.kill(server_pid, signal.SIGKILL)
        if intermediate.poll() is None:
            intermediate.kill()
            intermediate.wait(10)
        if intermediate.stdout is not None:
            intermediate.stdout.close()
        os.close(stdin_w)
        os.close(stdout_r)
