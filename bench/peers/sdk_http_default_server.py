"""The official SDK (MCPServer) serving sdk_server.py's tools over Streamable HTTP at /mcp, as
it comes: `streamable_http_app()` with its defaults (sessions for handshake-era clients, SSE
answers), which is what `server.run(transport="streamable-http")` serves.

    python bench/peers/sdk_http_default_server.py PORT [--http h11|httptools]
        [--loop asyncio|uvloop]

Log level warning for the SDK and uvicorn, access log off, as for sdk_http_server.py.
"""

import logging

from sdk_server import server
from uvicorn_peer import serve

if __name__ == "__main__":
    logging.getLogger().setLevel(logging.WARNING)  # MCPServer configured INFO
    serve(server.streamable_http_app(streamable_http_path="/mcp"))
