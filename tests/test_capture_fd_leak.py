"""10,000 captured tool calls leave the server with exactly the descriptors it had before."""

import json
import os
import re
import subprocess
import sys
import threading
import time

from conftest import SERVERS_DIR

FD_SERVER = SERVERS_DIR / "capture_fd_server.py"
CALLS = 10_000
CYCLE = ("noisy", "failing", "noisy_async", "quiet")
# The capture files: in memory on Linux, else unlinked temporary files.
SPARE = re.compile(r"^/memfd:mcpline-capture \(deleted\)$")
KEPT_AFTER_CALLS = 4 + 16


def open_fds(pid: int) -> dict[str, str]:
    folder = f"/proc/{pid}/fd"
    fds = {}
    for name in os.listdir(folder):
        try:
            fds[name] = os.readlink(f"{folder}/{name}")
        except FileNotFoundError:
            pass  # closed while listing
    return fds


def settled_fds(pid: int, timeout: float = 10.0) -> dict[str, str]:
    """``open_fds`` once fds 1 and 2 are home again. A finished call leaves them parked on its
    capture file for the next call to take over; the server points them home (``settle``) only
    when it finds no more work, just *after* it wrote the last answer. A snapshot taken right
    after that answer arrives may see them still parked (or one of them, mid-``dup2``). Never
    going home while idle would be a bug: the wait is bounded."""
    deadline = time.monotonic() + timeout
    while True:
        fds = open_fds(pid)
        # Parked on a capture file, or on the pipe they write through into it (Linux).
        parked = [fd for fd in ("1", "2") if is_capture(fds.get(fd, ""))]
        if not parked:
            return fds
        assert time.monotonic() < deadline, f"fds {parked} stay on a capture file while idle: {fds}"
        time.sleep(0.01)


def is_capture(target: str) -> bool:
    return bool(SPARE.match(target)) or target.startswith("pipe:")


def without_spare(fds: dict[str, str]) -> dict[str, str]:
    """``fds`` without the capture files the cell keeps after calls, a bounded number: the files
    of the last four calls (to reuse the newest and watch them for late output), and up to 16
    files of calls that started a child (which may still write there). How many are kept
    depends on how async calls happened to overlap the plain ones. (The pipe the newest file's
    next capture writes through stays: one, before and after.)"""
    spares = [fd for fd, target in fds.items() if fd not in ("1", "2") and SPARE.match(target)]
    assert len(spares) <= KEPT_AFTER_CALLS, fds
    return {fd: target for fd, target in fds.items() if fd not in spares}


def kinds(fds: dict[str, str]) -> list[str]:
    """Targets with unlinked files' and pipes' inode numbers blanked. (Fds 1 and 2 at home reach
    the server's real stderr: under pytest an unlinked temporary file, ``/tmp/#NNN (deleted)``,
    the harness's own, not a capture file.)"""
    blanked = (re.sub(r"#\d+ \(deleted\)$|\[\d+\]$", "#", target) for target in fds.values())
    return sorted(blanked)


def calls(first_id: int, count: int) -> bytes:
    frames = []
    for n in range(count):
        i = first_id + n
        name = "child" if n % 250 == 0 else CYCLE[n % len(CYCLE)]
        arguments = {} if name == "quiet" else {"i": i}
        frame = {
            "jsonrpc": "2.0",
            "id": i,
            "method": "tools/call",
            "params": {"name": name, "arguments": arguments},
        }
        frames.append(json.dumps(frame).encode() + b"\n")
    return b"".join(frames)


def run_batch(server, first_id: int, count: int, timeout: float) -> None:
    """Pipelines ``count`` calls (written from a thread) and waits for every answer."""
    writer = threading.Thread(target=server.send_bytes, args=(calls(first_id, count),))
    writer.start()
    pending = set(range(first_id, first_id + count))
    errors = []
    while pending:
        message = server.recv(timeout)
        assert message is not None, f"stdout closed with {len(pending)} calls unanswered"
        pending.discard(message.get("id"))
        result = message.get("result")
        if result is None:
            errors.append(message)
        elif result.get("isError") and not result["content"][0]["text"].startswith("failed "):
            errors.append(message)
    writer.join(timeout)
    assert not errors, errors[:5]


def test_ten_thousand_captured_calls_leak_no_descriptors(spawn):
    server = spawn(FD_SERVER)
    server.initialize()
    run_batch(server, first_id=100, count=2 * len(CYCLE), timeout=30)  # warm-up: every path once
    before = without_spare(settled_fds(server.proc.pid))

    run_batch(server, first_id=1_000, count=CALLS, timeout=60)
    after = without_spare(settled_fds(server.proc.pid))

    # As many of each kind (the numbers of the kept pipe's descriptors may differ).
    assert len(after) == len(before), {"before": before, "after": after}
    assert kinds(after) == kinds(before), {"before": before, "after": after}
    server.close_stdin()
    assert server.wait(30) == 0


IN_PROCESS_SCRIPT = """
import json, os, re, sys
import mcpline
from mcpline import Server, ToolError
from mcpline.testing import Client

def fds():
    # What each is, numbers left out: a kept pipe's descriptors may be numbered anew.
    links = []
    for fd in os.listdir("/proc/self/fd"):
        try:
            links.append(re.sub(r"[[]\\d+[]]|#\\d+", "", os.readlink(f"/proc/self/fd/{fd}")))
        except FileNotFoundError:
            pass  # listdir's own descriptor
    return sorted(links)

server = Server("in-process")

@server.tool(output="result")
def noisy(i: int) -> str:
    os.write(1, b"noisy\\n")
    return "ok"

@server.tool
def quiet() -> str:
    return "ok"

@server.tool
def failing() -> str:
    os.write(2, b"failing\\n")
    raise ToolError("failed")

def call_all(client, count):
    for i in range(count):
        kind = i % 3
        if kind == 0:
            assert client.call("noisy", i=i).text == "ok\\nOutput of the tool run:\\nnoisy\\n"
        elif kind == 1:
            assert client.call("failing").is_error
        else:
            assert client.call("quiet").text == "ok"

def context_cycles(count):
    for i in range(count):
        with mcpline.capture() as out:
            if i % 2:
                os.write(1, b"x")
            if i % 10 == 0:
                with mcpline.capture() as window:  # a window onto this capture
                    os.write(1, b"w")
                assert window.text == "w", window.text
        assert out.total_bytes == i % 2 + (i % 10 == 0)

findings = {}
with Client(server) as client:
    call_all(client, 6)  # warm-up: every path once
    findings["calls_before"] = fds()
    call_all(client, 2_001)  # in-memory calls run ~1 ms each: the stdio test does 10,000
    findings["calls_after"] = fds()
context_cycles(10)
findings["cm_before"] = fds()
context_cycles(10_000)
findings["cm_after"] = fds()
with open(sys.argv[1], "w") as f:
    json.dump(findings, f)
"""


def test_in_process_calls_and_ten_thousand_capture_blocks_leak_no_descriptors(tmp_path):
    # pytest's own fd capture would interfere with mcpline.capture(): run in a subprocess
    script = tmp_path / "in_process.py"
    script.write_text(IN_PROCESS_SCRIPT)
    findings_path = tmp_path / "findings.json"
    ran = subprocess.run(
        [sys.executable, str(script), str(findings_path)], capture_output=True, timeout=120
    )
    assert ran.returncode == 0, ran.stderr.decode(errors="replace")[-3000:]
    found = json.loads(findings_path.read_text())
    assert found["calls_after"] == found["calls_before"], found
    assert found["cm_after"] == found["cm_before"], found
