"""Windows: ``sys.stdout`` and ``sys.stderr`` that follow fds 1 and 2 while mcpline owns them.

While a server runs or a capture is active, the Rust core points fds 1 and 2 elsewhere (the log,
a capture file). Two kinds of Python stream on Windows do not follow:

* CPython's console writer (``_WindowsConsoleIO``, used when the stream is a console) writes with
  ``WriteConsoleW`` to the handle it found at start-up, not through the descriptor: a tool run
  from ``mcpline call`` in a terminal would print past the capture, straight to the console.
* A pipe or file is encoded with the ANSI code page (e.g. cp1252): printing ``"✓ 日本"`` raises
  ``UnicodeEncodeError``, though the capture and the log are UTF-8.

So for as long as mcpline owns the descriptors (``hold()`` ... ``release()``, nestable),
``sys.stdout`` and ``sys.stderr`` are, when they are the interpreter's streams on fds 1 and 2 and
either of those kinds, replaced by UTF-8 text streams over the descriptors themselves
(``FileIO(fd, closefd=False)``, line-buffered), and put back afterwards (unless the program
replaced them meanwhile). Streams a program installed itself (pytest's, a ``StringIO``) are left
alone. Elsewhere than Windows this module is not used.
"""

from __future__ import annotations

import io
import sys
import threading

from mcpline._startup import TYPE_CHECKING

if TYPE_CHECKING:
    from typing import TextIO

_lock = threading.Lock()
_depth = 0
# (name in sys, the stream put aside, the follower put in its place)
_swapped: list[tuple[str, TextIO, TextIO]] = []


def _follows_fd(stream: object, fd: int) -> bool:
    """Whether ``stream`` already writes UTF-8 through descriptor ``fd`` (or is not on it)."""
    try:
        if stream.fileno() != fd:  # type: ignore[attr-defined]
            return True
    except (AttributeError, OSError, ValueError):
        return True  # not a descriptor stream: somebody else's, leave it alone
    raw = getattr(getattr(stream, "buffer", None), "raw", None)
    if type(raw).__name__ == "_WindowsConsoleIO":
        return False
    encoding = str(getattr(stream, "encoding", "") or "").lower().replace("-", "").replace("_", "")
    return encoding == "utf8"


def _follower(stream: TextIO, fd: int) -> TextIO:
    return io.TextIOWrapper(
        io.FileIO(fd, "w", closefd=False),
        encoding="utf-8",
        errors=getattr(stream, "errors", None) or "strict",
        line_buffering=True,
    )


def hold() -> None:
    """Called when mcpline takes fds 1 and 2 (serving, capturing); nestable."""
    global _depth
    with _lock:
        _depth += 1
        if _depth > 1:
            return
        for name, fd in (("stdout", 1), ("stderr", 2)):
            stream = getattr(sys, name, None)
            if stream is None or _follows_fd(stream, fd):
                continue
            try:
                stream.flush()
            except (OSError, ValueError):
                pass
            follower = _follower(stream, fd)
            setattr(sys, name, follower)
            _swapped.append((name, stream, follower))


def release() -> None:
    """Called when mcpline gives fds 1 and 2 back: the put-aside streams return."""
    global _depth
    with _lock:
        _depth -= 1
        if _depth > 0:
            return
        while _swapped:
            name, original, follower = _swapped.pop()
            try:
                follower.flush()
            except (OSError, ValueError):
                pass
            if getattr(sys, name, None) is follower:
                setattr(sys, name, original)
