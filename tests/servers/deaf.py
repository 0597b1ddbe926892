"""What the test servers' tools that ignore cancellation share."""

import time

from mcpline import Cancelled


def deaf_sleep(seconds: float) -> None:
    """``time.sleep`` that carries on when the call is cancelled (a stop raises ``Cancelled``
    in the tool's thread)."""
    end = time.monotonic() + seconds
    while (left := end - time.monotonic()) > 0:
        try:
            time.sleep(left)
        except Cancelled:
            pass
