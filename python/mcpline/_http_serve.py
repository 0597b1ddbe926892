"""``mcpline serve TARGET --http [HOST:]PORT``: the target's ASGI application under uvicorn.

With ``--workers N`` uvicorn starts N processes; each imports the target again through
``app_from_env`` (the options travel in the environment), so every worker serves the same
tools. 2026-07-28 requests may go to any worker; a handshake-era session lives in the worker
that answered its ``initialize``.
"""

from __future__ import annotations

import ipaddress
import json
import os
from typing import Any

from mcpline._cli import UsageError

ENV = "MCPLINE_HTTP_APP"


def parse_address(text: str) -> tuple[str, int]:
    """``PORT``, ``HOST:PORT`` or ``[V6]:PORT``; the host defaults to 127.0.0.1."""
    host, sep, port = text.rpartition(":")
    if not sep:
        host, port = "127.0.0.1", text
    host = host.strip("[]") or "127.0.0.1"
    if not port.isdigit() or not 0 <= int(port) <= 65535:
        raise UsageError(f"--http takes [HOST:]PORT, e.g. 8000 or 127.0.0.1:8000, not {text!r}")
    return host, int(port)


def is_loopback(host: str) -> bool:
    if host == "localhost":
        return True
    try:
        return ipaddress.ip_address(host).is_loopback
    except ValueError:
        return False


def app_options(
    host: str, hosts: list[str] | None, origins: list[str] | None, path: str
) -> dict[str, Any]:
    """The ``asgi_app`` options for a server bound to ``host``: on a loopback address only
    local ``Host`` names are served (DNS-rebinding protection) unless ``--allow-host`` adds
    names; bound elsewhere, any ``Host`` unless ``--allow-host`` lists them."""
    allowed_hosts = hosts or (None if is_loopback(host) else ["*"])
    if hosts and is_loopback(host):
        allowed_hosts = [*hosts, "localhost", "127.0.0.1", "::1"]
    return {"path": path, "allowed_hosts": allowed_hosts, "allowed_origins": origins or []}


def build_app(target: str, allow: list[str] | None, options: dict[str, Any]) -> Any:
    from mcpline._targets import load_server

    server = load_server(target)
    if allow:
        unknown = sorted(set(allow) - set(server.tool_names))
        if unknown:
            raise UsageError(
                f"--allow names unknown tools: {', '.join(unknown)} "
                f"(known: {', '.join(server.tool_names)})"
            )
        server._core = server._core.restricted(allow)
    return server.asgi_app(**options)


def app_from_env() -> Any:
    """The application of each uvicorn worker process (``--workers N``)."""
    spec = json.loads(os.environ[ENV])
    return build_app(spec["target"], spec["allow"], spec["options"])


def serve(
    target: str,
    allow: list[str] | None,
    address: str,
    *,
    workers: int,
    path: str,
    hosts: list[str] | None,
    origins: list[str] | None,
) -> int:
    try:
        import uvicorn
    except ImportError:
        raise UsageError(
            "--http needs uvicorn: pip install 'mcpline[http]' (or serve "
            "server.asgi_app() with any ASGI server)"
        ) from None
    if workers < 1:
        raise UsageError("--workers must be at least 1")
    # uvicorn re-raises the SIGTERM it caught once its orderly shutdown is done: the server
    # then leaves with status 0, as over stdio, rather than dying of the signal.
    import signal
    import sys

    signal.signal(signal.SIGTERM, lambda signum, frame: sys.exit(0))
    host, port = parse_address(address)
    options = app_options(host, hosts, origins, path)
    if workers == 1:
        app = build_app(target, allow, options)
        uvicorn.run(app, host=host, port=port, log_level="info", lifespan="on")
        return 0
    build_app(target, allow, options)  # a bad target fails here, once, not in every worker
    os.environ[ENV] = json.dumps({"target": target, "allow": allow, "options": options})
    uvicorn.run(
        "mcpline._http_serve:app_from_env",
        factory=True,
        host=host,
        port=port,
        workers=workers,
        log_level="info",
        lifespan="on",
    )
    return 0
