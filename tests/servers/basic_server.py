"""A small server for the end-to-end and CLI tests: ``python tests/servers/basic_server.py``.

Tools: ``add`` (integers), ``echo`` (text), ``fail`` (a ToolError), ``crash`` (an unexpected
exception), ``printer`` (writes markers to stdout and stderr, Python-level and fd-level, then
answers "ok"), ``prompt`` (reads a line from stdin), ``slow`` (sleeps) and ``whoami`` (what the
context says about the call).
"""

import os
import sys
import time
from typing import Any

from mcpline import Context, Server, ToolError

server = Server("basic", version="1.0.0", instructions="A server for tests.")


@server.tool
def add(a: int, b: int) -> int:
    """Add two integers."""
    return a + b


@server.tool(read_only=True)
def echo(text: str) -> str:
    """Return the text unchanged."""
    return text


@server.tool
def fail(message: str) -> str:
    """Fail with the given message as a tool error."""
    raise ToolError(message)


@server.tool
def crash() -> str:
    """Raise an unexpected exception."""
    raise RuntimeError("kaboom")


@server.tool
def printer() -> str:
    """Write markers to stdout and stderr through Python and through the descriptors."""
    print("PRINTED-TO-STDOUT")
    sys.stdout.flush()
    os.write(1, b"FD1-WRITE\n")
    print("PRINTED-TO-STDERR", file=sys.stderr)
    sys.stderr.flush()
    os.write(2, b"FD2-WRITE\n")
    return "ok"


@server.tool
def prompt() -> str:
    """Read one line from stdin (a server's stdin is not the tool's to read)."""
    return repr(sys.stdin.readline())


@server.tool(read_only=True)
def slow(seconds: float) -> str:
    """Sleep for the given number of seconds, then answer "done"."""
    time.sleep(seconds)
    return "done"


@server.tool(read_only=True)
def whoami(ctx: Context) -> dict[str, Any]:
    """What the context says about this call."""
    return {
        "request_id": ctx.request_id,
        "protocol_version": ctx.protocol_version,
        "client_info": ctx.client_info,
    }


if __name__ == "__main__":
    server.run()
