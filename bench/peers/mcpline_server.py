"""mcpline serving the same tool as the other peers."""

from mcpline import Server

server = Server("bench", version="1.0.0")


@server.tool
def add(a: int, b: int) -> int:
    """Add two integers."""
    return a + b


if __name__ == "__main__":
    server.run()
