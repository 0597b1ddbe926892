"""The ``mcpline`` command: serve a server, call or list its tools (or those of any stdio MCP
server), check a server, print a host's configuration, or run the demo.

TARGET is ``FILE.py[:attr]`` or ``package.module[:attr]`` (the current folder is on the import
path). Exit status: 0 on success, 1 when a tool reported an error or a check failed, 2 when the
command cannot run (a bad target, bad arguments, a server that does not answer).
"""

from __future__ import annotations

import argparse
import json
import shlex
import sys
from pathlib import Path
from typing import Any

from mcpline import _core

HINT = """\
mcpline: serving MCP on stdin/stdout (newline-delimited JSON-RPC). An MCP host starts this
command and talks to it: `mcpline config claude|vscode|cursor|generic TARGET` prints the
configuration to paste into a host. To try it by hand, paste a line such as
{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-11-25","capabilities":{},"clientInfo":{"name":"me","version":"0"}}}
and end with Ctrl-D.
"""


class UsageError(Exception):
    """The command cannot run as given (one line for the user; exit status 2)."""


def main(argv: list[str] | None = None) -> int:
    parser = _parser()
    ns = parser.parse_args(argv)
    try:
        return int(ns.run(ns))
    except UsageError as e:
        sys.stderr.write(f"mcpline: {e}\n")
        return 2
    except Exception as e:
        from mcpline._targets import TargetError

        if isinstance(e, TargetError) and not ns.debug:
            sys.stderr.write(f"mcpline: {e}\n")
            if e.__cause__ is not None:
                sys.stderr.write("mcpline: run with --debug for the traceback\n")
            return 2
        raise


def _parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(prog="mcpline", description=__doc__)
    parser.add_argument("--version", action="version", version=f"mcpline {_core.__version__}")
    parser.add_argument("--debug", action="store_true", help="show tracebacks of load errors")
    sub = parser.add_subparsers(dest="command", required=True, metavar="COMMAND")
    # Also accepted after the subcommand (its absence there must not undo it before).
    debug = argparse.ArgumentParser(add_help=False)
    debug.add_argument(
        "--debug",
        action="store_true",
        default=argparse.SUPPRESS,
        help="show tracebacks of load errors",
    )

    serve = sub.add_parser(
        "serve",
        parents=[debug],
        help="serve TARGET's server on stdin/stdout (or over HTTP with --http)",
    )
    serve.add_argument("target", metavar="TARGET", help="FILE.py[:attr] or package.module[:attr]")
    serve.add_argument("--allow", action="append", metavar="TOOL", help="expose only this tool")
    http = serve.add_argument_group("Streamable HTTP (needs uvicorn: pip install 'mcpline[http]')")
    http.add_argument(
        "--http", metavar="[HOST:]PORT", help="serve HTTP on HOST (default 127.0.0.1) and PORT"
    )
    http.add_argument("--path", default="/mcp", help="the MCP endpoint's path (default /mcp)")
    http.add_argument(
        "--workers", type=int, default=1, help="worker processes (2026-07-28 scales out)"
    )
    http.add_argument(
        "--allow-host", action="append", metavar="NAME", help="a Host name to serve under"
    )
    http.add_argument(
        "--allow-origin", action="append", metavar="ORIGIN", help="a browser origin to allow"
    )
    serve.set_defaults(run=_serve)

    call = sub.add_parser(
        "call",
        parents=[debug],
        help="call one tool once and print its result",
        description="Call one tool and print its result: text as text, structured content as "
        "JSON. Arguments are one JSON object or key=value pairs (a value is JSON when it "
        "parses, a string otherwise). Exit status 1 when the tool reports an error.",
    )
    call.add_argument("words", nargs="+", metavar="[TARGET] TOOL [ARGS]")
    call.add_argument("--cmd", help='any stdio MCP server\'s command line, e.g. "node server.js"')
    call.add_argument("--json", action="store_true", help="print the raw JSON-RPC result")
    call.set_defaults(run=_call)

    tools = sub.add_parser(
        "tools", parents=[debug], help="list the tools of TARGET or of --cmd's server"
    )
    tools.add_argument("target", nargs="?", metavar="TARGET")
    tools.add_argument("--cmd", help="any stdio MCP server's command line")
    tools.add_argument("--json", action="store_true", help="print the raw tools/list result")
    tools.set_defaults(run=_tools)

    doctor = sub.add_parser(
        "doctor",
        help="check any stdio MCP server: mcpline doctor -- CMD ARGS...",
        description="Start CMD and check it as a host would (no tool is called): the "
        "initialize answer, stdout purity, malformed and unknown requests, ping, tools/list, "
        "server/discover, exit after end of input. Exit status 0 when all pass.",
    )
    doctor.add_argument("server_argv", nargs=argparse.REMAINDER, metavar="-- CMD ARGS")
    doctor.set_defaults(run=_doctor)

    config = sub.add_parser(
        "config", parents=[debug], help="print a host configuration that serves TARGET"
    )
    config.add_argument("host", choices=("claude", "vscode", "cursor", "generic"))
    config.add_argument("target", nargs="?", metavar="TARGET")
    config.add_argument("--demo", metavar="FOLDER", help="configure the demo over FOLDER instead")
    config.add_argument("--name", help="the server's name in the host (default: its own)")
    config.set_defaults(run=_config)

    demo = sub.add_parser("demo", help="serve the demo: read-only access to a folder")
    demo.add_argument("folder", nargs="?", default=".")
    demo.set_defaults(run=_demo)
    return parser


# -- serving ----------------------------------------------------------------------------------


def _serve(ns: argparse.Namespace) -> int:
    if ns.http is not None:
        from mcpline import _http_serve

        return _http_serve.serve(
            ns.target,
            ns.allow,
            ns.http,
            workers=ns.workers,
            path=ns.path,
            hosts=ns.allow_host,
            origins=ns.allow_origin,
        )
    from mcpline._targets import load_server

    server = load_server(ns.target)
    if ns.allow:
        unknown = sorted(set(ns.allow) - set(server.tool_names))
        if unknown:
            raise UsageError(
                f"--allow names unknown tools: {', '.join(unknown)} "
                f"(known: {', '.join(server.tool_names)})"
            )
        server._core = server._core.restricted(ns.allow)
    return _run(server)


def _demo(ns: argparse.Namespace) -> int:
    from mcpline.demo import build

    try:
        server = build(ns.folder)
    except NotADirectoryError as e:
        raise UsageError(str(e)) from None
    return _run(server)


def _run(server: Any) -> int:
    if sys.stdin.isatty():
        sys.stderr.write(HINT)
    server.run()
    return 0


# -- calling and listing ------------------------------------------------------------------------


def _call(ns: argparse.Namespace) -> int:
    words = list(ns.words)
    if ns.cmd is None:
        if len(words) < 2:
            raise UsageError("call needs TARGET and TOOL (or --cmd CMD and TOOL)")
        target = words.pop(0)
    tool, arguments = words[0], _arguments(words[1:])
    if ns.cmd is not None:
        result = _over_stdio(ns.cmd, "tools/call", {"name": tool, "arguments": arguments})
    else:
        result = _in_process(target, tool, arguments)
    return _print_result(result, raw=ns.json)


def _arguments(words: list[str]) -> dict[str, Any]:
    if len(words) == 1 and words[0].lstrip().startswith("{"):
        try:
            value = json.loads(words[0])
        except json.JSONDecodeError as e:
            raise UsageError(f"the arguments are not a JSON object: {e}") from None
        if not isinstance(value, dict):
            raise UsageError("the arguments must be a JSON object")
        return value
    out: dict[str, Any] = {}
    for word in words:
        key, eq, text = word.partition("=")
        if not eq or not key:
            raise UsageError(
                f"{word!r}: give arguments as key=value (or one JSON object such as '{{\"a\": 1}}')"
            )
        try:
            out[key] = json.loads(text)
        except json.JSONDecodeError:
            out[key] = text
    return out


def _in_process(target: str, tool: str, arguments: dict[str, Any]) -> dict[str, Any]:
    from mcpline._targets import load_server
    from mcpline.testing import Client, RpcError

    server = load_server(target)
    with Client(server) as client:
        try:
            return client.call_with(tool, arguments).raw
        except RpcError as e:
            raise UsageError(f"{e.message} (JSON-RPC error {e.code})") from None


def _over_stdio(cmd: str, method: str, params: dict[str, Any]) -> dict[str, Any]:
    from mcpline._stdio_client import ServerGone, StdioServer

    argv = shlex.split(cmd, posix=sys.platform != "win32")
    if not argv:
        raise UsageError("--cmd is empty")
    try:
        server = StdioServer(argv)
    except ServerGone as e:
        raise UsageError(str(e)) from None
    try:
        init = server.initialize()
        if "result" not in init:
            raise UsageError(f"the server refused initialize: {json.dumps(init)[:200]}")
        response = server.request(method, params, timeout=300)
    except ServerGone as e:
        raise UsageError(
            f"{e}; its stderr: {server.stderr.decode(errors='replace')[-500:]}"
        ) from None
    finally:
        server.close(2.0)
        server.kill()
    if "error" in response:
        error = response["error"]
        raise UsageError(f"{error.get('message')} (JSON-RPC error {error.get('code')})")
    result: dict[str, Any] = response.get("result", {})
    return result


def _print_result(result: dict[str, Any], *, raw: bool) -> int:
    if raw:
        _write(json.dumps(result, indent=2, ensure_ascii=False) + "\n")
    else:
        structured = result.get("structuredContent")
        for block in result.get("content", []):
            kind = block.get("type")
            if kind == "text":
                if structured is None or result.get("isError"):
                    _write(block.get("text", "") + "\n")
            elif kind in ("image", "audio"):
                size = len(block.get("data", "")) * 3 // 4
                _write(f"[{kind} {block.get('mimeType', '?')}, about {size} bytes]\n")
            elif kind == "resource_link":
                _write(f"[link {block.get('uri', '')}]\n")
            else:
                _write(json.dumps(block, indent=2, ensure_ascii=False) + "\n")
        if structured is not None and not result.get("isError"):
            _write(json.dumps(structured, indent=2, ensure_ascii=False) + "\n")
    if result.get("isError"):
        sys.stderr.write("mcpline: the tool reported an error (isError)\n")
        return 1
    return 0


def _write(text: str) -> None:
    try:
        sys.stdout.write(text)
    except UnicodeEncodeError:  # a stdout in a legacy code page (Windows pipes)
        sys.stdout.write(text.encode("ascii", "backslashreplace").decode("ascii"))


def _tools(ns: argparse.Namespace) -> int:
    if (ns.cmd is None) == (ns.target is None):
        raise UsageError("tools needs TARGET or --cmd CMD (one of them)")
    if ns.cmd is not None:
        listed = _over_stdio(ns.cmd, "tools/list", {})
    else:
        from mcpline._targets import load_server
        from mcpline.testing import Client

        with Client(load_server(ns.target)) as client:
            listed = {"tools": client.list_tools()}
    if ns.json:
        _write(json.dumps(listed, indent=2, ensure_ascii=False) + "\n")
        return 0
    for tool in listed.get("tools", []):
        _write(_describe_tool(tool))
    return 0


def _describe_tool(tool: dict[str, Any]) -> str:
    lines = [tool.get("name", "?")]
    description = (tool.get("description") or "").strip()
    if description:
        lines[0] += f" - {description.splitlines()[0]}"
    schema = tool.get("inputSchema") or {}
    required = set(schema.get("required", []))
    for name, prop in (schema.get("properties") or {}).items():
        line = f"    {name}: {_type_name(prop)}"
        if name in required:
            line += " (required)"
        elif "default" in prop:
            line += f" = {json.dumps(prop['default'])}"
        if prop.get("description"):
            line += f"  {prop['description']}"
        lines.append(line)
    return "\n".join(lines) + "\n"


def _type_name(schema: dict[str, Any]) -> str:
    if "enum" in schema:
        return " | ".join(json.dumps(v) for v in schema["enum"])
    if "anyOf" in schema:
        return " | ".join(_type_name(m) for m in schema["anyOf"])
    kind = schema.get("type", "any")
    if kind == "array" and isinstance(schema.get("items"), dict):
        return f"array of {_type_name(schema['items'])}"
    if "format" in schema:
        return f"{kind} ({schema['format']})"
    return str(kind)


# -- checking and configuring ------------------------------------------------------------------


def _doctor(ns: argparse.Namespace) -> int:
    from mcpline._doctor import doctor

    argv = list(ns.server_argv)
    if argv and argv[0] == "--":
        argv = argv[1:]
    if not argv:
        raise UsageError("doctor needs the server's command: mcpline doctor -- CMD ARGS...")
    return doctor(argv)


def _config(ns: argparse.Namespace) -> int:
    from mcpline._hostconfig import host_config
    from mcpline._targets import load_server

    if (ns.target is None) == (ns.demo is None):
        raise UsageError("config needs TARGET or --demo FOLDER (one of them)")
    if ns.demo is not None:
        if not Path(ns.demo).is_dir():
            raise UsageError(f"{ns.demo} is not a folder")
        name = ns.name or "mcpline-demo"
    else:
        name = ns.name or load_server(ns.target).name
    text, where = host_config(ns.host, ns.target, name, ns.demo)
    _write(text + "\n")
    sys.stderr.write(where + "\n")
    return 0
