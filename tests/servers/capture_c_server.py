"""A server whose tools print from C: ``python tests/servers/capture_c_server.py``.

The C extension ``_capture_c`` (built with cffi by ``tests/test_capture_c_extension.py``) is
imported from the folder named by ``$CAPTURE_C_DIR``. It exposes ``c_printf(text)`` (``printf``
without newline and without ``fflush``: the bytes sit in the C stdout buffer) and
``c_write(fd, text)`` (a raw ``write(2)``).

Tools: ``c_noise`` (``output="result"``: printf + write to fd 1 + write to fd 2, markers derived
from its argument), ``c_noise_default`` (the same in the default ``output="error"`` mode) and
``quiet`` (prints nothing).
"""

import os
import sys

from mcpline import Server

sys.path.insert(0, os.environ["CAPTURE_C_DIR"])
from _capture_c import lib

server = Server("capture-c", version="1.0.0")


def noise(marker: str) -> str:
    lib.c_printf(f"{marker}-printf-unflushed".encode())
    lib.c_write(1, f"{marker}-write1\n".encode())
    lib.c_write(2, f"{marker}-write2\n".encode())
    return "ok"


@server.tool(output="result")
def c_noise(marker: str) -> str:
    """printf (unflushed, no newline), write(1, ...) and write(2, ...) from C."""
    return noise(marker)


@server.tool
def c_noise_default(marker: str) -> str:
    """The same as c_noise, in the default output mode (nothing attached on success)."""
    return noise(marker)


@server.tool(output="result")
def quiet() -> str:
    """Print nothing."""
    return "quiet"


if __name__ == "__main__":
    server.run()
