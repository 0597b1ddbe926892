"""What a call had printed is not lost when the process leaves while it still runs: at the
end-of-input exit, on SIGTERM and when the parent dies, the running call's captured output
reaches the real stderr (fatal signals: ``test_capture_fatal_signal.py``)."""

import os
import signal
import subprocess
import sys
import time

import pytest
from conftest import SERVERS_DIR, call_frame, host_environ, wait_for_event
from test_lifecycle_parent_death import INTERMEDIATE, is_running, read_line

HANG_SERVER = SERVERS_DIR / "hang_server.py"  # eof_grace 0.5 s
INITIALIZE = (
    b'{"jsonrpc":"2.0","id":0,"method":"initialize","params":{"protocolVersion":"2025-11-25",'
    b'"capabilities":{},"clientInfo":{"name":"test","version":"1"}}}\n'
    b'{"jsonrpc":"2.0","method":"notifications/initialized"}\n'
)


def test_output_of_a_call_still_running_at_the_end_of_input_exit_reaches_stderr(spawn, tmp_path):
    server = spawn(HANG_SERVER)
    server.initialize()
    notes = tmp_path / "notes"
    server.send_bytes(call_frame("stuck", "hang_loudly", {"seconds": 30, "path": str(notes)}))
    wait_for_event(notes, "started")  # the tool has printed and is asleep
    server.close_stdin()
    assert server.wait(10) == 0
    log = server.stderr_text()
    assert "[call still running at exit] about to hang" in log, log
    assert "[call still running at exit] the child was here" in log, log
    assert log.index("still running after end of input") < log.index("about to hang"), log


@pytest.mark.skipif(sys.platform == "win32", reason="POSIX signals")
@pytest.mark.parametrize("signame", ["SIGTERM", "SIGHUP", "SIGINT"])
def test_output_of_a_call_interrupted_by_a_stopping_signal_reaches_stderr(spawn, tmp_path, signame):
    server = spawn(HANG_SERVER)
    server.initialize()
    notes = tmp_path / "notes"
    server.send_bytes(call_frame("stuck", "hang_loudly", {"seconds": 30, "path": str(notes)}))
    wait_for_event(notes, "started")
    server.proc.send_signal(getattr(signal, signame))
    assert server.wait(10) == 0
    log = server.stderr_text()
    assert '[hang_loudly #"stuck"] about to hang' in log, log
    assert '[hang_loudly #"stuck"] the child was here' in log, log


@pytest.mark.skipif(sys.platform == "win32", reason="POSIX process model")
def test_output_of_a_call_still_running_when_the_parent_dies_reaches_stderr(tmp_path):
    stdin_r, stdin_w = os.pipe()
    stdout_r, stdout_w = os.pipe()
    stderr_path = tmp_path / "server-stderr.txt"
    stderr_fd = os.open(stderr_path, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o600)
    env = host_environ()
    descriptors = map(str, (stdin_r, stdout_w, stderr_fd))
    intermediate = subprocess.Popen(
        [sys.executable, "-c", INTERMEDIATE, *descriptors, sys.executable, str(HANG_SERVER)],
        stdin=subprocess.DEVNULL,
        stdout=subprocess.PIPE,
        pass_fds=(stdin_r, stdout_w, stderr_fd),
        env=env,
    )
    for fd in (stdin_r, stdout_w, stderr_fd):
        os.close(fd)
    server_pid = None
    try:
        assert intermediate.stdout is not None
        server_pid = int(read_line(intermediate.stdout.fileno(), 10))
        os.write(stdin_w, INITIALIZE)
        assert b'"id":0' in read_line(stdout_r, 10)
        notes = tmp_path / "notes"
        os.write(stdin_w, call_frame("stuck", "hang_loudly", {"seconds": 60, "path": str(notes)}))
        wait_for_event(notes, "started")
        intermediate.kill()
        intermediate.wait(10)
        deadline = time.monotonic() + 10
        while is_running(server_pid) and time.monotonic() < deadline:
            time.sleep(0.05)
        log = stderr_path.read_text(errors="replace")
        assert not is_running(server_pid), log
        assert "the parent process is gone" in log, log
        assert "[call still running at exit] about to hang" in log, log
        assert "[call still running at exit] the child was here" in log, log
    finally:
        if server_pid is not None and is_running(server_pid):
            os.kill(server_pid, signal.SIGKILL)
        if intermediate.poll() is None:
            intermediate.kill()
        if intermediate.stdout is not None:
            intermediate.stdout.close()
        os.close(stdin_w)
        os.close(stdout_r)
