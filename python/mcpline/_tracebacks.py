"""A tool's exception as its call shows it: the tool's own frames only.

The traceback written into the call's output (attached to the error result, and copied to the
server's stderr under the call's label) leaves out the frames of mcpline and asyncio, and
names files relative to the working directory or to the ``site-packages`` they were installed
in. The full traceback goes to the server's stderr unchanged (``report`` returns it).
"""

from __future__ import annotations

import os
import sys
import traceback
from types import TracebackType

__all__ = ["report", "trimmed"]


def _hidden_dirs() -> tuple[str, ...]:
    mcpline_dir = os.path.dirname(os.path.abspath(__file__)) + os.sep
    asyncio = sys.modules.get("asyncio")
    dirs = [mcpline_dir]
    if asyncio is not None and asyncio.__file__:
        dirs.append(os.path.dirname(os.path.abspath(asyncio.__file__)) + os.sep)
    return tuple(dirs)


def report(exc: BaseException, tb: TracebackType | None = None) -> str:
    """Writes the trimmed traceback of ``exc`` to ``sys.stderr`` (the call's output) and
    returns the full one. ``tb`` is its traceback when ``exc.__traceback__`` is not set."""
    if tb is not None:
        exc = exc.with_traceback(tb)
    full = "".join(traceback.format_exception(type(exc), exc, exc.__traceback__))
    sys.stderr.write(trimmed(exc))
    sys.stderr.flush()
    return full


def trimmed(exc: BaseException) -> str:
    """The traceback of ``exc`` with only the tool's frames and short file names."""
    te = traceback.TracebackException(type(exc), exc, exc.__traceback__, compact=True)
    _trim(te, _hidden_dirs(), _roots(), set())
    return "".join(te.format())


def _trim(
    te: traceback.TracebackException, hidden: tuple[str, ...], roots: list[str], seen: set[int]
) -> None:
    if id(te) in seen:
        return
    seen.add(id(te))
    frames = []
    for frame in te.stack:
        if os.path.abspath(frame.filename).startswith(hidden):
            continue
        line = frame.line  # read before the file name changes
        short = traceback.FrameSummary(
            _shorten(frame.filename, roots), frame.lineno, frame.name, line=line
        )
        frames.append(short)
    te.stack = traceback.StackSummary.from_list(frames)
    for linked in (te.__cause__, te.__context__, *(getattr(te, "exceptions", None) or ())):
        if linked is not None:
            _trim(linked, hidden, roots, seen)


def _roots() -> list[str]:
    """Where file names are made relative to, longest first: ``site-packages`` directories,
    then the working directory."""
    roots = {p for p in sys.path if p and os.path.basename(p) in ("site-packages", "dist-packages")}
    ordered = sorted((os.path.abspath(p) + os.sep for p in roots), key=len, reverse=True)
    try:
        ordered.append(os.getcwd() + os.sep)
    except OSError:
        pass
    return ordered


def _shorten(filename: str, roots: list[str]) -> str:
    path = os.path.abspath(filename)
    for root in roots:
        if path.startswith(root):
            return path[len(root) :]
    return filename
