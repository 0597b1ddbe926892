"""The official Python SDK (FastMCP / MCPServer) serving the same tools."""

import sys

try:
    from mcp.server.fastmcp import FastMCP as Server
except ImportError:  # mcp >= 2
    from mcp.server.mcpserver import MCPServer as Server

server = Server("bench")


@server.tool()
def add(a: int, b: int) -> int:
    """Add two integers."""
    return a + b


@server.tool()
def shout(text: str) -> str:
    """Write ten lines to stderr, then return the text."""
    for i in range(10):
        print(f"shout {i}: {text}", file=sys.stderr)
    return text


if __name__ == "__main__":
    server.run()
