"""Tools that use ``mcpline.capture()`` themselves, in each output mode."""

import subprocess
import sys

import mcpline
from mcpline import Server

server = Server("inner-capture")


def _run_make_like() -> str:
    print("before the block", flush=True)
    with mcpline.capture() as out:
        print("python inside", flush=True)
        subprocess.run([sys.executable, "-c", "print('child inside')"], check=True)
    print("after the block", flush=True)
    return out.text


@server.tool
def default_mode() -> str:
    """Captures part of its own run (output mode "error")."""
    return _run_make_like()


@server.tool(output="result")
def result_mode() -> str:
    """Captures part of its own run (output mode "result")."""
    return _run_make_like()


@server.tool(output="off")
def off_mode() -> str:
    """Captures part of its own run (output mode "off")."""
    return _run_make_like()


if __name__ == "__main__":
    server.run()
