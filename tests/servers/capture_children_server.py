"""A server whose tools start child processes that print: ``capture_children_server.py``.

``children_result`` (``output="result"``) and ``children_default`` (the default,
``output="error"``) both run ``sh -c 'echo child-out; echo child-err >&2'`` through
``subprocess.run`` and ``echo sys-out`` through ``os.system``, then answer "ok".
``child_floods(lines)`` runs a child that writes that many numbered lines to stdout at once (more
than a pipe holds), then prints "parent after".
"""

import os
import subprocess
import sys

from mcpline import Server

server = Server("capture-children", version="1.0.0")


def run_children() -> str:
    subprocess.run(["sh", "-c", "echo child-out; echo child-err >&2"], check=True)
    status = os.system("echo sys-out")
    return "ok" if status == 0 else f"os.system returned {status}"


@server.tool(output="result")
def children_result() -> str:
    """Run two children that print (output attached to the result)."""
    return run_children()


@server.tool
def children_default() -> str:
    """Run two children that print (default output mode)."""
    return run_children()


FLOOD = (
    "import sys\n"
    "n = int(sys.argv[1])\n"
    "sys.stdout.write(''.join(f'child line {i:06d}\\n' for i in range(n)))\n"
)


@server.tool
def child_floods(lines: int) -> str:
    """Run a child that writes `lines` numbered lines in one go, then print a line."""
    subprocess.run([sys.executable, "-c", FLOOD, str(lines)], check=True)
    print("parent after")
    return "ok"


if __name__ == "__main__":
    server.run()
