"""Drives an installed ``mcpline demo`` the way an MCP host does, and fails loudly if it cannot.

    python tests/demo_roundtrip.py [PATH/TO/mcpline]

Starts ``mcpline demo FOLDER`` on a temporary folder, with pipes for stdin and stdout, where
``mcpline`` is the console script that installing the package put in the scripts folder (bin/
or Scripts/) of the environment of the Python running this file, or PATH/TO/mcpline. It then
completes ``initialize`` + ``notifications/initialized``, ``tools/list`` and one
``tools/call`` (``count_words``), checks each answer and that stdout carried nothing but
protocol frames, closes stdin and expects exit status 0. Standard library only; not collected by
pytest (the suite tests the demo in-depth in test_cli_commands.py through ``python -m``).
"""

from __future__ import annotations

import json
import queue
import shutil
import subprocess
import sys
import sysconfig
import tempfile
import threading
from pathlib import Path
from typing import Any

TIMEOUT = 30.0  # seconds for any one answer: generous for a loaded CI machine
EXPECTED_TOOLS = {"list_files", "read_text", "count_words", "search"}


def main(argv: list[str]) -> int:
    if len(argv) > 2:
        print(f"usage: {argv[0]} [PATH/TO/mcpline]", file=sys.stderr)
        return 2
    scripts = sysconfig.get_path("scripts")
    command = argv[1] if len(argv) == 2 else shutil.which("mcpline", path=scripts)
    if command is None:
        print(f"demo round trip FAILED: no mcpline command in {scripts}", file=sys.stderr)
        return 1
    with tempfile.TemporaryDirectory() as tmp:
        folder = Path(tmp)
        (folder / "words.txt").write_text("one two three\nfour\n", encoding="utf-8")
        proc = subprocess.Popen(
            [command, "demo", str(folder)],
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
        )
        try:
            return roundtrip(proc)
        finally:
            if proc.poll() is None:
                proc.kill()
            proc.wait()


def roundtrip(proc: subprocess.Popen[bytes]) -> int:
    assert proc.stdin is not None and proc.stdout is not None and proc.stderr is not None
    lines: queue.Queue[bytes] = queue.Queue()
    stderr: list[bytes] = []

    def pump_stdout() -> None:
        assert proc.stdout is not None
        for line in iter(proc.stdout.readline, b""):
            lines.put(line)
        lines.put(b"")

    def pump_stderr() -> None:
        assert proc.stderr is not None
        stderr.extend(iter(proc.stderr.readline, b""))

    threads = [threading.Thread(target=f, daemon=True) for f in (pump_stdout, pump_stderr)]
    for thread in threads:
        thread.start()

    def fail(message: str) -> int:
        log = b"".join(stderr).decode("utf-8", "replace")
        print(f"demo round trip FAILED: {message}\n--- server stderr ---\n{log}", file=sys.stderr)
        return 1

    def send(frame: dict[str, Any]) -> None:
        assert proc.stdin is not None
        proc.stdin.write(json.dumps(frame).encode() + b"\n")
        proc.stdin.flush()

    def answer(request_id: int) -> dict[str, Any]:
        while True:
            line = lines.get(timeout=TIMEOUT)
            if not line:
                raise EOFError(f"stdout closed before the answer to request {request_id}")
            message = json.loads(line)  # stdout must carry JSON frames only
            if isinstance(message, dict) and message.get("id") == request_id:
                return message

    try:
        send(
            {
                "jsonrpc": "2.0",
                "id": 1,
                "method": "initialize",
                "params": {
                    "protocolVersion": "2025-11-25",
                    "capabilities": {},
                    "clientInfo": {"name": "demo-roundtrip", "version": "1"},
                },
            }
        )
        init = answer(1)
        if init.get("result", {}).get("serverInfo", {}).get("name") != "mcpline-demo":
            return fail(f"unexpected initialize answer {init}")
        send({"jsonrpc": "2.0", "method": "notifications/initialized"})

        send({"jsonrpc": "2.0", "id": 2, "method": "tools/list"})
        listed = answer(2)
        names = {tool["name"] for tool in listed.get("result", {}).get("tools", [])}
        if names != EXPECTED_TOOLS:
            return fail(f"tools/list gave {sorted(names)}, expected {sorted(EXPECTED_TOOLS)}")

        send(
            {
                "jsonrpc": "2.0",
                "id": 3,
                "method": "tools/call",
                "params": {"name": "count_words", "arguments": {"path": "words.txt"}},
            }
        )
        called = answer(3)
        result = called.get("result", {})
        if result.get("isError") or result.get("structuredContent") != {"result": 4}:
            return fail(f"tools/call count_words gave {called}")

        proc.stdin.close()
        code = proc.wait(TIMEOUT)
        threads[0].join(TIMEOUT)
        while line := lines.get_nowait():  # whatever came after the answers: frames only
            json.loads(line)
    except (queue.Empty, subprocess.TimeoutExpired):
        return fail(f"no answer within {TIMEOUT} s")
    except (EOFError, ValueError, OSError) as e:
        return fail(f"{type(e).__name__}: {e}")
    if code != 0:
        return fail(f"exit status {code} at end of input")
    version = init["result"]["protocolVersion"]
    print(f"demo round trip ok: initialize ({version}), tools/list ({len(names)}), tools/call")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
