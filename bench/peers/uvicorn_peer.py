"""Runs an HTTP peer's ASGI app under uvicorn, the same way for every peer:

    python bench/peers/PEER.py PORT [--http h11|httptools] [--loop asyncio|uvloop]

127.0.0.1:PORT, uvicorn's log level at warning and its access log off (a logged request would be
measured too); uvicorn picks its HTTP parser and event loop itself (httptools and uvloop when
installed) unless `--http` or `--loop` says.
"""

import sys
from typing import Any

import uvicorn


def serve(app: Any, **options: Any) -> None:
    """Serves `app` on the port in argv[1] with the `--http`/`--loop` choices that follow it
    (and any further uvicorn `options`)."""
    port = int(sys.argv[1])
    extra = dict(zip(sys.argv[2::2], sys.argv[3::2], strict=True))
    uvicorn.run(
        app,
        host="127.0.0.1",
        port=port,
        log_level="warning",
        access_log=False,
        http=extra.get("--http", "auto"),
        loop=extra.get("--loop", "auto"),
        **options,
    )
