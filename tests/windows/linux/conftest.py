"""Linux side of the Windows suite: a Windows server under wine, driven through pipes.

``MCPLINE_WINE_PYTHON`` names the Windows ``python.exe`` that tests/windows/run.sh set up (with
mcpline and its Windows extension on its path); ``WINEPREFIX`` the prefix it lives in. Run this
folder through run.sh, never on its own.
"""

import json
import os
import queue
import subprocess
import threading
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

SERVER = Path(__file__).resolve().parent.parent / "servers" / "windows_server.py"

_EOF = object()


def windows_path(path: Path) -> str:
    """The path as the Windows process sees it: wine maps drive Z: to the Linux root."""
    return "Z:" + str(path).replace("/", "\\")


class WineServer:
    """``wine python.exe windows_server.py`` with a JSON-line client on its stdin and stdout.

    Under wine 8 the standard streams of python.exe must be pipes, so stderr is a pipe too, read
    into ``stderr_lines`` by a thread. Every stdout line is kept in ``stdout_lines``. Started as
    a host starts it: without ``PYTHONUNBUFFERED`` (which wine would pass on).
    """

    def __init__(self, python: str, args: list[str]) -> None:
        env = {k: v for k, v in os.environ.items() if k != "PYTHONUNBUFFERED"}
        self.proc = subprocess.Popen(
            ["wine", python, windows_path(SERVER), *args],
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            env=env,
        )
        self.stdout_lines: list[bytes] = []
        self.stderr_chunks: list[bytes] = []
        self._lines: queue.Queue[Any] = queue.Queue()
        self._readers = [
            threading.Thread(target=self._read_stdout, daemon=True),
            threading.Thread(target=self._read_stderr, daemon=True),
        ]
        for reader in self._readers:
            reader.start()

    def _read_stdout(self) -> None:
        assert self.proc.stdout is not None
        for line in iter(self.proc.stdout.readline, b""):
            self.stdout_lines.append(line)
            self._lines.put(line)
        self._lines.put(_EOF)

    def _read_stderr(self) -> None:
        assert self.proc.stderr is not None
        for chunk in iter(lambda: self.proc.stderr.read1(65536), b""):
            self.stderr_chunks.append(chunk)

    def send_bytes(self, data: bytes) -> None:
        assert self.proc.stdin is not None
        self.proc.stdin.write(data)
        self.proc.stdin.flush()

    def send(self, message: Any) -> None:
        self.send_bytes(json.dumps(message).encode() + b"\n")

    def recv(self, timeout: float = 30.0) -> Any:
        """The next stdout frame, parsed; ``None`` at end of output."""
        try:
            line = self._lines.get(timeout=timeout)
        except queue.Empty:
            raise TimeoutError(
                f"no output within {timeout} s; stderr:\n{self.stderr_text()}"
            ) from None
        if line is _EOF:
            self._lines.put(_EOF)
            return None
        try:
            return json.loads(line)
        except ValueError:
            raise AssertionError(f"stdout carried a non-JSON line: {line!r}") from None

    def request(self, request_id: int, method: str, params: Any = None, timeout: float = 30.0):
        """Sends a request and returns the response frame for its id (skipping others)."""
        frame: dict[str, Any] = {"jsonrpc": "2.0", "id": request_id, "method": method}
        if params is not None:
            frame["params"] = params
        self.send(frame)
        return self.response_to(request_id, timeout)

    def response_to(self, request_id: Any, timeout: float = 30.0) -> dict[str, Any]:
        while True:
            message = self.recv(timeout)
            assert message is not None, f"stdout closed before the answer to {request_id!r}"
            if message.get("id") == request_id and ("result" in message or "error" in message):
                return message

    def responses_to(self, ids: set[Any], timeout: float = 30.0) -> dict[Any, dict[str, Any]]:
        """Reads frames until every id in ``ids`` has its response; returns the responses by id."""
        found: dict[Any, dict[str, Any]] = {}
        while not ids <= found.keys():
            message = self.recv(timeout)
            assert message is not None, f"stdout closed; unanswered: {ids - found.keys()}"
            if "result" in message or "error" in message:
                found[message.get("id")] = message
        return found

    def notify(self, method: str, params: Any = None) -> None:
        frame: dict[str, Any] = {"jsonrpc": "2.0", "method": method}
        if params is not None:
            frame["params"] = params
        self.send(frame)

    def initialize(self, version: str = "2025-11-25") -> dict[str, Any]:
        response = self.request(
            0,
            "initialize",
            {
                "protocolVersion": version,
                "capabilities": {},
                "clientInfo": {"name": "linux-pytest", "version": "1"},
            },
            timeout=60,  # the first start of a wine process in a fresh prefix is slow
        )
        assert "result" in response, response
        self.notify("notifications/initialized")
        return response["result"]

    def close_stdin(self) -> None:
        if self.proc.stdin is not None and not self.proc.stdin.closed:
            self.proc.stdin.close()

    def read_to_end(self, timeout: float = 30.0) -> list[Any]:
        """Every frame still to come, up to end of output."""
        frames = []
        while (message := self.recv(timeout)) is not None:
            frames.append(message)
        return frames

    def wait(self, timeout: float = 30.0) -> int:
        code = self.proc.wait(timeout)
        for reader in self._readers:
            reader.join(timeout)
        return code

    def stderr_text(self) -> str:
        return b"".join(self.stderr_chunks).decode("utf-8", errors="replace")

    def frames_written(self) -> list[dict[str, Any]]:
        return [json.loads(line) for line in self.stdout_lines]

    def kill(self) -> None:
        if self.proc.poll() is None:
            self.proc.kill()
        try:
            self.proc.wait(10)
        except subprocess.TimeoutExpired:
            pass
        self.close_stdin()
        for reader in self._readers:
            reader.join(5)
        for stream in (self.proc.stdout, self.proc.stderr):
            if stream is not None:
                stream.close()


@pytest.fixture
def spawn_windows_server() -> Iterator[Any]:
    """``spawn_windows_server(*args)`` starts the Windows server under wine; killed at teardown."""
    python = os.environ.get("MCPLINE_WINE_PYTHON")
    if not python:
        pytest.fail("MCPLINE_WINE_PYTHON is not set: run tests/windows/run.sh")
    started: list[WineServer] = []

    def start(*args: str) -> WineServer:
        server = WineServer(python, list(args))
        started.append(server)
        return server

    yield start
    for server in started:
        server.kill()
