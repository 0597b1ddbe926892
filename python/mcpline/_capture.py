"""``mcpline.capture()``: the server's capture cell as a context manager."""

from __future__ import annotations

import sys
from types import TracebackType

from mcpline import _core

if sys.platform == "win32":
    from mcpline import _streams


class capture:
    """Capture everything written to fds 1 and 2 (Python, C code and child processes).

    ```python
    with mcpline.capture() as out:
        subprocess.run(["ls", "-l"])
    print(out.text)
    ```

    Output goes to an anonymous file (never a pipe), so a chatty child never blocks. ``limit`` keeps
    only the last ``limit`` bytes in ``text`` (with a truncation marker). Inside a tool that is
    already captured (or inside another ``capture()``), the block gets a window onto that
    capture: ``text`` holds what was written during the block, and the outer capture keeps it
    too (a tool's attached output includes it). On Windows ``sys.stdout`` and
    ``sys.stderr`` write UTF-8 through fds 1 and 2 inside the block (see ``mcpline._streams``).
    """

    def __init__(self, limit: int | None = None) -> None:
        self.limit = limit
        self.text = ""
        self.total_bytes = 0
        self._cell: _core.CaptureCell | None = None

    def __enter__(self) -> capture:
        if sys.platform == "win32":  # console and ANSI-code-page streams do not follow fds 1/2
            _streams.hold()
        try:
            self._cell = _core.CaptureCell.begin()
        except BaseException:
            if sys.platform == "win32":
                _streams.release()
            raise
        return self

    def __exit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        tb: TracebackType | None,
    ) -> None:
        cell, self._cell = self._cell, None
        if cell is None:
            return
        try:
            self.text, self.total_bytes = cell.finish(self.limit)
        finally:
            if sys.platform == "win32":
                _streams.release()
