"""The server the Streamable HTTP tests (tests/test_http_*.py) start with ``mcpline serve
--http`` or, as ``app``, under uvicorn directly.

- ``add(a, b)``; ``pid(wait)``: the answering process, after ``wait`` s (for ``--workers``).
- ``nap(seconds)`` (sync) and ``doze(seconds)`` (async): sleep, then answer.
- ``linger(path)`` (async): sleeps up to 30 s; appends "cancelled" to ``path`` when cancelled.
- ``chant(marker, lines)`` (sync, output="result"): prints ``lines`` lines of ``marker``
  with pauses, so that two calls' prints interleave in time.
- ``steps(n)``: reports ``n`` progress steps 20 ms apart, then answers.
- ``held()``: what the lifespan yielded.

The lifespan appends "entered" / "exited" to $MCPLINE_TEST_LIFESPAN_LOG when it is set.
``app`` is this server's ASGI application with a bearer-token check (token "s3cret").
"""

from __future__ import annotations

import asyncio
import contextlib
import os
import time
from collections.abc import Iterator

from mcpline import Context, Server


@contextlib.contextmanager
def lifespan(server: Server) -> Iterator[str]:
    log = os.environ.get("MCPLINE_TEST_LIFESPAN_LOG")
    if log:
        with open(log, "a", encoding="utf-8") as f:
            f.write("entered\n")
    try:
        yield "the held value"
    finally:
        if log:
            with open(log, "a", encoding="utf-8") as f:
                f.write("exited\n")


server = Server("http-test", version="1.0.0", lifespan=lifespan)


@server.tool
def add(a: int, b: int) -> int:
    """Add two integers."""
    return a + b


@server.tool
def pid(wait: float = 0.0) -> int:
    """The process answering (after ``wait`` seconds)."""
    time.sleep(wait)
    return os.getpid()


@server.tool
def nap(seconds: float) -> str:
    """Sleep (sync), then answer."""
    time.sleep(seconds)
    return f"napped {seconds}"


@server.tool
async def doze(seconds: float) -> str:
    """Sleep (async), then answer."""
    await asyncio.sleep(seconds)
    return f"dozed {seconds}"


@server.tool
async def linger(path: str) -> str:
    """Sleep up to 30 s; note a cancellation in ``path``."""
    try:
        await asyncio.sleep(30)
    except asyncio.CancelledError:
        with open(path, "a", encoding="utf-8") as f:
            f.write("cancelled\n")
        raise
    return "lingered"


@server.tool(output="result")
def chant(marker: str, lines: int) -> str:
    """Print ``lines`` lines of ``marker``, pausing between them."""
    for i in range(lines):
        print(f"{marker} {i}")
        time.sleep(0.01)
    return f"{marker} done"


@server.tool
def steps(ctx: Context, n: int) -> str:
    """Report ``n`` progress steps, 20 ms apart."""
    for i in range(n):
        ctx.progress(i + 1, n, f"step {i + 1}")
        time.sleep(0.02)
    return f"{n} steps"


@server.tool
def held(ctx: Context) -> str:
    """What the lifespan yielded."""
    return str(ctx.lifespan)


app = server.asgi_app(
    auth=lambda token: token == "s3cret",
    resource_metadata="https://auth.example.com/.well-known/oauth-protected-resource",
    max_body_bytes=64 * 1024,
)
