"""Tools that fail in the ways a long-lived server meets: ``python tests/servers/fault_server.py``.

Each tool's documented outcome is in tests/test_robustness_faults.py.
"""

from __future__ import annotations

import sys
import threading
import time
from typing import Any

from mcpline import Server

server = Server("faults", version="1.0.0")


@server.tool
def leave(code: int) -> str:
    """Calls sys.exit(code)."""
    sys.exit(code)


@server.tool
def interrupt() -> str:
    """Raises KeyboardInterrupt, as a SIGINT arriving while it runs would."""
    raise KeyboardInterrupt


@server.tool
def out_of_memory() -> str:
    """Raises MemoryError."""
    raise MemoryError


@server.tool
def recurse(depth: int = 0) -> int:
    """Recurses until RecursionError."""
    return recurse(depth + 1)


@server.tool
def not_a_number(which: str) -> dict[str, Any]:
    """A float JSON cannot hold."""
    return {"value": {"nan": float("nan"), "inf": float("inf")}[which]}


@server.tool
def unserialisable() -> dict[str, Any]:
    """An object that is not JSON data."""
    return {"lock": threading.Lock()}


@server.tool
def huge(mib: int) -> str:
    """A string of ``mib`` MiB."""
    return "x" * (mib * 1024 * 1024)


@server.tool
def deep(depth: int) -> Any:
    """A list nested ``depth`` levels deep."""
    value: Any = []
    for _ in range(depth):
        value = [value]
    return value


@server.tool
def chatter_thread() -> str:
    """Leaves a thread printing a line every 10 ms for a second."""

    def chatter() -> None:
        for n in range(100):
            print(f"chatter {n}", flush=True)
            time.sleep(0.01)

    threading.Thread(target=chatter, daemon=True).start()
    return "started"


@server.tool
def add(a: int, b: int) -> int:
    """Adds."""
    return a + b


if __name__ == "__main__":
    server.run()
