"""``Server(lifespan=...)``: set-up and tear-down around serving.

``lifespan(server)`` returns a context manager, plain or async (``contextlib.contextmanager``,
``contextlib.asynccontextmanager``, or any class with ``__enter__``/``__aenter__``). It is entered
once before the first request is read and exited when serving ends (end of input, a stopping
signal, a closed output); what it yields is ``Context.lifespan`` in every call.

An async one runs on the loop that runs the ``async def`` tools, as one task from entry to exit
(so what it opens belongs to that loop, and a task group or cancel scope it holds is entered and
exited by the same task).
"""

from __future__ import annotations

import asyncio
import concurrent.futures
import contextlib
import sys
import traceback
from collections.abc import Callable, Iterator
from typing import Any

from mcpline._runner import AsyncRunner


@contextlib.contextmanager
def output_to_stderr(active: bool) -> Iterator[None]:
    """While ``active``: what the block writes to fds 1 and 2 (Python, C code, children) is
    captured and then written to stderr, each line labelled, so none of it reaches stdout."""
    if not active:
        yield
        return
    from mcpline._capture import capture

    with capture() as out:
        try:
            yield
        finally:
            sys.stdout.flush()
            sys.stderr.flush()
    for line in out.text.splitlines():
        sys.stderr.write(f"[lifespan] {line}\n")
    sys.stderr.flush()


class LifespanError(Exception):
    """The lifespan could not be entered; the message says why, in one line."""


def describe_failure(error: BaseException) -> str:
    """``Type: message (at file:line in function)``, the innermost frame of ``error``."""
    text = f"{type(error).__name__}: {error}" if str(error) else type(error).__name__
    frames = traceback.extract_tb(error.__traceback__)
    if frames:
        text += f" (at {frames[-1].filename}:{frames[-1].lineno} in {frames[-1].name})"
    return text


def failed_to_start(error: BaseException) -> LifespanError:
    return LifespanError(f"lifespan failed to start: {describe_failure(error)}")


class Lifespan:
    """One entry and one exit of ``factory(server)``."""

    def __init__(self, factory: Callable[[Any], Any], server: Any, runner: AsyncRunner | None):
        self._factory = factory
        self._server = server
        self._runner = runner
        self._own_runner: AsyncRunner | None = None
        self._exit: Callable[[], None] | None = None

    def enter(self) -> Any:
        """Enters the context manager and returns what it yields; raises ``LifespanError``."""
        try:
            manager = self._factory(self._server)
        except Exception as error:
            raise failed_to_start(error) from error
        if hasattr(manager, "__aenter__"):
            return self._enter_async(manager)
        if hasattr(manager, "__enter__"):
            try:
                value = manager.__enter__()
            except Exception as error:
                raise failed_to_start(error) from error
            self._exit = lambda: manager.__exit__(None, None, None)
            return value
        raise LifespanError(
            f"lifespan must return a context manager (plain or async), not "
            f"{type(manager).__name__}: decorate it with contextlib.contextmanager or "
            f"contextlib.asynccontextmanager"
        )

    def _enter_async(self, manager: Any) -> Any:
        runner = self._runner
        if runner is None:
            runner = self._own_runner = AsyncRunner()
        entered: concurrent.futures.Future[tuple[Any, asyncio.Event]] = concurrent.futures.Future()

        async def hold() -> None:
            release = asyncio.Event()
            try:
                async with manager as value:
                    entered.set_result((value, release))
                    await release.wait()
            except BaseException as error:
                if not entered.done():
                    entered.set_exception(error)
                    return
                raise

        done = runner.submit(hold())
        try:
            value, release = entered.result()
        except Exception as error:
            self._close_own_runner()
            raise failed_to_start(error) from error

        def leave() -> None:
            runner.loop_call(release.set)
            done.result()

        self._exit = leave
        return value

    def exit(self) -> None:
        """Exits the context manager (once); a failure is reported on stderr, not raised."""
        leave, self._exit = self._exit, None
        try:
            if leave is not None:
                leave()
        except Exception as error:
            sys.stderr.write(f"[mcpline] lifespan failed to exit: {describe_failure(error)}\n")
        finally:
            self._close_own_runner()

    def _close_own_runner(self) -> None:
        runner, self._own_runner = self._own_runner, None
        if runner is not None:
            runner.close()
