"""The official SDK (MCPServer) serving sdk_server.py's tools over Streamable HTTP at /mcp, as
it comes: `streamable_http_app()` with its defaults (sessions for handshake-era clients, SSE
answers), which is what `server.run(transport="streamable-http")` serves.

    python bench/peers/sdk_http_default_server.py PORT [--http h11|httptools]
        [--loop asyncio|uvloop]

Log level warning for the SDK and uvicorn, access log off, as for sdk_http_server.py.
"""

import logging
import sys

import uvicorn
from sdk_server import server

if __name__ == "__main__":
    port = int(sys.argv[1])
    extra = dict(zip(sys.argv[2::2], sys.argv[3::2], strict=True))
    app = server.streamable_http_app(streamable_http_path="/mcp")
    logging.getLogger().setLevel(logging.WARNING)  # MCPServer configured INFO
    uvicorn.run(
        app,
        host="127.0.0.1",
        port=port,
        log_level="warning",
        access_log=False,
        http=extra.get("--http", "auto"),
        loop=extra.get("--loop", "auto"),
    )
