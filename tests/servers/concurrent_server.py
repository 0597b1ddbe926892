"""A server whose ``async def`` tools overlap: ``concurrent_server.py [MAX_CONCURRENCY]``.

``meet`` returns only once ``n`` calls of it are inside at the same time (or fails after 5 s),
so a test can tell concurrent calls from calls run one after another without timing them.
``busy`` reports the most calls of it that ever ran at once. ``chatty`` prints through every
Python-level route (``print``, ``sys.stderr``, a ``logging`` handler set up at import) and
starts a child that prints, while another call of it runs. ``sync_step`` is a plain tool.
``leave_child`` starts a child that prints "late from TAG" 0.3 s later and returns at once,
printing nothing. ``log_after_child`` runs a child, then points fd 1 at its own log file and
prints a line there.
"""

import asyncio
import logging
import os
import sys
import threading
import time

from mcpline import Server, ToolError

logging.basicConfig(level=logging.INFO, format="log %(message)s")  # a StreamHandler on stderr
LOG = logging.getLogger("chatty")

MAX = int(sys.argv[1]) if len(sys.argv) > 1 else 16
server = Server("concurrent", version="1.0.0", max_concurrency=MAX)

_inside = 0
_peak = 0
_arrived: dict[int, asyncio.Event] = {}
_sync_inside = 0
_sync_peak = 0
_sync_lock = threading.Lock()


@server.tool
async def meet(n: int) -> int:
    """Wait until `n` calls of this tool are running together; return how many were."""
    global _inside
    _inside += 1
    event = _arrived.setdefault(n, asyncio.Event())
    if _inside >= n:
        event.set()
    try:
        await asyncio.wait_for(event.wait(), 5)
    except asyncio.TimeoutError:
        raise ToolError(f"only {_inside} of {n} calls ran together") from None
    finally:
        _inside -= 1
    return n


@server.tool
async def busy(seconds: float) -> int:
    """Sleep; return the most calls of this tool that have run at once so far."""
    global _inside, _peak
    _inside += 1
    _peak = max(_peak, _inside)
    try:
        await asyncio.sleep(seconds)
    finally:
        _inside -= 1
    return _peak


@server.tool
async def hang() -> str:
    """Wait until cancelled."""
    await asyncio.Event().wait()
    return "never"


@server.tool
async def leave_child(tag: str) -> str:
    """Start a child that prints after this call ended; print nothing."""
    script = "import sys, time; time.sleep(0.3); print('late from', sys.argv[1], flush=True)"
    await asyncio.create_subprocess_exec(sys.executable, "-c", script, tag)
    return "started"


@server.tool(output="result")
async def log_after_child(path: str) -> str:
    """Run a child, then print a line with fd 1 pointed at the tool's own log."""
    process = await asyncio.create_subprocess_exec(sys.executable, "-c", "pass")
    await process.wait()
    log = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_APPEND, 0o600)
    saved = os.dup(1)
    os.dup2(log, 1)
    os.close(log)
    try:
        print("to the tool's log", flush=True)
    finally:
        os.dup2(saved, 1)
        os.close(saved)
    await asyncio.sleep(0.1)
    return "done"


@server.tool(output="result")
async def chatty(tag: str, pause: float = 0.3) -> str:
    """Print our own lines through every Python route, and let a child print, while paused."""
    print(f"print {tag}")
    print(f"stderr {tag}", file=sys.stderr)
    LOG.info("logging %s", tag)
    await asyncio.sleep(pause)
    process = await asyncio.create_subprocess_exec(sys.executable, "-c", f"print('child {tag}')")
    await process.wait()
    await asyncio.sleep(pause)
    print(f"done {tag}")
    return tag


@server.tool(output="result")
async def failing_async(tag: str) -> str:
    """Print, then raise: the traceback is the call's own."""
    print(f"before {tag}")
    await asyncio.sleep(0.2)
    raise ValueError(f"broken {tag}")


@server.tool(output="result")
def sync_step(tag: str, seconds: float = 0.05) -> int:
    """A plain tool: print, sleep, and report the most plain calls that ran at once."""
    global _sync_inside, _sync_peak
    with _sync_lock:
        _sync_inside += 1
        _sync_peak = max(_sync_peak, _sync_inside)
    print(f"sync {tag}")
    time.sleep(seconds)
    os.write(2, f"sync fd {tag}\n".encode())
    with _sync_lock:
        _sync_inside -= 1
    return _sync_peak


if __name__ == "__main__":
    server.run()
