"""A server with its limits set from the command line: ``limits_server.py [NAME=INT ...]``.

Each ``NAME=INT`` is passed to ``Server`` as a keyword (``max_line_bytes=1024``,
``queue_capacity=4``); ``sleepy`` is a plain tool that takes a while, ``add`` a quick one.
"""

import sys
import time

from mcpline import Server

limits = {name: int(value) for name, value in (arg.split("=", 1) for arg in sys.argv[1:])}
server = Server("limits", version="1.0.0", **limits)


@server.tool
def add(a: int, b: int) -> int:
    """Add two integers."""
    return a + b


@server.tool
def sleepy(ms: int) -> int:
    """Sleep ``ms`` milliseconds; return them."""
    time.sleep(ms / 1000)
    return ms


if __name__ == "__main__":
    server.run()
