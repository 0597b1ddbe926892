"""The tools a soak mixes: ``python bench/soak_server.py`` (driven by bench/soak.py).

Every tool takes the request's number ``n`` and puts it in what it returns, raises or prints,
so the driver can tell that each answer belongs to its own request and carries its own output.
"""

from __future__ import annotations

import asyncio
import sys
import time
from typing import TypedDict

from mcpline import Server

server = Server("soak", version="1.0.0")


class Summary(TypedDict):
    n: int
    even: bool
    digits: list[int]


@server.tool
def add(a: int, b: int) -> int:
    """Adds two integers: the quick call."""
    return a + b


@server.tool
def summary(n: int) -> Summary:
    """Structured data checked against its output schema."""
    return {"n": n, "even": n % 2 == 0, "digits": [int(d) for d in str(n)]}


@server.tool
def fail(n: int) -> int:
    """Raises: an error result, with the traceback attached and logged."""
    raise ValueError(f"soak failure {n}")


# output="result": what the call prints is attached to its (successful) result, so every
# printing call proves its capture holds its own lines and no neighbour's.
@server.tool(output="result")
def chatty(n: int) -> int:
    """Prints two lines to stdout and two to stderr."""
    print(f"out {n} a")
    print(f"err {n} a", file=sys.stderr)
    print(f"out {n} b")
    print(f"err {n} b", file=sys.stderr)
    return n


@server.tool
def nap(n: int, ms: float) -> int:
    """Sleeps ``ms`` milliseconds on the sync worker: a cancel interrupts the sleep."""
    time.sleep(ms / 1000)
    return n


@server.tool
async def async_nap(n: int, ms: float) -> int:
    """Sleeps ``ms`` milliseconds on the event loop: a cancel cancels the task."""
    await asyncio.sleep(ms / 1000)
    return n


if __name__ == "__main__":
    server.run()
