"""Shared fixtures: real server subprocesses speaking newline-delimited JSON-RPC over pipes."""

import json
import os
import queue
import shutil
import subprocess
import sys
import tempfile
import threading
import time
from collections.abc import Iterator, Mapping
from pathlib import Path
from typing import Any

import pytest

TESTS_DIR = Path(__file__).resolve().parent
SERVERS_DIR = TESTS_DIR / "servers"
BASIC_SERVER = SERVERS_DIR / "basic_server.py"

HANDSHAKE_VERSIONS = ("2024-11-05", "2025-03-26", "2025-06-18", "2025-11-25")
STATELESS_VERSION = "2026-07-28"
ALL_VERSIONS = (*HANDSHAKE_VERSIONS, STATELESS_VERSION)

_EOF = object()

# tests/windows/ is the Windows suite, run under wine by tests/windows/run.sh. Its Windows-side
# tests (windows/inside/) also run here on Windows; its Linux side (windows/linux/) needs wine.
collect_ignore = ["windows/linux"] if sys.platform == "win32" else ["windows"]


def host_environ(base: Mapping[str, str] | None = None) -> dict[str, str]:
    """``base`` (default: this process's environment) without ``PYTHONUNBUFFERED``, which this
    machine sets: a host starts its servers without it."""
    source = os.environ if base is None else base
    return {k: v for k, v in source.items() if k != "PYTHONUNBUFFERED"}


INTEROP_DIR = TESTS_DIR / "interop"


def run_node_client(script: Path, *args: str, server_log: str = "") -> dict[str, Any]:
    """Runs ``node tests/interop/SCRIPT ARGS`` (an official TypeScript SDK client) and returns
    the one JSON line it prints. Skipped without Node or ``tests/interop/node_modules``, failed
    for that in CI. The client and whatever server it starts get a host's environment.
    ``server_log`` is shown when the client fails."""
    node = shutil.which("node")
    if node is None:
        missing = "node is not on PATH"
    elif not (INTEROP_DIR / "node_modules" / "@modelcontextprotocol" / "sdk").is_dir():
        missing = "tests/interop/node_modules is missing (run `make node`)"
    else:
        missing = ""
    if missing:
        if os.environ.get("CI"):
            pytest.fail(f"TypeScript interop cannot run in CI: {missing}")
        pytest.skip(f"TypeScript interop skipped: {missing}")
    assert node is not None
    proc = subprocess.run(
        [node, str(script), *args],
        cwd=TESTS_DIR.parent,
        env=host_environ(),
        stdin=subprocess.DEVNULL,
        capture_output=True,
        text=True,
        encoding="utf-8",
        timeout=90,
        check=False,
    )
    if proc.returncode != 0:
        pytest.fail(
            f"{script.name} exited {proc.returncode}\n"
            f"--- stdout ---\n{proc.stdout}\n--- stderr ---\n{proc.stderr}\n{server_log}"
        )
    lines = proc.stdout.splitlines()
    assert len(lines) == 1, f"expected one JSON line on stdout, got:\n{proc.stdout}"
    result: dict[str, Any] = json.loads(lines[0])
    return result


class ServerProcess:
    """A server subprocess with a JSON-line client on its stdin/stdout.

    Every line the server writes to stdout is kept (``stdout_lines``) so that tests can check
    that nothing but protocol frames ever reached it; stderr goes to a temporary file that is
    readable at any time (``stderr_text()``), complete once the process has exited.
    """

    def __init__(self, argv: list[str], env: dict[str, str] | None, cwd: str | None) -> None:
        self.argv = argv
        self._stderr_file = tempfile.TemporaryFile()
        self.proc = subprocess.Popen(
            argv,
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            stderr=self._stderr_file,
            env=env,
            cwd=cwd,
        )
        self.stdout_lines: list[bytes] = []
        self._lines: queue.Queue[Any] = queue.Queue()
        self._next_id = 0
        self._reader = threading.Thread(target=self._read_stdout, daemon=True)
        self._reader.start()

    # ----- raw I/O -----

    def _read_stdout(self) -> None:
        assert self.proc.stdout is not None
        for line in iter(self.proc.stdout.readline, b""):
            self.stdout_lines.append(line)
            self._lines.put(line)
        self._lines.put(_EOF)

    def send_bytes(self, data: bytes) -> None:
        """Writes ``data`` to the server's stdin exactly as given."""
        assert self.proc.stdin is not None
        self.proc.stdin.write(data)
        self.proc.stdin.flush()

    def send(self, obj: Any) -> None:
        """Sends one JSON value as one line."""
        self.send_bytes(json.dumps(obj).encode() + b"\n")

    def recv(self, timeout: float = 10.0) -> Any:
        """The next stdout line, parsed as JSON; ``None`` at end of output.

        Raises ``TimeoutError`` when nothing arrives within ``timeout`` seconds and
        ``AssertionError`` when the line is not JSON (stdout must carry only protocol frames).
        """
        try:
            line = self._lines.get(timeout=timeout)
        except queue.Empty:
            raise TimeoutError(f"no output from {self.argv} within {timeout} s") from None
        if line is _EOF:
            self._lines.put(_EOF)
            return None
        try:
            return json.loads(line)
        except ValueError:
            raise AssertionError(f"stdout carried a non-JSON line: {line!r}") from None

    def close_stdin(self) -> None:
        """Ends the server's input."""
        if self.proc.stdin is not None and not self.proc.stdin.closed:
            try:
                self.proc.stdin.close()
            except BrokenPipeError:
                pass

    def wait(self, timeout: float = 10.0) -> int:
        """Waits for the process to exit and returns its exit code."""
        code = self.proc.wait(timeout)
        self._reader.join(timeout)
        return code

    def stderr_text(self) -> str:
        """Everything the server wrote to stderr so far."""
        self._stderr_file.flush()
        self._stderr_file.seek(0)
        return self._stderr_file.read().decode("utf-8", errors="replace")

    # ----- JSON-RPC helpers -----

    def request(self, method: str, params: dict[str, Any] | None = None, timeout: float = 10.0):
        """Sends a request and returns the response frame (result or error) for its id."""
        self._next_id += 1
        frame: dict[str, Any] = {"jsonrpc": "2.0", "id": self._next_id, "method": method}
        if params is not None:
            frame["params"] = params
        self.send(frame)
        while True:
            message = self.recv(timeout)
            if message is None:
                raise AssertionError(f"the server closed stdout before answering {method}")
            if isinstance(message, dict) and message.get("id") == self._next_id:
                return message

    def notify(self, method: str, params: dict[str, Any] | None = None) -> None:
        frame: dict[str, Any] = {"jsonrpc": "2.0", "method": method}
        if params is not None:
            frame["params"] = params
        self.send(frame)

    def initialize(self, version: str = "2025-11-25") -> dict[str, Any]:
        """Runs the handshake; returns the initialize result."""
        response = self.request(
            "initialize",
            {
                "protocolVersion": version,
                "capabilities": {},
                "clientInfo": {"name": "pytest", "version": "1"},
            },
        )
        assert "result" in response, response
        self.notify("notifications/initialized")
        return response["result"]

    def call(self, name: str, arguments: dict[str, Any] | None = None, timeout: float = 10.0):
        """Calls a tool; returns the result object (fails on a JSON-RPC error)."""
        response = self.request(
            "tools/call", {"name": name, "arguments": arguments or {}}, timeout=timeout
        )
        assert "result" in response, response
        return response["result"]

    # ----- teardown -----

    def kill(self) -> None:
        if self.proc.poll() is None:
            self.proc.kill()
        try:
            self.proc.wait(10)
        except subprocess.TimeoutExpired:
            pass
        self.close_stdin()
        self._reader.join(5)
        if self.proc.stdout is not None:
            self.proc.stdout.close()
        self._stderr_file.close()


@pytest.fixture
def spawn() -> Iterator[Any]:
    """``spawn(*args, env=None, cwd=None)`` starts ``sys.executable *args`` as a server.

    ``args`` is a server script path or e.g. ``"-m", "mcpline", "demo", folder``. Every process
    started is killed (if still running) and its pipes closed at teardown. Servers start as a
    host starts them: without ``PYTHONUNBUFFERED`` (dropped from the default environment and
    from ``env``), so Python's stdout is block-buffered unless mcpline changes that.
    """
    yield from _spawner(())


# Run by `sh -c` with the server's command line after it: a tmpfs over /proc, then the server.
_HIDE_PROC = 'mount -t tmpfs none /proc && exec "$0" "$@"'
_UNSHARE = ("unshare", "--user", "--map-root-user", "--mount", "sh", "-c", _HIDE_PROC)


@pytest.fixture
def spawn_without_proc() -> Iterator[Any]:
    """``spawn``, with ``/proc`` hidden from the server: a tmpfs mounted over it in mount and
    user namespaces of the server's own (``unshare``). mcpline then cannot open a capture file
    anew through ``/proc/self/fd`` and works as it does on macOS. Skips where the system allows
    no such namespaces (not Linux, or unprivileged user namespaces turned off)."""
    if not sys.platform.startswith("linux"):
        pytest.skip("hiding /proc takes Linux namespaces")
    probe = subprocess.run([*_UNSHARE, "true"], capture_output=True, check=False)
    if probe.returncode != 0:
        pytest.skip(f"unshare cannot hide /proc here: {probe.stderr.decode(errors='replace')}")
    yield from _spawner(_UNSHARE)


def _spawner(prefix: tuple[str, ...]) -> Iterator[Any]:
    started: list[ServerProcess] = []

    def start(
        *args: str | os.PathLike[str], env: dict[str, str] | None = None, cwd: str | None = None
    ) -> ServerProcess:
        argv = [*prefix, sys.executable, *map(str, args)]
        process = ServerProcess(argv, env=host_environ(env), cwd=cwd)
        started.append(process)
        return process

    yield start
    for process in started:
        process.kill()


def run_cli(*args: str, timeout: float = 60) -> subprocess.CompletedProcess[str]:
    """``python -m mcpline ARGS`` from the repository root, stdin empty, output captured, and
    (like the servers it may start) without ``PYTHONUNBUFFERED``, as a host runs it."""
    return subprocess.run(
        [sys.executable, "-m", "mcpline", *args],
        capture_output=True,
        text=True,
        timeout=timeout,
        stdin=subprocess.DEVNULL,
        cwd=TESTS_DIR.parent,
        env=host_environ(),
    )


def tools_by_name(tools: list[dict[str, Any]]) -> dict[str, dict[str, Any]]:
    """``tools/list`` descriptors keyed by name."""
    return {tool["name"]: tool for tool in tools}


def call_frame(request_id: Any, name: str, arguments: dict[str, Any]) -> bytes:
    """One `tools/call` request as a newline-terminated frame."""
    message = {
        "jsonrpc": "2.0",
        "id": request_id,
        "method": "tools/call",
        "params": {"name": name, "arguments": arguments},
    }
    return json.dumps(message).encode() + b"\n"


def events(path: Path) -> list[str]:
    """The lines a test server appended to its side-effect file so far."""
    return path.read_text(encoding="utf-8").splitlines() if path.exists() else []


def wait_for_event(path: Path, event: str, timeout: float = 10.0) -> None:
    """Waits until a test server recorded `event`."""
    deadline = time.monotonic() + timeout
    while event not in events(path):
        assert time.monotonic() < deadline, f"{event!r} not in {events(path)} after {timeout} s"
        time.sleep(0.02)


def pytest_report_header() -> str:
    """Names the mcpline the suite runs against (the installed wheel under `make test`)."""
    import mcpline._core

    return f"mcpline: {Path(mcpline._core.__file__).resolve().parent}"
