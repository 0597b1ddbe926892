"""Output a call's child writes after the call ended (a daemon, a pool worker) is never lost
and never passed off as a later call's: it reaches the log labelled as late output of the call
that started the child."""

import json
import sys
import time

import pytest
from conftest import SERVERS_DIR, call_frame

SERVER = SERVERS_DIR / "background_server.py"


STARTERS = [
    "start_quietly",
    "start_loudly",
    pytest.param(
        "start_through_a_shell",
        marks=pytest.mark.skipif(sys.platform == "win32", reason="sh and & are POSIX"),
    ),
    pytest.param(
        "start_from_c",
        marks=pytest.mark.skipif(sys.platform == "win32", reason="no posix_spawn on Windows"),
    ),
    pytest.param(
        "start_from_c_through_a_shell",
        marks=pytest.mark.skipif(sys.platform == "win32", reason="sh and & are POSIX"),
    ),
]

# Processes started from C, which nothing reports: on unix the cell tells exactly whether one
# still holds a call's output (Windows asks its job object, tested in tests/windows). Linux
# opens the capture file anew through /proc; without /proc, as on macOS, the cell makes the file
# with spare opens of it, and these run again with /proc hidden.
EXACT = pytest.mark.skipif(
    sys.platform == "win32", reason="these servers start C children by POSIX calls"
)


@pytest.fixture(params=["spawn", "spawn_without_proc"])
def spawn_any(request):
    """``spawn``, and ``spawn`` with ``/proc`` hidden from the server (``spawn_without_proc``)."""
    return request.getfixturevalue(request.param)


def log_after_burst(server, burst: list[bytes]) -> str:
    """Sends the ``burst`` of call frames at once, then quiet and noisy calls one at a time for
    1.2 s while children write; ends the server and answers its log, once no answer was seen
    to carry a child's late lines."""
    server.send_bytes(b"".join(burst))
    results = [server.recv(10) for _ in burst]
    deadline = time.monotonic() + 1.2
    n = 0
    while time.monotonic() < deadline:
        name, arguments = ("noisy", {"tag": f"later{n}"}) if n % 2 else ("quiet", {})
        results.append(server.call(name, arguments))
        n += 1
        time.sleep(0.05)
    server.close_stdin()
    assert server.wait(10) == 0
    for result in results:
        text = json.dumps(result)
        assert "late from" not in text and "later from" not in text, text
    return server.stderr_text()


@pytest.mark.parametrize("starter", STARTERS)
def test_late_output_of_a_background_child_goes_to_the_log_as_its_calls(spawn_any, starter):
    server = spawn_any(SERVER)
    server.initialize()
    # Calls queued right behind the one that starts the child (a quiet call's file would be
    # taken over by the next call), then more calls while the child writes.
    burst = [call_frame("start", starter, {"tag": "A"})]
    burst += [call_frame(f"q{n}", "quiet", {}) for n in range(3)]
    burst += [call_frame(f"n{n}", "noisy", {"tag": str(n)}) for n in range(3)]
    log = log_after_burst(server, burst)
    label = f'[{starter} #"start", late] '
    assert f"{label}late from A\n" in log, log
    assert f"{label}later from A\n" in log, log


def test_a_child_left_by_an_earlier_call_does_not_make_later_calls_count_as_starting_one(spawn_any):
    # Calls long enough to start a process, made while a child an earlier call left lives on,
    # did not start it: were their files all followed as if they had, the first call's file
    # would be let go (at most 16 are followed) before its child writes there.
    server = spawn_any(SERVER)
    server.initialize()
    burst = [call_frame("start", "start_quietly", {"tag": "A"})]
    burst += [call_frame(f"p{n}", "pause", {}) for n in range(30)]
    server.send_bytes(b"".join(burst))
    results = [server.recv(10) for _ in burst]
    deadline = time.monotonic() + 1.2
    while time.monotonic() < deadline:
        results.append(server.call("quiet", {}))
        time.sleep(0.05)
    server.close_stdin()
    assert server.wait(10) == 0

    for result in results:
        assert "late from" not in json.dumps(result), result
    log = server.stderr_text()
    label = '[start_quietly #"start", late] '
    assert f"{label}late from A\n" in log, log
    assert f"{label}later from A\n" in log, log


def log_of_calls_starting_children(
    spawn, tool: str, count: int, *, settle: float, pause: float = 0.0
) -> str:
    """Calls ``tool`` ``count`` times one after another (ids s0, s1, ..., tags T0, T1, ...),
    each answered "started", waits ``settle`` seconds for the children's late output, ends the
    server and answers its log, in which no followed file was ever let go."""
    server = spawn(SERVER)
    server.initialize()
    for n in range(count):
        server.send_bytes(call_frame(f"s{n}", tool, {"tag": f"T{n}"}))
        assert server.recv(10)["result"]["content"][0]["text"] == "started"
        time.sleep(pause)
    time.sleep(settle)
    server.close_stdin()
    assert server.wait(10) == 0
    log = server.stderr_text()
    assert "no longer followed" not in log, log
    return log


def test_late_output_of_many_calls_children_all_reaches_the_log_as_their_calls(spawn_any):
    # Twenty calls each leave a child behind that writes after its call ended: none of their
    # late output is dropped or labelled with another call, however many calls left writers
    # behind.
    log = log_of_calls_starting_children(spawn_any, "start_quietly", 20, settle=1.0)
    for n in range(20):
        label = f'[start_quietly #"s{n}", late] '
        assert f"{label}late from T{n}\n" in log, (n, log)
        assert f"{label}later from T{n}\n" in log, (n, log)


@EXACT
@pytest.mark.skipif(not sys.platform.startswith("linux"), reason="fds 1 and 2 on a pipe: Linux")
def test_late_output_of_a_child_writing_through_its_own_open_of_dev_stderr_is_its_calls(spawn):
    # The child's descriptors are not the ones the call's fds 1 and 2 wrote through, but opens
    # of the same pipe made by its shell: the call's pipe is still held all the same.
    server = spawn(SERVER)
    server.initialize()
    burst = [call_frame("start", "start_from_c_through_dev_stderr", {"tag": "A"})]
    burst += [call_frame(f"q{n}", "quiet", {}) for n in range(3)]
    burst += [call_frame(f"n{n}", "noisy", {"tag": str(n)}) for n in range(3)]
    log = log_after_burst(server, burst)
    label = '[start_from_c_through_dev_stderr #"start", late] '
    assert f"{label}late from A\n" in log, log
    assert f"{label}later from A\n" in log, log


def test_late_output_of_a_child_started_from_c_while_another_lives_reaches_the_log_as_its_calls(
    spawn_any,
):
    # The first call leaves a child behind; while it lives, another call starts one from C.
    # The process had a child before and after that call, yet the second child's late output
    # is the second call's, never a later call's.
    server = spawn_any(SERVER)
    server.initialize()
    burst = [call_frame("a", "start_quietly", {"tag": "A"})]
    burst += [call_frame(f"p{n}", "pause", {}) for n in range(3)]
    burst += [call_frame("b", "start_from_c", {"tag": "B"})]
    burst += [call_frame(f"q{n}", "quiet", {}) for n in range(3)]
    log = log_after_burst(server, burst)
    for label, tag in (('[start_quietly #"a", late] ', "A"), ('[start_from_c #"b", late] ', "B")):
        assert f"{label}late from {tag}\n" in log, log
        assert f"{label}later from {tag}\n" in log, log


@EXACT
def test_calls_that_leave_short_lived_children_from_c_never_run_out_of_followed_files(spawn_any):
    # Eighty calls each start a child from C that writes once and exits soon after its call:
    # a file is let go once its last writer has closed it, so however many calls left writers
    # behind over time, every late line reaches the log as its own call's.
    log = log_of_calls_starting_children(
        spawn_any, "start_briefly_from_c", 80, settle=0.5, pause=0.02
    )
    for n in range(80):
        assert f'[start_briefly_from_c #"s{n}", late] brief from T{n}\n' in log, (n, log)
