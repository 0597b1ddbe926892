"""The built-in demo server: read-only, path-scoped access to one folder.

Run it with ``mcpline demo [FOLDER]`` (default: the current directory) and point an MCP host at
that command. Every path a tool is given is resolved inside the folder, and nothing outside it
is read, listed, searched or even measured:

* absolute paths, ``..`` chains, NUL bytes and over-long names are refused;
* a symbolic link (to a file or a folder) whose target is outside the folder is refused when
  named, shown as a ``link`` without size when listed, and never followed by ``search``;
* the error for a refused path says only that it is outside the folder.

A hard link is a second name for the same file: it cannot be told apart from a file inside the
folder, so a hard link placed in the folder to an outside file is served like any other file.
Do not serve a folder where others can create hard links.

``list_files`` returns at most ``limit`` entries. ``search`` is bounded: at most ``limit``
matches, the first 1 MiB of each file, 10,000 files and 10 seconds; files that look binary (a
NUL byte in their first 8 KiB) are skipped.
"""

from __future__ import annotations

import fnmatch
import os
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Annotated, TypedDict

from mcpline import Context, Server, ToolError

MAX_PATH_CHARS = 4096
MAX_NAME_CHARS = 255
SEARCH_BYTES_PER_FILE = 1024 * 1024
SEARCH_MAX_FILES = 10_000
SEARCH_SECONDS = 10.0
BINARY_PROBE = 8192


class Entry(TypedDict):
    path: str
    kind: str
    size: int


class Match(TypedDict):
    path: str
    line: int
    text: str


class Folder:
    """The served folder: every path goes through ``resolve``."""

    def __init__(self, root: str | os.PathLike[str]) -> None:
        self.base = Path(root).resolve()

    def contains(self, path: Path) -> bool:
        return path == self.base or self.base in path.parents

    def resolve(self, path: str) -> Path:
        """``path`` (relative to the folder) as an absolute path inside it; ``ToolError``
        otherwise. Links are followed, so a link out of the folder is refused."""
        if "\0" in path:
            raise ToolError("a path cannot contain a NUL character")
        if len(path) > MAX_PATH_CHARS or any(len(p) > MAX_NAME_CHARS for p in Path(path).parts):
            raise ToolError("the path is too long")
        if Path(path).is_absolute() or Path(path).drive:
            raise ToolError(f"{path!r}: give a path relative to the served folder")
        try:
            target = (self.base / path).resolve()
        except (OSError, RuntimeError):  # a link loop
            raise ToolError(f"{path!r} cannot be resolved") from None
        if not self.contains(target):
            raise ToolError(f"{path!r} is outside the served folder")
        return target

    def inside_link(self, entry: Path) -> bool:
        """Whether a listed entry stays inside the folder (a link's target included)."""
        if not entry.is_symlink():
            return True
        try:
            return self.contains(entry.resolve())
        except (OSError, RuntimeError):
            return False

    def relative(self, path: Path) -> str:
        return path.relative_to(self.base).as_posix()


def build(root: str | os.PathLike[str] = ".") -> Server:
    """A demo server serving ``root`` read-only (``NotADirectoryError`` if it is no folder)."""
    folder = Folder(root)
    base = folder.base
    if not base.is_dir():
        raise NotADirectoryError(f"{root} is not a folder")
    server = Server(
        "mcpline-demo",
        version="1.0.0",
        title="mcpline demo: read-only folder",
        instructions=f"Read-only access to the folder {base}. Paths are relative to it.",
    )

    @server.tool(read_only=True, idempotent=True)
    def list_files(
        path: Annotated[str, "Folder relative to the served root."] = ".",
        pattern: Annotated[str, "Shell-style name filter, e.g. *.py."] = "*",
        limit: Annotated[int, "Most entries returned (the first ones by name)."] = 1000,
    ) -> list[Entry]:
        """List the entries of a folder (name, kind and size), sorted by name. A link that
        leads out of the served folder is listed as kind "link", without its size."""
        directory = folder.resolve(path)
        if not directory.is_dir():
            raise ToolError(f"{path!r} is not a folder")
        entries: list[Entry] = []
        for child in sorted(directory.iterdir()):
            if len(entries) >= limit:
                break
            if not fnmatch.fnmatch(child.name, pattern):
                continue
            rel = folder.relative(directory / child.name)
            if not folder.inside_link(child):
                entries.append({"path": rel, "kind": "link", "size": 0})
                continue
            kind = "dir" if child.is_dir() else "file"
            size = child.stat().st_size if kind == "file" else 0
            entries.append({"path": rel, "kind": kind, "size": size})
        return entries

    @server.tool(read_only=True, idempotent=True)
    def read_text(path: str, max_bytes: int = 65536) -> str:
        """Read a UTF-8 text file (at most max_bytes bytes).

        Args:
            path: File relative to the served root.
            max_bytes: Upper bound on the bytes returned.
        """
        file = folder.resolve(path)
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
        file = folder.resolve(path)
        if not file.is_file():
            raise ToolError(f"{path!r} is not a file")
        with file.open(encoding="utf-8", errors="replace") as f:
            return sum(len(line.split()) for line in f)

    @server.tool(read_only=True, idempotent=True)
    def search(text: str, ctx: Context, path: str = ".", limit: int = 50) -> list[Match]:
        """Find lines containing text in the text files below a folder (bounded: the first
        1 MiB of each file, 10,000 files, 10 seconds; binary files and links out of the
        folder are skipped).

        Args:
            text: The text to look for (case-sensitive).
            path: Folder relative to the served root.
            limit: Most matches returned.
        """
        start = folder.resolve(path)
        if not start.is_dir():
            raise ToolError(f"{path!r} is not a folder")
        deadline = time.monotonic() + SEARCH_SECONDS
        matches: list[Match] = []
        for seen, file in enumerate(_files(folder, start), 1):
            ctx.check_cancelled()
            if seen > SEARCH_MAX_FILES or time.monotonic() > deadline or len(matches) >= limit:
                break
            rel = folder.relative(file)
            for number, line in _lines(file):
                if text in line:
                    matches.append({"path": rel, "line": number, "text": line[:200]})
                    if len(matches) >= limit:
                        break
        return matches

    return server


def _files(folder: Folder, start: Path) -> Iterator[Path]:
    """Regular files below ``start``, in name order, never following a link out of the folder
    (links to folders are not walked; what they point to inside the folder is walked where it
    is)."""
    for directory, dirs, files in os.walk(start, followlinks=False):
        dirs.sort()
        here = Path(directory)
        for name in sorted(files):
            file = here / name
            if file.is_symlink() and not folder.inside_link(file):
                continue
            if file.is_file():
                yield file


def _lines(file: Path) -> list[tuple[int, str]]:
    """Numbered lines of the first 1 MiB of a text file; none for a binary or unreadable one."""
    try:
        with file.open("rb") as f:
            data = f.read(SEARCH_BYTES_PER_FILE)
    except OSError:
        return []
    if b"\0" in data[:BINARY_PROBE]:
        return []
    text = data.decode("utf-8", errors="replace")
    return list(enumerate(text.splitlines(), 1))
