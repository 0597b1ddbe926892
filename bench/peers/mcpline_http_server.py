"""mcpline serving mcpline_server.py's tools over Streamable HTTP at /mcp, under uvicorn.

    python bench/peers/mcpline_http_server.py PORT [--http h11|httptools] [--loop asyncio|uvloop]

The application `mcpline serve mcpline_server.py --http 127.0.0.1:PORT` builds (loopback
host, no extra origins, default sync workers), run with uvicorn's log level at warning and its
access log off: `mcpline serve` logs every request at info, which would be measured too.
uvicorn picks its HTTP parser and event loop itself (httptools and uvloop when installed)
unless `--http` or `--loop` says.
"""

from mcpline._http_serve import app_options
from mcpline_server import server
from uvicorn_peer import serve

if __name__ == "__main__":
    serve(server.asgi_app(**app_options("127.0.0.1", None, None, "/mcp")), lifespan="on")
