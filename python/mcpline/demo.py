"""The built-in demo server: read-only, path-scoped access to one folder.

Run it with ``mcpline demo [FOLDER]`` (default: the current directory) and point an MCP host at
that command. Every path is resolved inside the folder; nothing outside it can be read.
"""

from __future__ import annotations

import fnmatch
import os
from pathlib import Path
from typing import Annotated, TypedDict

from mcpline import Context, Server, ToolError


class Entry(TypedDict):
    path: str
    kind: str
    size: int


class Match(TypedDict):
    path: str
    line: int
    text: str


def build(root: str | os.PathLike[str] = ".") -> Server:
    """A demo server serving ``root`` read-only."""
    base = Path(root).resolve()
    if not base.is_dir():
        raise ToolError(f"{base} is not a folder")
    server = Server(
        "mcpline-demo",
        version="1.0.0",
        title="mcpline demo: read-only folder",
        instructions=f"Read-only access to the folder {base}. Paths are relative to it.",
    )

    def inside(path: str) -> Path:
        target = (base / path).resolve()
        if target != base and base not in target.parents:
            raise ToolError(f"{path!r} is outside the served folder")
        return target

    @server.tool(read_only=True, idempotent=True)
    def list_files(
        path: Annotated[str, "Folder relative to the served root."] = ".",
        pattern: Annotated[str, "Shell-style name filter, e.g. *.py."] = "*",
    ) -> list[Entry]:
        """List the entries of a folder (name, kind and size), sorted by name."""
        folder = inside(path)
        if not folder.is_dir():
            raise ToolError(f"{path!r} is not a folder")
        entries: list[Entry] = []
        for child in sorted(folder.iterdir()):
            if fnmatch.fnmatch(child.name, pattern):
                kind = "dir" if child.is_dir() else "file"
                size = child.stat().st_size if kind == "file" else 0
                entries.append({"path": str(child.relative_to(base)), "kind": kind, "size": size})
        return entries

    @server.tool(read_only=True, idempotent=True)
    def read_text(path: str, max_bytes: int = 65536) -> str:
        """Read a UTF-8 text file (at most max_bytes bytes).

        Args:
            path: File relative to the served root.
            max_bytes: Upper bound on the bytes returned.
        """
        file = inside(path)
        if not file.is_file():
            raise ToolError(f"{path!r} is not a file")
        with file.open("rb") as f:
            data = f.read(max(0, max_bytes))
        return data.decode("utf-8", errors="replace")

    @server.tool(read_only=True, idempotent=True)
    def count_words(path: str) -> int:
        """Count the whitespace-separated words in a UTF-8 text file.

        Args:
            path: File relative to the served root.
        """
        file = inside(path)
        if not file.is_file():
            raise ToolError(f"{path!r} is not a file")
        return len(file.read_text(encoding="utf-8", errors="replace").split())

    @server.tool(read_only=True, idempotent=True)
    def search(text: str, ctx: Context, path: str = ".", limit: int = 50) -> list[Match]:
        """Find lines containing text in the files below a folder.

        Args:
            text: The text to look for (case-sensitive).
            path: Folder relative to the served root.
            limit: Most matches returned.
        """
        folder = inside(path)
        files = [p for p in sorted(folder.rglob("*")) if p.is_file()]
        matches: list[Match] = []
        for done, file in enumerate(files, 1):
            ctx.check_cancelled()
            ctx.progress(done, len(files))
            try:
                lines = file.read_text(encoding="utf-8").splitlines()
            except (UnicodeDecodeError, OSError):
                continue
            for number, line in enumerate(lines, 1):
                if text in line:
                    rel = str(file.relative_to(base))
                    matches.append({"path": rel, "line": number, "text": line[:200]})
                    if len(matches) >= limit:
                        return matches
        return matches

    return server
