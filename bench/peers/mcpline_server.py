"""mcpline serving the same tools as the other peers."""

import sys

from mcpline import Server

server = Server("bench", version="1.0.0")


@server.tool
def add(a: int, b: int) -> int:
    """Add two integers."""
    return a + b


@server.tool
def shout(text: str) -> str:
    """Write ten lines to stderr, then return the text."""
    for i in range(10):
        print(f"shout {i}: {text}", file=sys.stderr)
    return text


if __name__ == "__main__":
    server.run()
