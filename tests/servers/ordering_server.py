"""Tools whose Python prints and child output interleave; a print before serving starts."""

import os
import subprocess

from mcpline import Server

server = Server("ordering")

if os.environ.get("PRINT_BEFORE_RUN"):
    print("printed at import, before run()")


@server.tool
def steps() -> str:
    """Prints, runs a child that prints, prints again, then fails."""
    print("step 1")
    subprocess.run(["sh", "-c", "echo step 2"], check=True)
    print("step 3")
    raise RuntimeError("step 4 failed")


@server.tool(output="off")
def uncaptured() -> str:
    """Prints with capture off."""
    print("printed by a tool with output off")
    return "done"


if __name__ == "__main__":
    server.run()
