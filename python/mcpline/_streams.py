"""``sys.stdout`` and ``sys.stderr`` that follow fds 1 and 2, line by line, while mcpline owns them.

Everywhere: a host starts the server with stdout a pipe, so ``sys.stdout`` is block-buffered,
and a tool's ``print`` would reach its capture only when the call ends, after whatever a child
process or C code wrote meanwhile. While held, the interpreter's ``sys.stdout`` and
``sys.stderr`` are line-buffered (``reconfigure``), so the attached output is in the order it
was written; their previous buffering comes back on release. Streams that write through
(``PYTHONUNBUFFERED``, ``-u``, which many host configurations set) are line-buffered too: a
``print`` is otherwise one write per piece (``print(a, b)``: four), which a child's output can
land between, and each costs a system call; line-buffered, a line is one write, whole.

Windows, in addition:

While a server runs or a capture is active, the Rust core points fds 1 and 2 elsewhere (the log,
a capture file). Two kinds of Python stream on Windows do not follow:

* CPython's console writer (``_WindowsConsoleIO``, used when the stream is a console) writes with
  ``WriteConsoleW`` to the handle it found at start-up, not through the descriptor: a tool run
  from ``mcpline call`` in a terminal would print past the capture, straight to the console.
* A pipe or file is encoded with the ANSI code page (e.g. cp1252): printing ``"✓ 日本"`` raises
  ``UnicodeEncodeError``, though the capture and the log are UTF-8.

Servers with ``async def`` tools, in addition (``ROUTE``, set by ``Server.run``):

Calls of async tools run at the same time, and fds 1 and 2 are shared by all of them. So that
each call's attached output holds its own ``print``s, ``sys.stdout`` and ``sys.stderr`` are
replaced while serving by unbuffered text streams over a writer that sends a write made by an
async tool's task (``mcpline._runner.CURRENT_CALL`` is set in its context) through that call
(``Context._write_output``), which records those bytes as the call's own. ``logging`` handlers
that wrote to the replaced streams are pointed at the new ones for as long.

So for as long as mcpline owns the descriptors (``hold()`` ... ``release()``, nestable),
``sys.stdout`` and ``sys.stderr`` are, when they are the interpreter's streams on fds 1 and 2 and
either of those kinds, replaced by UTF-8 text streams over the descriptors themselves
(``FileIO(fd, closefd=False)``, line-buffered), and put back afterwards (unless the program
replaced them meanwhile). Streams a program installed itself (pytest's, a ``StringIO``) are left
alone.
"""

from __future__ import annotations

import _thread  # not `threading`: it would bring functools and collections into start-up
import io
import os
import sys

from mcpline._startup import TYPE_CHECKING

if TYPE_CHECKING:
    from contextvars import ContextVar
    from typing import Any, TextIO

    from mcpline._core import Context

# Whether streams that do not follow fds 1/2 in UTF-8 are swapped (Windows) or only
# line-buffered (elsewhere, where every descriptor stream follows its descriptor).
SWAPS = sys.platform == "win32"

# Route Python-level writes of async tools' tasks through their calls (see the module docs).
ROUTE = False

# Serving HTTP: a write made outside any call (the ASGI server's own log lines) goes to the real
# stderr, never into the capture of calls running at that moment.
OUTSIDE_CALLS_TO_STDERR = False

_lock = _thread.allocate_lock()
_depth = 0
# (name in sys, the stream put aside, the follower put in its place)
_swapped: list[tuple[str, TextIO, TextIO]] = []
# Streams switched to line buffering, with (line_buffering, write_through) before, to switch back.
_line_buffered: list[tuple[io.TextIOWrapper, bool, bool]] = []
# (logging handler, its stream before, the follower it was pointed at)
_retargeted: list[tuple[Any, TextIO, TextIO]] = []


class _CallWriter(io.RawIOBase):
    """Descriptor ``fd`` for the streams of a server whose async tools overlap: a write made by
    a call's task goes through that call, so the capture knows it as the call's own. Writes
    everything it is given (the text stream above it ignores short writes)."""

    def __init__(self, fd: int, current: ContextVar[Context | None]) -> None:
        super().__init__()
        self._fd = fd
        self._current = current

    def writable(self) -> bool:
        return True

    def fileno(self) -> int:
        return self._fd

    def write(self, data: Any) -> int:
        view = memoryview(data).cast("B")
        total = len(view)
        call = self._current.get()
        if call is None and OUTSIDE_CALLS_TO_STDERR:
            from mcpline._core import write_real_stderr

            write_real_stderr(bytes(view))
            return total
        while view:
            if call is None:
                written = os.write(self._fd, view)
            else:
                written = call._write_output(self._fd, bytes(view))
            view = view[written:]
        return total


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


def _on_fd(stream: object, fd: int) -> bool:
    """Whether ``stream`` writes through descriptor ``fd``."""
    try:
        return bool(stream.fileno() == fd)  # type: ignore[attr-defined]
    except (AttributeError, OSError, ValueError):
        return False


def _follower(stream: TextIO, fd: int, route: bool) -> TextIO:
    if route:
        from mcpline._runner import CURRENT_CALL  # routing means async tools: already imported

        raw: Any = _CallWriter(fd, CURRENT_CALL)
    else:
        raw = io.FileIO(fd, "w", closefd=False)
    encoding = "utf-8" if SWAPS else (getattr(stream, "encoding", None) or "utf-8")
    return io.TextIOWrapper(
        raw,
        encoding=encoding,
        errors=getattr(stream, "errors", None) or "strict",
        line_buffering=True,
        write_through=route,
    )


def _retarget_logging(old: TextIO, new: TextIO) -> None:
    """Points ``logging`` handlers that write to ``old`` at ``new`` (if logging is in use)."""
    logging = sys.modules.get("logging")
    if logging is None:
        return
    known = logging.Logger.manager.loggerDict.values()
    loggers = [logging.getLogger(), *(x for x in known if isinstance(x, logging.Logger))]
    for logger in loggers:
        for handler in logger.handlers:
            if isinstance(handler, logging.StreamHandler) and handler.stream is old:
                handler.setStream(new)
                _retargeted.append((handler, old, new))


def _line_buffer(stream: object, fd: int) -> None:
    """Switches the interpreter's text stream on ``fd`` to line buffering (not write-through),
    if it is not."""
    if not isinstance(stream, io.TextIOWrapper):
        return
    before = (stream.line_buffering, stream.write_through)
    if before == (True, False):
        return
    try:
        if stream.fileno() != fd:
            return
        stream.reconfigure(line_buffering=True, write_through=False)
    except (OSError, ValueError):
        return
    _line_buffered.append((stream, *before))


def hold() -> None:
    """Called when mcpline takes fds 1 and 2 (serving, capturing); nestable."""
    global _depth
    with _lock:
        _depth += 1
        if _depth > 1:
            return
        for name, fd in (("stdout", 1), ("stderr", 2)):
            stream = getattr(sys, name, None)
            route = ROUTE and _on_fd(stream, fd)
            if not route and (not SWAPS or stream is None or _follows_fd(stream, fd)):
                _line_buffer(stream, fd)
                continue
            try:
                stream.flush()  # type: ignore[union-attr]
            except (OSError, ValueError):
                pass
            follower = _follower(stream, fd, route)  # type: ignore[arg-type]
            setattr(sys, name, follower)
            _swapped.append((name, stream, follower))  # type: ignore[arg-type]
            if route:
                _retarget_logging(stream, follower)  # type: ignore[arg-type]


def serving(protected: bool) -> bool:
    """The server's edges: ``hold()`` once the protocol stdout is put aside, ``release()`` before
    it comes back. Answers whether writes are now routed through calls."""
    if protected:
        hold()
        return ROUTE
    release()
    return False


def release() -> None:
    """Called when mcpline gives fds 1 and 2 back: the put-aside streams return."""
    global _depth
    with _lock:
        _depth -= 1
        if _depth > 0:
            return
        while _retargeted:
            handler, original, follower = _retargeted.pop()
            if handler.stream is follower:
                handler.setStream(original)
        while _swapped:
            name, original, follower = _swapped.pop()
            try:
                follower.flush()
            except (OSError, ValueError):
                pass
            if getattr(sys, name, None) is follower:
                setattr(sys, name, original)
        while _line_buffered:
            stream, line_buffering, write_through = _line_buffered.pop()
            try:
                stream.reconfigure(line_buffering=line_buffering, write_through=write_through)
            except (OSError, ValueError):
                pass
