"""A small MCP client for any stdio server: starts the command, exchanges newline-delimited
JSON-RPC with it, and keeps everything it wrote (``mcpline call/tools --cmd`` and
``mcpline doctor`` use it).
"""

from __future__ import annotations

import json
import os
import queue
import subprocess
import threading
import time
from typing import Any

__all__ = ["PROTOCOL_VERSION", "ServerGone", "StdioServer"]

PROTOCOL_VERSION = "2025-11-25"


class ServerGone(Exception):
    """The server closed its output or did not answer in time."""


class StdioServer:
    """A server process and the lines it wrote on stdout (``lines``) and stderr."""

    def __init__(self, argv: list[str]) -> None:
        try:
            self.proc = subprocess.Popen(
                argv,
                stdin=subprocess.PIPE,
                stdout=subprocess.PIPE,
                stderr=subprocess.PIPE,
            )
        except OSError as e:
            raise ServerGone(f"cannot start {argv[0]!r}: {e.strerror or e}") from None
        self.lines: list[bytes] = []  # every stdout line, as written
        self.stderr = bytearray()
        self._frames: queue.Queue[Any] = queue.Queue()
        self._next_id = 1
        threading.Thread(target=self._read_stdout, daemon=True).start()
        threading.Thread(target=self._read_stderr, daemon=True).start()

    def _read_stdout(self) -> None:
        assert self.proc.stdout is not None
        for line in self.proc.stdout:
            self.lines.append(line)
            try:
                self._frames.put(json.loads(line))
            except ValueError:
                self._frames.put({"__not_json__": line})
        self._frames.put(None)

    def _read_stderr(self) -> None:
        assert self.proc.stderr is not None
        fd = self.proc.stderr.fileno()
        while chunk := os.read(fd, 65536):  # what is there, as it comes
            self.stderr += chunk

    def send_line(self, data: bytes) -> None:
        assert self.proc.stdin is not None
        try:
            self.proc.stdin.write(data.rstrip(b"\n") + b"\n")
            self.proc.stdin.flush()
        except OSError as e:
            raise ServerGone(f"the server closed its input: {e}") from None

    def send(self, message: dict[str, Any]) -> None:
        self.send_line(json.dumps(message).encode())

    def notify(self, method: str, params: dict[str, Any] | None = None) -> None:
        message: dict[str, Any] = {"jsonrpc": "2.0", "method": method}
        if params is not None:
            message["params"] = params
        self.send(message)

    def request(
        self, method: str, params: dict[str, Any] | None = None, timeout: float = 30.0
    ) -> dict[str, Any]:
        """Sends a request and returns its response (notifications in between are skipped)."""
        request_id = self._next_id
        self._next_id += 1
        message: dict[str, Any] = {"jsonrpc": "2.0", "id": request_id, "method": method}
        if params is not None:
            message["params"] = params
        self.send(message)
        return self.response_to(request_id, timeout)

    def response_to(self, request_id: Any, timeout: float) -> dict[str, Any]:
        deadline = time.monotonic() + timeout
        while True:
            left = deadline - time.monotonic()
            if left <= 0:
                raise ServerGone(f"no answer within {timeout:g} s")
            try:
                frame = self._frames.get(timeout=left)
            except queue.Empty:
                continue
            if frame is None:
                self._frames.put(None)
                raise ServerGone("the server closed its output")
            if isinstance(frame, dict) and frame.get("id") == request_id and "method" not in frame:
                return frame

    def initialize(self, timeout: float = 30.0) -> dict[str, Any]:
        response = self.request(
            "initialize",
            {
                "protocolVersion": PROTOCOL_VERSION,
                "capabilities": {},
                "clientInfo": {"name": "mcpline", "version": "1"},
            },
            timeout,
        )
        if "result" in response:
            self.notify("notifications/initialized")
        return response

    def close(self, timeout: float = 5.0) -> int | None:
        """Closes the server's input and waits for it to exit; None if it did not."""
        if self.proc.stdin is not None:
            try:
                self.proc.stdin.close()
            except OSError:
                pass
        try:
            return self.proc.wait(timeout)
        except subprocess.TimeoutExpired:
            return None

    def kill(self) -> None:
        if self.proc.poll() is None:
            self.proc.kill()
            self.proc.wait()
