"""A server for counting descriptors across many captured calls: ``capture_fd_server.py``.

Each tool exercises a different path of the capture cell: ``noisy`` prints (a fresh capture
file, attached with ``output="result"``), ``quiet`` prints nothing (the empty file is kept as a
spare and reused), ``failing`` prints and raises a ToolError (attached to the error),
``noisy_async`` prints from an ``async def`` tool, ``child`` starts a child process that prints.
"""

import os
import subprocess
import sys

from mcpline import Server, ToolError

server = Server("capture-fd", version="1.0.0")


@server.tool(output="result")
def noisy(i: int) -> str:
    """Print through Python and through fd 2."""
    print(f"noisy {i}")
    os.write(2, f"noisy fd2 {i}\n".encode())
    return "ok"


@server.tool
def quiet() -> str:
    """Print nothing."""
    return "ok"


@server.tool
def failing(i: int) -> str:
    """Print, then fail with a tool error."""
    print(f"failing {i}", file=sys.stderr)
    raise ToolError(f"failed {i}")


@server.tool(output="result")
async def noisy_async(i: int) -> str:
    """Print from a coroutine."""
    print(f"async {i}")
    return "ok"


@server.tool(output="result")
def child(i: int) -> str:
    """Start a child process that prints."""
    subprocess.run(["sh", "-c", f"echo child {i}"], check=True)
    return "ok"


if __name__ == "__main__":
    server.run()
