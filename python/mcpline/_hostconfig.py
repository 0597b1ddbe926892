"""``mcpline config HOST TARGET``: a ready-to-paste host configuration that serves TARGET.

The command is this interpreter (an absolute path, so the host finds the same environment)
running ``-m mcpline serve``; a file target is given by its absolute path, a module target with
the current folder as ``PYTHONPATH``.
"""

from __future__ import annotations

import json
import os
import sys
from pathlib import Path
from typing import Any

__all__ = ["HOSTS", "host_config"]

HOSTS = ("claude", "vscode", "cursor", "generic")

_WHERE = {
    "claude": (
        "Claude Desktop reads claude_desktop_config.json (Settings > Developer > Edit Config):\n"
        "  macOS:   ~/Library/Application Support/Claude/claude_desktop_config.json\n"
        "  Windows: %APPDATA%\\Claude\\claude_desktop_config.json\n"
        'Merge the entry into its "mcpServers" object and restart Claude Desktop.'
    ),
    "vscode": (
        "VS Code reads .vscode/mcp.json in the workspace (or the user-level mcp.json from the\n"
        "command 'MCP: Open User Configuration'), on every OS. Merge the entry into \"servers\"."
    ),
    "cursor": (
        "Cursor reads .cursor/mcp.json in the project, or ~/.cursor/mcp.json for every project\n"
        '(%USERPROFILE%\\.cursor\\mcp.json on Windows). Merge the entry into "mcpServers".'
    ),
    "generic": ("Any MCP host that starts stdio servers: run this command, with this environment."),
}


def host_config(
    host: str, target: str | None, name: str, demo: str | None = None
) -> tuple[str, str]:
    """The configuration text for ``host`` (serving ``target``, or the demo over the folder
    ``demo``) and where it goes."""
    env: dict[str, str] = {}
    if demo is not None:
        command, args = sys.executable, ["-m", "mcpline", "demo", str(Path(demo).resolve())]
    else:
        assert target is not None
        command, args, env = _command(target)
    entry: dict[str, Any] = {"command": command, "args": args}
    if env:
        entry["env"] = env
    if host == "claude" or host == "cursor":
        config: dict[str, Any] = {"mcpServers": {name: entry}}
    elif host == "vscode":
        config = {"servers": {name: {"type": "stdio", **entry}}}
    else:
        config = entry
    return json.dumps(config, indent=2), _WHERE[host]


def _command(target: str) -> tuple[str, list[str], dict[str, str]]:
    location, sep, attr = target.partition(":")
    env: dict[str, str] = {}
    if location.endswith(".py") or os.sep in location or "/" in location:
        location = str(Path(location).resolve())
    else:
        env["PYTHONPATH"] = os.getcwd()
    return sys.executable, ["-m", "mcpline", "serve", location + sep + attr], env
