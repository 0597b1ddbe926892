"""The ``mcpline`` command: serve a module's server, call one tool, or run the demo."""

from __future__ import annotations

import argparse
import importlib
import importlib.util
import json
import sys
from pathlib import Path
from typing import Any

from mcpline._server import Server

HINT = """\
mcpline: serving MCP on stdin/stdout (newline-delimited JSON-RPC). An MCP host starts this
command and talks to it; to try it by hand, paste a line such as
{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-11-25","capabilities":{},"clientInfo":{"name":"me","version":"0"}}}
and end with Ctrl-D.
"""


def load_server(target: str) -> Server:
    """Loads ``FILE.py[:name]`` or ``package.module[:name]`` and returns its Server."""
    location, _, attr = target.partition(":")
    if location.endswith(".py") or Path(location).is_file():
        path = Path(location).resolve()
        spec = importlib.util.spec_from_file_location(path.stem, path)
        if spec is None or spec.loader is None:
            raise SystemExit(f"mcpline: cannot load {location}")
        module = importlib.util.module_from_spec(spec)
        sys.modules[path.stem] = module
        sys.path.insert(0, str(path.parent))
        spec.loader.exec_module(module)
    else:
        module = importlib.import_module(location)
    if attr:
        server = getattr(module, attr, None)
    else:
        found = [v for v in vars(module).values() if isinstance(v, Server)]
        if len(found) != 1:
            raise SystemExit(
                f"mcpline: {location} defines {len(found)} Server objects; "
                f"name one: {location}:NAME"
            )
        server = found[0]
    if not isinstance(server, Server):
        raise SystemExit(f"mcpline: {target} is not an mcpline.Server")
    return server


def _restrict(server: Server, allow: list[str] | None) -> Server:
    if not allow:
        return server
    unknown = sorted(set(allow) - set(server.tool_names))
    if unknown:
        raise SystemExit(
            f"mcpline: --allow names unknown tools: {', '.join(unknown)} "
            f"(known: {', '.join(server.tool_names)})"
        )
    server._core = server._core.restricted(allow)
    return server


def _serve(server: Server) -> int:
    if sys.stdin.isatty():
        sys.stderr.write(HINT)
    server.run()
    return 0


def _call(server: Server, tool: str, arguments: str) -> int:
    from mcpline.testing import Client, RpcError

    try:
        args: Any = json.loads(arguments)
    except json.JSONDecodeError as e:
        raise SystemExit(f"mcpline: the arguments are not JSON: {e}") from None
    with Client(server) as client:
        try:
            result = client.call_with(tool, args)
        except RpcError as e:
            sys.stderr.write(f"mcpline: {e.message} (JSON-RPC error {e.code})\n")
            return 2
    try:
        sys.stdout.write(json.dumps(result.raw, indent=2, ensure_ascii=False) + "\n")
    except UnicodeEncodeError:  # a stdout in a legacy code page (Windows pipes): escape instead
        sys.stdout.write(json.dumps(result.raw, indent=2) + "\n")
    return 1 if result.is_error else 0


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="mcpline", description=__doc__)
    sub = parser.add_subparsers(dest="command", required=True)
    serve = sub.add_parser("serve", help="serve the Server defined in FILE.py or a module")
    serve.add_argument("target", metavar="FILE_OR_MODULE[:server]")
    serve.add_argument("--allow", action="append", metavar="TOOL", help="expose only these tools")
    call = sub.add_parser("call", help="call one tool of a server once and print the result")
    call.add_argument("target", metavar="FILE_OR_MODULE[:server]")
    call.add_argument("tool")
    call.add_argument("arguments", nargs="?", default="{}", help="JSON object (default {})")
    demo = sub.add_parser("demo", help="serve the demo: read-only access to a folder")
    demo.add_argument("folder", nargs="?", default=".")
    ns = parser.parse_args(argv)
    if ns.command == "serve":
        return _serve(_restrict(load_server(ns.target), ns.allow))
    if ns.command == "call":
        return _call(load_server(ns.target), ns.tool, ns.arguments)
    from mcpline.demo import build

    return _serve(build(ns.folder))
