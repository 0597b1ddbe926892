"""The server the lifecycle tests (tests/test_lifecycle_*.py) drive over real pipes.

``python tests/servers/lifecycle_server.py [EOF_GRACE_SECONDS]`` serves stdio until end of input;
the optional argument sets ``eof_grace`` (default: the library's).

Tools that take a ``path`` append one line per event to that file ("started", "cancelled",
"raised Cancelled", "finished", ...), so that a test can see what ran and what the tool observed
even when no response is ever sent for the call.

A cancelled (or timed-out) sync tool raises ``mcpline.Cancelled``; the tools below that ignore
cancellation catch it and go on.

- ``sleep(seconds, path=None)``: ``time.sleep``, deaf to cancellation.
- ``busy(seconds, path=None)``: a pure-Python loop that holds the GIL for ``seconds``.
- ``note(path, text)``: appends ``text`` and answers it (a side effect that shows a call ran).
- ``watch_flag(path, seconds)``: polls ``ctx.cancelled``; returns early when it becomes true.
- ``check_loop(path, seconds)``: calls ``ctx.check_cancelled()`` in a loop.
- ``async_wait(path, seconds)``: ``await asyncio.sleep``; records ``asyncio.CancelledError``.
- ``chatter(path, seconds)``: sends a progress notification every 20 ms for ``seconds``, whether
  cancelled or not (the server, not the tool, must hold them back after a cancel).
- ``limited_async(path, seconds)`` / ``limited_check(path, seconds)``: ``timeout=0.5`` tools.
- ``say(text)``: prints ``text`` to stdout and stderr, then fails, so the output is attached.
"""

from __future__ import annotations

import asyncio
import sys
import time

from deaf import deaf_sleep
from mcpline import Cancelled, Context, McplineError, Server, ToolError

EOF_GRACE = float(sys.argv[1]) if len(sys.argv) > 1 else None
TICK = 0.01

if EOF_GRACE is None:
    server = Server("lifecycle", version="1.0.0")
else:
    server = Server("lifecycle", version="1.0.0", eof_grace=EOF_GRACE)


def _note(path: str, text: str) -> None:
    with open(path, "a", encoding="utf-8") as f:
        f.write(text + "\n")


@server.tool
def sleep(seconds: float, path: str | None = None) -> str:
    """Sleep (``time.sleep``), ignoring cancellation, then answer "slept"."""
    if path:
        _note(path, "started")
    deaf_sleep(seconds)
    if path:
        _note(path, "finished")
    return "slept"


@server.tool
def busy(seconds: float, path: str | None = None) -> str:
    """Spin in pure Python (holding the GIL) for the given seconds."""
    if path:
        _note(path, "started")
    end = time.monotonic() + seconds
    x = 0
    while time.monotonic() < end:
        x += 1
    if path:
        _note(path, "finished")
    return f"busy {x > 0}"


@server.tool
def note(path: str, text: str) -> str:
    """Append a line to a file and answer it."""
    _note(path, text)
    return text


@server.tool
def watch_flag(path: str, seconds: float, ctx: Context) -> str:
    """Poll ctx.cancelled for up to the given seconds; stop early once it is true."""
    _note(path, "started")
    deadline = time.monotonic() + seconds
    try:
        while time.monotonic() < deadline:
            if ctx.cancelled:
                _note(path, "cancelled")
                return "saw the cancellation"
            time.sleep(TICK)
    except Cancelled:  # interrupted before it looked again
        _note(path, "cancelled")
        raise
    _note(path, "finished")
    return "finished"


@server.tool
def check_loop(path: str, seconds: float, ctx: Context) -> str:
    """Call ctx.check_cancelled() in a loop for up to the given seconds."""
    _note(path, "started")
    deadline = time.monotonic() + seconds
    try:
        while time.monotonic() < deadline:
            ctx.check_cancelled()
            time.sleep(TICK)
    except McplineError as e:
        _note(path, f"raised {type(e).__name__}")
        raise
    _note(path, "finished")
    return "finished"


@server.tool
async def async_wait(path: str, seconds: float) -> str:
    """Await asyncio.sleep for the given seconds."""
    _note(path, "started")
    try:
        await asyncio.sleep(seconds)
    except asyncio.CancelledError:
        _note(path, "cancelled")
        raise
    _note(path, "finished")
    return "finished"


@server.tool
def chatter(path: str, seconds: float, ctx: Context) -> str:
    """Report progress every 20 ms for the given seconds, cancelled or not."""
    _note(path, "started")
    deadline = time.monotonic() + seconds
    step = 0
    seen = False
    while time.monotonic() < deadline:
        step += 1
        ctx.progress(step, message=f"step {step}")
        if ctx.cancelled and not seen:
            seen = True
            _note(path, "cancelled")
        deaf_sleep(0.02)
    _note(path, "finished")
    return f"{step} steps"


@server.tool(timeout=0.5)
async def limited_async(path: str, seconds: float = 30.0) -> str:
    """Await asyncio.sleep (30 s by default) under a 0.5 s time limit."""
    _note(path, "started")
    try:
        await asyncio.sleep(seconds)
    except asyncio.CancelledError:
        _note(path, "cancelled")
        raise
    _note(path, "finished")
    return "finished"


@server.tool(timeout=0.5)
def limited_check(path: str, ctx: Context, seconds: float = 30.0) -> str:
    """Loop on ctx.check_cancelled() (30 s by default) under a 0.5 s time limit."""
    _note(path, "started")
    deadline = time.monotonic() + seconds
    try:
        while time.monotonic() < deadline:
            ctx.check_cancelled()
            time.sleep(TICK)
    except McplineError as e:
        _note(path, f"raised {type(e).__name__}")
        raise
    _note(path, "finished")
    return "finished"


@server.tool
def add(a: int, b: int) -> int:
    """Add two integers."""
    return a + b


@server.tool
def say(text: str) -> str:
    """Print ``text`` to stdout and to stderr, then fail."""
    print(text)
    print(text, file=sys.stderr)
    raise ToolError(f"said {text}")


if __name__ == "__main__":
    server.run()
