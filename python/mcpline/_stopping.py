"""Interrupting the thread a sync tool runs on, when its time limit passes or the client
cancels the call (see ``rust/mcpline-py/src/stop.rs``, which decides when).

On the main thread of a POSIX process (where ``Server.run()`` runs sync tools) the tool is
interrupted by a signal, ``SIGUSR2``, whose handler raises ``mcpline.Cancelled``: Python runs
the handler at the next bytecode and also when a blocking call (``time.sleep``, a socket read,
``subprocess.wait``, a lock) is interrupted, so such waits end at once. ``install()`` sets the
handler only if ``SIGUSR2`` has none. Elsewhere (another thread, Windows) the exception is set
with ``PyThreadState_SetAsyncExc``: Python raises it at the tool's next bytecode, so a blocking
call in C ends first. Code that never returns to Python cannot be interrupted at all; the server
then answers the call as timed out without waiting for it.
"""

from __future__ import annotations

import _thread

from mcpline import _core
from mcpline._results import Cancelled
from mcpline._startup import TYPE_CHECKING, signal

if TYPE_CHECKING:
    from collections.abc import Callable
    from types import FrameType

__all__ = ["clear", "deliver", "install"]

_SIGNAL: int | None = getattr(signal, "SIGUSR2", None)
# The thread the stop signal's handler runs on (the main thread), once installed.
_signal_thread: int | None = None


def install() -> Callable[[], None]:
    """Sets the stop signal's handler (main thread, POSIX, no handler set yet); returns what
    puts the previous one back."""
    global _signal_thread
    if _SIGNAL is None or signal.getsignal(_SIGNAL) not in (signal.SIG_DFL, None):
        return lambda: None  # no such signal, or the application uses it: exceptions instead
    try:
        signal.signal(_SIGNAL, _on_stop_signal)
    except ValueError:  # not the main thread
        return lambda: None
    _signal_thread = _thread.get_ident()

    def restore() -> None:
        global _signal_thread
        _signal_thread = None
        signal.signal(_SIGNAL, signal.SIG_DFL)

    return restore


def _on_stop_signal(signum: int, frame: FrameType | None) -> None:
    _core.raise_if_stopped()


def deliver(thread: int) -> str:
    """Interrupts the tool running on ``thread``; says how: ``"signal"`` or ``"async"``."""
    if _SIGNAL is not None and thread == _signal_thread:
        signal.pthread_kill(thread, _SIGNAL)
        return "signal"
    _set_async_exc(thread, Cancelled)
    return "async"


def clear(thread: int) -> None:
    """Withdraws an asynchronous exception ``thread`` has not raised yet."""
    _set_async_exc(thread, None)


def _set_async_exc(thread: int, exc: type[BaseException] | None) -> None:
    import ctypes

    # NULL (not None) withdraws a pending exception.
    what = ctypes.c_void_p(None) if exc is None else ctypes.py_object(exc)
    ctypes.pythonapi.PyThreadState_SetAsyncExc(ctypes.c_ulong(thread), what)
