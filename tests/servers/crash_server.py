"""A server whose tool kills the process with a fatal signal: ``crash_server.py [faulthandler]``.

``crash`` prints through Python and through fd 2 (after running a child that prints, with
``child``), then faults (``segv``: a read of address 0)
or aborts (``abort``). With ``faulthandler`` the interpreter's fault handler is enabled at
import, as ``python -X faulthandler`` would.
"""

import ctypes
import faulthandler
import os
import subprocess
import sys

from mcpline import Server

if "faulthandler" in sys.argv[1:]:
    faulthandler.enable()

server = Server("crash", version="1.0.0")


@server.tool
def crash(how: str, child: bool = False, lines: int = 0) -> str:
    """Print two lines (and `lines` numbered ones, in one write to fd 2), then die by `how`:
    "segv" or "abort"."""
    if child:
        subprocess.run([sys.executable, "-c", "print('a child printed this')"], check=True)
    print("printed before the crash")
    os.write(2, b"written to fd 2 before the crash\n")
    if lines:
        os.write(2, "".join(f"numbered line {n}\n" for n in range(lines)).encode())
    if how == "abort":
        os.abort()
    ctypes.string_at(0)
    return "survived"


@server.tool
def chatter() -> str:
    """Print a line and return."""
    print("an earlier call printed this")
    return "done"


@server.tool
def add(a: int, b: int) -> int:
    """Add two integers."""
    return a + b


if __name__ == "__main__":
    server.run()
