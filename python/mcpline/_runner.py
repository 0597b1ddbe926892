"""The event loop that runs ``async def`` tools: one per server, on a thread of its own, so that
calls of async tools run concurrently (the core bounds how many: ``max_concurrency``)."""

from __future__ import annotations

import asyncio
import concurrent.futures
import contextlib
import contextvars
import threading
from collections.abc import Callable, Coroutine
from typing import Any

from mcpline._core import Context

# The call whose task is running: set in the context of each async tool call's task (and, while
# such calls may overlap, around each sync call), read by the streams of ``mcpline._streams``.
CURRENT_CALL: contextvars.ContextVar[Context | None] = contextvars.ContextVar(
    "mcpline_current_call", default=None
)


class AsyncRunner:
    """Starts coroutines of async tools on the server's loop and reports each finished task."""

    def __init__(self) -> None:
        self._loop: asyncio.AbstractEventLoop | None = None
        self._thread: threading.Thread | None = None
        self._lock = threading.Lock()

    def _running_loop(self) -> asyncio.AbstractEventLoop:
        with self._lock:
            loop, thread = self._loop, self._thread
            if loop is None or thread is None or not thread.is_alive():
                loop = asyncio.new_event_loop()
                started = threading.Event()

                def serve(loop: asyncio.AbstractEventLoop = loop) -> None:
                    asyncio.set_event_loop(loop)
                    loop.call_soon(started.set)
                    loop.run_forever()

                thread = threading.Thread(target=serve, name="mcpline-async", daemon=True)
                thread.start()
                started.wait()
                self._loop, self._thread = loop, thread
            return loop

    def start(
        self,
        coroutine: Coroutine[Any, Any, Any],
        ctx: Context,
        done: Callable[[asyncio.Task[Any]], object],
    ) -> None:
        """Runs ``coroutine`` as a task of the loop, ``done(task)`` once it ends. The task (and
        every task it creates) sees ``CURRENT_CALL`` set to ``ctx``: what it prints is the
        call's own."""
        loop = self._running_loop()

        def launch() -> None:
            context = contextvars.copy_context()
            context.run(CURRENT_CALL.set, ctx)
            task = context.run(loop.create_task, coroutine)
            ctx._on_cancel(lambda: loop.call_soon_threadsafe(task.cancel))
            # Run in the task's context, so that a traceback it prints is the call's own too.
            context.run(task.add_done_callback, done)

        try:
            loop.call_soon_threadsafe(launch)
        except RuntimeError:  # the loop closed under us: the call is answered with an error
            coroutine.close()
            raise

    def submit(self, coroutine: Coroutine[Any, Any, Any]) -> concurrent.futures.Future[Any]:
        """Runs ``coroutine`` as a task of the loop; its future, for another thread to wait on."""
        return asyncio.run_coroutine_threadsafe(coroutine, self._running_loop())

    def loop_call(self, callback: Callable[[], object]) -> None:
        """Runs ``callback`` on the loop's thread."""
        self._running_loop().call_soon_threadsafe(callback)

    def close(self) -> None:
        """Stops the loop after cancelling what still runs on it (each call is still answered)."""
        with self._lock:
            loop, thread = self._loop, self._thread
            self._loop = self._thread = None
        if loop is None or thread is None:
            return
        if thread.is_alive():
            loop.call_soon_threadsafe(loop.stop)
            thread.join()
        with contextlib.suppress(Exception):
            pending = asyncio.all_tasks(loop)
            for task in pending:
                task.cancel()
            if pending:
                loop.run_until_complete(asyncio.gather(*pending, return_exceptions=True))
        loop.close()
