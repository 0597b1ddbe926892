"""Telling the capture cell when a child process starts, or fd 1 or 2 is opened anew.

A child inherits fds 1 and 2 while they point at its call's capture file: it may write there
after the call ended, and a shell's ``echo x > /dev/stderr`` opens the file anew and empties it.
So before a process starts, the cell moves a running capture's fds 1 and 2 to a pipe, which it
empties into the capture file, and whose late writers it follows (on Linux they write through
a pipe already, and the report only tells the cell to ask who holds it when the call ends). It
counts ``fork`` itself; ``vfork`` and ``posix_spawn`` (which ``subprocess`` uses) run no fork
handlers, so an audit hook reports the interpreter's ways of starting a process. The same hook
reports Python code opening ``/dev/stdout`` or ``/dev/stderr`` with truncation
(``open("/dev/stderr", "w")``), which on Linux opens the file anew and would empty it as well
where fds 1 and 2 write into it directly (on macOS such an open duplicates fd 2 instead).
"""

from __future__ import annotations

import os
import sys

from mcpline._core import note_spawn, note_truncating_open

# The audit events of starting a process (https://docs.python.org/3/library/audit_events.html).
SPAWN_EVENTS = frozenset(
    {
        "subprocess.Popen",
        "os.system",
        "os.posix_spawn",
        "os.spawn",
        "os.fork",
        "os.forkpty",
        "os.startfile",
        "pty.spawn",
    }
)

# The paths that open fd 1 or 2 anew.
STANDARD_PATHS = frozenset(
    f"{directory}/{name}"
    for directory, names in (
        ("/dev", ("stdout", "stderr")),
        ("/dev/fd", ("1", "2")),
        ("/proc/self/fd", ("1", "2")),
        ("/proc/thread-self/fd", ("1", "2")),
    )
    for name in names
)

_installed = False


def _truncates_a_standard_stream(args: object) -> bool:
    """Whether the arguments of an ``open`` audit event (path, mode, flags) open fd 1 or 2 anew
    with truncation."""
    if not isinstance(args, tuple) or len(args) != 3:
        return False
    path, _mode, flags = args
    if not isinstance(flags, int) or not flags & os.O_TRUNC:
        return False
    if isinstance(path, bytes):
        path = os.fsdecode(path)
    elif isinstance(path, os.PathLike):
        path = os.fsdecode(os.fspath(path))
    return path in STANDARD_PATHS


def _hook(event: str, args: object) -> None:
    if event in SPAWN_EVENTS:
        note_spawn()
    elif event == "open" and _truncates_a_standard_stream(args):
        note_truncating_open()


def report_spawns() -> None:
    """Installs the audit hook, once per process (audit hooks cannot be removed)."""
    global _installed
    if not _installed:
        sys.addaudithook(_hook)
        _installed = True
