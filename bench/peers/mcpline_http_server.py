"""mcpline serving mcpline_server.py's tools over Streamable HTTP at /mcp, under uvicorn.

    python bench/peers/mcpline_http_server.py PORT [--http h11|httptools] [--loop asyncio|uvloop]

The application `mcpline serve mcpline_server.py --http 127.0.0.1:PORT` builds (loopback
host, no extra origins, default sync workers), run with uvicorn's log level at warning and its
access log off: `mcpline serve` logs every request at info, which would be measured too.
uvicorn picks its HTTP parser and event loop itself (httptools and uvloop when installed)
unless `--http` or `--loop` says.
"""

import sys

import uvicorn
from mcpline._http_serve import app_options
from mcpline_server import server

if __name__ == "__main__":
    port = int(sys.argv[1])
    extra = dict(zip(sys.argv[2::2], sys.argv[3::2], strict=True))
    app = server.asgi_app(**app_options("127.0.0.1", None, None, "/mcp"))
    uvicorn.run(
        app,
        host="127.0.0.1",
        port=port,
        log_level="warning",
        access_log=False,
        lifespan="on",
        http=extra.get("--http", "auto"),
        loop=extra.get("--loop", "auto"),
    )
