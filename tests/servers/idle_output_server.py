"""A server whose quiet tool leaves a thread that writes to fd 2 after the call has ended:
``idle_output_server.py``."""

import os
import threading
import time

from mcpline import Server

server = Server("idle-output", version="1.0.0")


@server.tool
def quiet_then_later(delay: float) -> str:
    """Print nothing now; write one line to fd 2 after `delay` seconds, from a thread."""

    def later() -> None:
        time.sleep(delay)
        os.write(2, b"WRITTEN-WHILE-IDLE\n")

    threading.Thread(target=later, daemon=True).start()
    return "ok"


if __name__ == "__main__":
    server.run()
