"""A server with a lifespan: ``lifespan_server.py MODE EVENTS``.

MODE is ``sync`` (a ``contextlib.contextmanager``), ``async`` (an ``asynccontextmanager`` whose
value belongs to the tools' event loop), ``failing`` (raises on entry) or ``noisy`` (prints to
stdout and from a child process while it enters and exits). The lifespan appends "entered" and
"exited" to the file EVENTS; the tools append "call" when they run (``hang`` then sleeps
30 s, deaf to cancellation).
"""

import asyncio
import contextlib
import os
import sys

from deaf import deaf_sleep
from mcpline import Context, Server

MODE, EVENTS = sys.argv[1], sys.argv[2]


def note(text: str) -> None:
    with open(EVENTS, "a", encoding="utf-8") as f:
        f.write(text + "\n")


@contextlib.contextmanager
def sync_lifespan(server: Server):
    note("entered")
    try:
        yield {"db": f"connection of {server.name}"}
    finally:
        note("exited")


@contextlib.asynccontextmanager
async def async_lifespan(server: Server):
    queue: asyncio.Queue[str] = asyncio.Queue()  # bound to the loop that runs async tools
    await queue.put("from the lifespan")
    note("entered")
    try:
        yield queue
    finally:
        note("exited")


@contextlib.contextmanager
def failing_lifespan(server: Server):
    raise RuntimeError("no database at db.example:5432")
    yield


@contextlib.contextmanager
def noisy_lifespan(server: Server):
    print("connecting")
    os.system("echo child connecting")
    note("entered")
    yield "noisy"
    print("disconnecting")
    note("exited")


LIFESPANS = {
    "sync": sync_lifespan,
    "async": async_lifespan,
    "failing": failing_lifespan,
    "noisy": noisy_lifespan,
}
server = Server("lifespan", version="1.0.0", lifespan=LIFESPANS[MODE])


@server.tool
def state(ctx: Context) -> str:
    """What the lifespan yielded, as text."""
    note("call")
    return repr(ctx.lifespan)


@server.tool
async def take(ctx: Context) -> str:
    """Takes an item from the lifespan's queue (the async lifespan only)."""
    note("call")
    return await asyncio.wait_for(ctx.lifespan.get(), 5)


@server.tool
def hang() -> str:
    """Sleeps 30 s whatever happens."""
    note("call")
    deaf_sleep(30)
    return "woke"


if __name__ == "__main__":
    server.run()
