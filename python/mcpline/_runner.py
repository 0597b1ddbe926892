"""The event loop that runs ``async def`` tools (one loop per server, created on first use)."""

from __future__ import annotations

import asyncio
import contextlib
from collections.abc import Coroutine
from typing import Any

from mcpline._core import Context


class AsyncRunner:
    """Runs coroutines of async tools, one at a time, on a loop the server owns."""

    def __init__(self) -> None:
        self._loop: asyncio.AbstractEventLoop | None = None

    def run(self, coroutine: Coroutine[Any, Any, Any], ctx: Context) -> Any:
        loop = self._loop
        if loop is None or loop.is_closed():
            loop = self._loop = asyncio.new_event_loop()
        task = loop.create_task(coroutine)
        ctx._on_cancel(lambda: loop.call_soon_threadsafe(task.cancel))
        try:
            return loop.run_until_complete(task)
        except BaseException:
            # Interrupted (SIGINT/SIGTERM) while the loop ran: let the task see CancelledError.
            if not task.done():
                task.cancel()
                with contextlib.suppress(BaseException):
                    loop.run_until_complete(task)
            raise

    def close(self) -> None:
        if self._loop is not None and not self._loop.is_closed():
            self._loop.close()
