"""The official SDK (MCPServer) serving sdk_server.py's tools over Streamable HTTP at /mcp.

    python bench/peers/sdk_http_server.py PORT [--http h11|httptools] [--loop asyncio|uvloop]

Its fastest configuration: `streamable_http_app(stateless_http=True, json_response=True)`, so
no session is kept for the handshake revisions and every answer is one `application/json`
body (2026-07-28 requests take the SDK's single-exchange entry either way; `json_response`
answers them in the request's own task instead of a sibling task behind an SSE decision).
Log level warning for the SDK and uvicorn, access log off.
"""

import logging

from sdk_server import server
from uvicorn_peer import serve

if __name__ == "__main__":
    logging.getLogger().setLevel(logging.WARNING)  # MCPServer configured INFO
    serve(
        server.streamable_http_app(
            streamable_http_path="/mcp", stateless_http=True, json_response=True
        )
    )
