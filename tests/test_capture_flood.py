"""A child that writes 200 MiB during a call neither blocks the server nor grows its memory, and
a capture past its cap moves its front to the log while the call runs.

The capture goes to a file (not a pipe), so the child can never block on a full buffer; the
labelled stderr copy is streamed in bounded chunks and only the tail is attached. The server's
own stderr is /dev/null here, so the 200 MiB copy costs nothing to keep.
"""

import json
import os
import queue
import re
import subprocess
import sys
import threading
from typing import Any

import pytest
from conftest import SERVERS_DIR, call_frame, events, wait_for_event

FLOOD_SERVER = SERVERS_DIR / "capture_flood_server.py"
FLOOD_BYTES = 200 * 1024 * 1024
ATTACH_LIMIT = 8 * 1024  # capture_flood_server.ATTACH_LIMIT
MARKER_ALLOWANCE = 200  # "Output of the tool run:\n" + "[… N earlier bytes not shown …]\n"
PEAK_RSS_LIMIT_KIB = 150 * 1024
CALL_TIMEOUT = 120.0


class LineClient:
    """A server subprocess with stderr on /dev/null and a JSON-line reader on its stdout."""

    def __init__(self) -> None:
        self.proc = subprocess.Popen(
            [sys.executable, str(FLOOD_SERVER)],
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            stderr=subprocess.DEVNULL,
        )
        self.lines: list[bytes] = []
        self._queue: queue.Queue[bytes] = queue.Queue()
        self._reader = threading.Thread(target=self._read, daemon=True)
        self._reader.start()

    def _read(self) -> None:
        assert self.proc.stdout is not None
        for line in iter(self.proc.stdout.readline, b""):
            self.lines.append(line)
            self._queue.put(line)
        self._queue.put(b"")

    def request(self, request_id: int, method: str, params: dict, timeout: float) -> Any:
        assert self.proc.stdin is not None
        frame = {"jsonrpc": "2.0", "id": request_id, "method": method, "params": params}
        self.proc.stdin.write(json.dumps(frame).encode() + b"\n")
        self.proc.stdin.flush()
        while True:
            try:
                line = self._queue.get(timeout=timeout)
            except queue.Empty:
                raise AssertionError(f"no answer to {method} within {timeout} s") from None
            assert line, f"the server closed stdout before answering {method}"
            message = json.loads(line)
            if message.get("id") == request_id:
                return message

    def close(self) -> int:
        assert self.proc.stdin is not None
        self.proc.stdin.close()
        try:
            return self.proc.wait(30)
        finally:
            if self.proc.poll() is None:
                self.proc.kill()
                self.proc.wait(10)
            self._reader.join(10)
            assert self.proc.stdout is not None
            self.proc.stdout.close()


def peak_rss_kib(pid: int) -> int:
    with open(f"/proc/{pid}/status") as status:
        for line in status:
            if line.startswith("VmHWM:"):
                return int(line.split()[1])
    raise AssertionError("no VmHWM in /proc/<pid>/status")


def test_a_200_mib_child_flood_completes_with_bounded_attachment_and_memory():
    client = LineClient()
    try:
        init = client.request(
            1,
            "initialize",
            {
                "protocolVersion": "2025-11-25",
                "capabilities": {},
                "clientInfo": {"name": "flood", "version": "1"},
            },
            timeout=30,
        )
        assert "result" in init, init
        answer = client.request(
            2,
            "tools/call",
            {"name": "flood", "arguments": {"nbytes": FLOOD_BYTES}},
            timeout=CALL_TIMEOUT,
        )
        peak = peak_rss_kib(client.proc.pid)
        result = answer["result"]
        assert result.get("isError") is not True, str(result)[:2000]
        assert result["content"][0] == {"type": "text", "text": "done"}
        attached = "\n".join(c["text"] for c in result["content"][1:])
        assert attached.endswith("x" * 1000), attached[-200:]
        assert len(attached.encode()) <= ATTACH_LIMIT + MARKER_ALLOWANCE, len(attached)
        assert str(FLOOD_BYTES - ATTACH_LIMIT) in attached[:MARKER_ALLOWANCE], attached[:200]
        assert peak < PEAK_RSS_LIMIT_KIB, f"server peak RSS {peak} KiB"
        # still serving afterwards
        echo = client.request(
            3, "tools/call", {"name": "echo", "arguments": {"text": "alive"}}, timeout=30
        )
        assert echo["result"]["content"] == [{"type": "text", "text": "alive"}]
    finally:
        code = client.close()
    assert code == 0
    for line in client.lines:
        assert json.loads(line)["jsonrpc"] == "2.0"


def test_the_labelled_stderr_copy_of_a_large_capture_is_complete(spawn):
    # attached: only the tail; the server's stderr: every line, each labelled
    count = 300_000  # about 2 MiB
    server = spawn(FLOOD_SERVER)
    server.initialize()
    response = server.request(
        "tools/call", {"name": "flood_lines", "arguments": {"count": count}}, timeout=60
    )
    result = response["result"]
    attached = "\n".join(c["text"] for c in result["content"][1:])
    assert attached.endswith(f"\n{count}\n"), attached[-200:]
    assert len(attached.encode()) <= ATTACH_LIMIT + MARKER_ALLOWANCE
    server.close_stdin()
    assert server.wait(30) == 0
    label = f"[flood_lines #{response['id']}] "
    copied = [line for line in server.stderr_text().splitlines() if line.startswith(label)]
    assert len(copied) == count, (len(copied), copied[:3], copied[-3:])
    assert copied[0] == f"{label}1"
    assert copied[-1] == f"{label}{count}"
    assert all(line == f"{label}{n}" for n, line in enumerate(copied, start=1))


CAP = 64 * 1024


def test_a_capture_past_its_cap_moves_its_front_to_the_log_while_the_call_runs(spawn, tmp_path):
    batches, lines = 50, 1000  # 50 x 14 KB: about 11 capture caps of 64 KiB
    total = batches * lines
    server = spawn(FLOOD_SERVER, str(CAP))
    server.initialize()
    notes = tmp_path / "notes"
    arguments = {"batches": batches, "lines": lines, "path": str(notes)}
    server.send_bytes(call_frame("t", "trickle", arguments))
    wait_for_event(notes, "written")
    held = next(int(e.split()[1]) for e in events(notes) if e.startswith("held "))
    response = server.recv(30)
    # NTFS gives room back in whole 64 KiB allocation units: up to one more at each end.
    room = 2 * CAP if sys.platform != "win32" else 4 * CAP
    assert held <= room, f"the capture holds {held} bytes with a cap of {CAP}"
    attached = response["result"]["content"][1]["text"]
    assert attached.endswith(f"line {total - 1:08d}\n"), attached[-200:]
    hidden = int(re.search(r"\[… (\d+) earlier bytes not shown …\]", attached).group(1))
    shown = len(attached.split("…]\n", 1)[1].encode())
    assert hidden + shown == total * len("line 00000000\n"), (hidden, shown)
    server.close_stdin()
    assert server.wait(30) == 0
    log = server.stderr_text()
    label = '[trickle #"t"] '
    copied = [line[len(label) :] for line in log.splitlines() if line.startswith(label)]
    numbered = [line for line in copied if line.startswith("line ")]
    assert numbered == [f"line {n:08d}" for n in range(total)], (len(numbered), copied[:3])
    assert any("passed its cap of 65536 bytes" in line for line in copied), copied[:5]


@pytest.mark.skipif(sys.platform != "linux", reason="captures are in memory on Linux")
def test_captures_need_no_temporary_directory(spawn, tmp_path):
    # A full or missing $TMPDIR cannot make a tool fail or lose its output: nothing goes there.
    env = dict(os.environ, TMPDIR=str(tmp_path / "missing"))
    server = spawn(FLOOD_SERVER, env=env)
    server.initialize()
    response = server.request("tools/call", {"name": "flood_lines", "arguments": {"count": 3}})
    result = response["result"]
    assert result["content"][0]["text"] == "done"
    assert result["content"][1]["text"].endswith("1\n2\n3\n"), result
    server.close_stdin()
    assert server.wait(10) == 0
    assert "uncaptured" not in server.stderr_text()
