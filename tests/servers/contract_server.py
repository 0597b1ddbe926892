"""A server whose tools exercise the tool contract: results against their declared types,
parameter metadata and rich types, time limits and cancellation of sync tools.

``python tests/servers/contract_server.py``
"""

from __future__ import annotations

import asyncio
import ctypes
import dataclasses
import datetime
import subprocess
import sys
import time
from collections.abc import Callable

from mcpline import Server

server = Server("contract", version="1.0.0")


@dataclasses.dataclass
class Point:
    x: int
    y: int


@server.tool
def find(name: str) -> int | None:
    """The number of a known name, or None."""
    return {"one": 1, "two": 2}.get(name)


@server.tool
def wrong_int() -> int:
    """Declares an int and returns a string."""
    return "x"  # type: ignore[return-value]


@server.tool
def wrong_list() -> list[int]:
    """Declares a list of ints and returns a dict."""
    return {"a": 1}  # type: ignore[return-value]


@server.tool
def wrong_point() -> Point:
    """Declares a Point and returns None."""
    return None  # type: ignore[return-value]


@server.tool
def bad_item() -> list[int]:
    """One item of the list is not an int."""
    return [1, 2, "three"]  # type: ignore[list-item]


@server.tool
def word_or_number(word: bool) -> int | str:
    """A str where a union with str is declared."""
    return "hi" if word else 7


@server.tool(strict=False)
def unchecked() -> int:
    """Not strict: the result goes out unchecked."""
    return "x"  # type: ignore[return-value]


def _guarded(marker: str, wait: Callable[[], object]) -> str:
    """Runs ``wait``; ``marker`` records how it ended (the ``finally`` runs either way)."""
    how = "finished"
    try:
        wait()
    except BaseException as exc:
        how = f"raised {type(exc).__name__}"
        raise
    finally:
        with open(marker, "w", encoding="utf-8") as f:
            f.write(how)
    return "rested"


@server.tool(timeout=0.5)
def sleeps(marker: str, seconds: float = 30) -> str:
    """time.sleep past its limit."""
    return _guarded(marker, lambda: time.sleep(seconds))


@server.tool(timeout=0.5)
def spins(marker: str) -> str:
    """A pure-Python loop past its limit."""

    def spin() -> None:
        while True:
            pass

    return _guarded(marker, spin)


@server.tool(timeout=0.5)
def waits_for_child(marker: str) -> str:
    """subprocess.wait on a child that outlives the limit."""

    def wait() -> None:
        child = subprocess.Popen([sys.executable, "-c", "import time; time.sleep(30)"])
        try:
            child.wait()
        finally:
            child.kill()
            child.wait()

    return _guarded(marker, wait)


@server.tool(timeout=0.5)
def stuck_in_c(seconds: float) -> str:
    """A C call that holds the GIL (libc sleep through ctypes.PyDLL) past its limit."""
    ctypes.PyDLL(None).sleep(int(seconds))
    return "woke"


@server.tool
def naps(marker: str, seconds: float = 30) -> str:
    """time.sleep without a limit (for cancellation and end of input)."""
    return _guarded(marker, lambda: time.sleep(seconds))


def _fail(what: object) -> str:
    raise ValueError(f"no {what}")


@server.tool
def raises_after_conversion(day: datetime.date) -> str:
    """Raises from a helper; its argument was converted by mcpline first."""
    return _fail(day)


@server.tool
async def raises_in_a_task() -> str:
    """Raises from a helper inside an asyncio task."""
    await asyncio.sleep(0)
    return _fail("task")


if __name__ == "__main__":
    server.run()
