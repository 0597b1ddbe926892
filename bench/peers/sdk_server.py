"""The official Python SDK (FastMCP / MCPServer) serving the same tool."""

try:
    from mcp.server.fastmcp import FastMCP as Server
except ImportError:  # mcp >= 2
    from mcp.server.mcpserver import MCPServer as Server

server = Server("bench")


@server.tool()
def add(a: int, b: int) -> int:
    """Add two integers."""
    return a + b


if __name__ == "__main__":
    server.run()
