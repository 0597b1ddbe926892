"""A server whose tools raise, exit or close fds mid-call: ``capture_raise_server.py``.

Server default ``output="result"``: every call's output is attached to its result.

- ``boom``: prints (left in sys.stdout's buffer), writes to fd 2, raises RuntimeError.
- ``bail``: prints, then ``sys.exit(3)``.
- ``close_and_raise``: closes fds 1 and 2, then raises.
- ``chatty(marker)``: ``print(marker)`` (buffered) and ``os.write(2, ...)``; answers "ok".
- ``live(marker)`` (``output="off"``): writes to sys.stderr and fd 2 uncaptured.
"""

import os
import sys

from mcpline import Server

server = Server("capture-raise", version="1.0.0", output="result")


@server.tool
def boom() -> str:
    """Print, then raise."""
    print("BOOM-PRINT")
    os.write(2, b"BOOM-FD2\n")
    raise RuntimeError("boom")


@server.tool
def bail() -> str:
    """Print, then call sys.exit(3)."""
    print("BAIL-PRINT")
    sys.exit(3)


@server.tool
def close_and_raise() -> str:
    """Close the standard output and error descriptors, then raise."""
    sys.stdout.flush()
    os.close(1)
    os.close(2)
    raise OSError("closed fds 1 and 2")


@server.tool
def chatty(marker: str) -> str:
    """Print the marker through Python and write it to fd 2."""
    print(f"{marker}-print")
    os.write(2, f"{marker}-fd2\n".encode())
    return "ok"


@server.tool(output="off")
def live(marker: str) -> str:
    """Write the marker to stderr without capture (it goes live to the server's stderr)."""
    print(f"{marker}-live-stderr", file=sys.stderr, flush=True)
    os.write(2, f"{marker}-live-fd2\n".encode())
    return "ok"


if __name__ == "__main__":
    server.run()
