"""A server with a short end-of-input grace period and a tool that ignores cancellation.

``python tests/servers/hang_server.py``: ``hang`` sleeps for the given seconds no matter what,
``add`` adds two integers. ``eof_grace`` is 0.5 s so that shutdown tests stay fast.
"""

from deaf import deaf_sleep
from mcpline import Server

server = Server("hang", version="1.0.0", eof_grace=0.5)


@server.tool
def hang(seconds: float) -> str:
    """Sleep, ignoring cancellation."""
    deaf_sleep(seconds)
    return "woke up"


@server.tool
def hang_loudly(seconds: float, path: str) -> str:
    """Print a line and a child's line, note "started" in ``path``, then sleep, ignoring
    cancellation."""
    import subprocess
    import sys

    print("about to hang")
    subprocess.run([sys.executable, "-c", "print('the child was here')"], check=True)
    with open(path, "a", encoding="utf-8") as notes:
        notes.write("started\n")
    deaf_sleep(seconds)
    return "woke up"


@server.tool
def add(a: int, b: int) -> int:
    """Add two integers."""
    return a + b


if __name__ == "__main__":
    server.run()
