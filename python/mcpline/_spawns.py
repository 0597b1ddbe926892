"""Telling the capture cell when a child process starts.

A child inherits fds 1 and 2 while they point at its call's capture file, and may write there
after the call ended. The cell then never reuses that file and passes what arrives on as late
output of that call. It counts ``fork`` itself; ``vfork`` and ``posix_spawn`` (which
``subprocess`` uses) run no fork handlers, so an audit hook reports the interpreter's ways of
starting a process.
"""

from __future__ import annotations

import sys

from mcpline._core import note_spawn

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

_installed = False


def _hook(event: str, args: object) -> None:
    if event in SPAWN_EVENTS:
        note_spawn()


def report_spawns() -> None:
    """Installs the audit hook, once per process (audit hooks cannot be removed)."""
    global _installed
    if not _installed:
        sys.addaudithook(_hook)
        _installed = True
