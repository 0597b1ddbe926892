"""``mcpline doctor -- CMD ARGS...``: checks any stdio MCP server without calling a tool.

Each check prints one ``PASS``/``FAIL``/``SKIP`` line. Exit status: 0 when every check passed,
1 when one failed.
"""

from __future__ import annotations

import json
import sys
import time
from typing import Any

from mcpline import _core
from mcpline._stdio_client import ServerGone, StdioServer

__all__ = ["doctor"]

ANSWER_TIMEOUT = 10.0
EXIT_TIMEOUT = 5.0


class Report:
    def __init__(self) -> None:
        self.failed = 0

    def line(self, status: str, check: str, detail: str = "") -> None:
        if status == "FAIL":
            self.failed += 1
        sys.stdout.write(f"{status}  {check}" + (f": {detail}" if detail else "") + "\n")
        sys.stdout.flush()


def doctor(argv: list[str]) -> int:
    report = Report()
    try:
        server = StdioServer(argv)
    except ServerGone as e:
        report.line("FAIL", "start", str(e))
        return 1
    try:
        _run_checks(server, report)
    finally:
        server.kill()
    if report.failed:
        sys.stdout.write(f"{report.failed} check(s) failed\n")
        return 1
    sys.stdout.write("all checks passed\n")
    return 0


def _run_checks(server: StdioServer, report: Report) -> None:
    started = time.monotonic()
    try:
        init = server.initialize(ANSWER_TIMEOUT)
    except ServerGone as e:
        report.line("FAIL", "initialize", f"{e}; stderr: {_tail(server.stderr)}")
        return
    elapsed = (time.monotonic() - started) * 1000
    if "result" in init:
        version = init["result"].get("protocolVersion", "?")
        report.line("PASS", "initialize", f"answered in {elapsed:.0f} ms (revision {version})")
    else:
        report.line("FAIL", "initialize", f"answered with an error: {json.dumps(init)[:200]}")
        return

    _check(report, "malformed line", lambda: _malformed(server))
    _check(report, "unknown method", lambda: _unknown_method(server))
    _check(report, "ping", lambda: _ping(server))
    _check(report, "tools/list", lambda: _tools(server))
    _check(report, "server/discover", lambda: _discover(server))

    code = server.close(EXIT_TIMEOUT)
    if code is None:
        report.line("FAIL", "exit after end of input", f"still running {EXIT_TIMEOUT:g} s later")
    else:
        report.line("PASS", "exit after end of input", f"exit status {code}")
    stray = [line for line in server.lines if not _is_jsonrpc(line)]
    if stray:
        shown = stray[0][:80].decode("utf-8", "replace").rstrip()
        detail = f"{len(stray)} other line(s), the first: {shown!r}"
        report.line("FAIL", "stdout carries only JSON-RPC", detail)
    else:
        report.line("PASS", "stdout carries only JSON-RPC", f"{len(server.lines)} lines")


def _check(report: Report, name: str, run: Any) -> None:
    try:
        status, detail = run()
    except ServerGone as e:
        status, detail = "FAIL", str(e)
    report.line(status, name, detail)


def _malformed(server: StdioServer) -> tuple[str, str]:
    server.send_line(b'{"jsonrpc": "2.0", "id": "doctor-1", "method": ')
    response = server.response_to(None, ANSWER_TIMEOUT)
    code = response.get("error", {}).get("code")
    if code == -32700:
        return "PASS", "answered -32700 (parse error)"
    return "FAIL", f"expected error -32700, got {json.dumps(response)[:160]}"


def _unknown_method(server: StdioServer) -> tuple[str, str]:
    response = server.request("mcpline/doctor/no-such-method", {}, ANSWER_TIMEOUT)
    code = response.get("error", {}).get("code")
    if code == -32601:
        return "PASS", "answered -32601 (method not found)"
    return "FAIL", f"expected error -32601, got {json.dumps(response)[:160]}"


def _ping(server: StdioServer) -> tuple[str, str]:
    response = server.request("ping", None, ANSWER_TIMEOUT)
    if response.get("result") == {}:
        return "PASS", "answered {}"
    return "FAIL", f"expected an empty result, got {json.dumps(response)[:160]}"


def _tools(server: StdioServer) -> tuple[str, str]:
    response = server.request("tools/list", {}, ANSWER_TIMEOUT)
    if "result" not in response:
        return "FAIL", f"answered with an error: {json.dumps(response)[:160]}"
    tools = response["result"].get("tools")
    if not isinstance(tools, list):
        return "FAIL", "the result has no tools list"
    problems: list[str] = []
    for tool in tools:
        name = tool.get("name")
        if not isinstance(name, str) or not _core.is_valid_tool_name(name):
            problems.append(f"invalid name {name!r}")
            continue
        if not tool.get("description"):
            problems.append(f"{name}: no description")
        schema = tool.get("inputSchema")
        why = _core.schema_problem(schema) if isinstance(schema, dict) else "not an object"
        if why:
            problems.append(f"{name}: inputSchema {why}")
    if problems:
        return "FAIL", "; ".join(problems[:5]) + (" ..." if len(problems) > 5 else "")
    return "PASS", f"{len(tools)} tool(s), names, descriptions and input schemas valid"


def _discover(server: StdioServer) -> tuple[str, str]:
    envelope = {
        "io.modelcontextprotocol/protocolVersion": "2026-07-28",
        "io.modelcontextprotocol/clientCapabilities": {},
    }
    response = server.request("server/discover", {"_meta": envelope}, ANSWER_TIMEOUT)
    if response.get("error", {}).get("code") == -32601:
        return "SKIP", "not offered"
    result = response.get("result")
    if isinstance(result, dict) and result.get("supportedVersions"):
        return "PASS", "versions " + ", ".join(map(str, result["supportedVersions"]))
    return "FAIL", f"unexpected answer: {json.dumps(response)[:160]}"


def _is_jsonrpc(line: bytes) -> bool:
    try:
        frame = json.loads(line)
    except ValueError:
        return False
    frames = frame if isinstance(frame, list) else [frame]
    return all(isinstance(f, dict) and f.get("jsonrpc") == "2.0" for f in frames)


def _tail(data: bytearray) -> str:
    text = data.decode("utf-8", "replace").strip()
    return repr(text[-300:]) if text else "(nothing)"
