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

The folder is also offered as resources, under the same rules: each file directly in it (at
most 100, as found when the server starts) by its ``file://`` URI, and any file below it
through the template ``folder://{path}`` (``path`` relative, ``/`` written ``%2F``). A read
gives at most 1 MiB: text, or a base64 blob for a binary file. The prompt ``summarise`` asks
for a summary of a file, which it embeds; its ``path`` and the template's complete to the
files whose relative path starts with what was typed.
"""

from __future__ import annotations

import fnmatch
import mimetypes
import os
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Annotated, Any, TypedDict

from mcpline import Context, Message, Server, ToolError

MAX_PATH_CHARS = 4096
MAX_NAME_CHARS = 255
SEARCH_BYTES_PER_FILE = 1024 * 1024
SEARCH_MAX_FILES = 10_000
SEARCH_SECONDS = 10.0
BINARY_PROBE = 8192
RESOURCE_FILES = 100
READ_BYTES = 1024 * 1024


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

    _offer_files(server, folder)
    return server


def _offer_files(server: Server, folder: Folder) -> None:
    """The folder's files as resources, the ``summarise`` prompt and path completion."""
    top = sorted(p for p in folder.base.iterdir() if p.is_file() and folder.inside_link(p))
    for file in top[:RESOURCE_FILES]:
        rel = folder.relative(file)
        server.resource(
            file.as_uri(),
            name=rel,
            description=f"The file {rel} of the served folder.",
            mime_type=mimetypes.guess_type(file.name)[0],  # None: not said
            size=file.stat().st_size,
        )(_reader(folder, rel))

    @server.resource("folder://{path}", name="file")
    def any_file(path: str) -> dict[str, Any]:
        """A file below the served folder: path relative to it, with / written %2F."""
        return _read(folder, path)

    @server.prompt(title="Summarise a file")
    def summarise(path: Annotated[str, "File relative to the served folder."]) -> list[Message]:
        """Ask for a summary of a file of the served folder, which is embedded."""
        contents = _read(folder, path)
        contents["uri"] = folder.resolve(path).as_uri()
        return [
            Message(f"Summarise the file {path} in a few sentences."),
            Message({"type": "resource", "resource": contents}),
        ]

    @server.completion
    def complete_path(ref: Any, argument: Any, context: Any) -> list[str] | None:
        if argument.name != "path":
            return None
        found = []
        for file in _files(folder, folder.base):
            rel = folder.relative(file)
            if rel.startswith(argument.value):
                found.append(rel)
            if len(found) > 100:
                break
        return found


def _reader(folder: Folder, rel: str) -> Any:
    def read() -> dict[str, Any]:
        return _read(folder, rel)

    read.__name__ = "read_file"
    return read


def _read(folder: Folder, path: str) -> dict[str, Any]:
    """At most 1 MiB of a file inside the folder: text, or a base64 blob if it looks binary."""
    file = folder.resolve(path)
    if not file.is_file():
        raise ToolError(f"{path!r} is not a file")
    with file.open("rb") as f:
        data = f.read(READ_BYTES)
    if b"\0" in data[:BINARY_PROBE]:
        import base64

        blob = base64.b64encode(data).decode("ascii")
        return {"mimeType": _mime_type(file, "application/octet-stream"), "blob": blob}
    text = data.decode("utf-8", errors="replace")
    return {"mimeType": _mime_type(file), "text": text}


def _mime_type(file: Path, default: str = "text/plain") -> str:
    return mimetypes.guess_type(file.name)[0] or default


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
