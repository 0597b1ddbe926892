"""A server whose tools exercise the tool contract: results against their declared types,
parameter metadata and rich types, time limits and cancellation of sync tools.

``python tests/servers/contract_server.py``
"""

from __future__ import annotations

import dataclasses
import time

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


@server.tool
def nap(seconds: float) -> str:
    """Sleeps, then answers."""
    time.sleep(seconds)
    return "rested"


if __name__ == "__main__":
    server.run()
