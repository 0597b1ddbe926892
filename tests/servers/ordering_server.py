"""Tools whose Python prints and child output interleave; a print before serving starts; a tool
that installs a block-buffered ``sys.stdout`` of its own; a line printed in pieces with a
descriptor write between them."""

import io
import os
import subprocess
import sys

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


@server.tool(output="result")
def own_stdout(word: str) -> str:
    """Puts a fresh block-buffered stream on fd 1 in ``sys.stdout``, prints into it and returns
    without flushing it (the stream of the last call is dropped unflushed)."""
    raw = io.FileIO(1, "w", closefd=False)
    sys.stdout = io.TextIOWrapper(io.BufferedWriter(raw, 8192), encoding="utf-8")
    print(f"own stdout says {word}")
    return word


@server.tool(output="result")
def pieces() -> str:
    """Prints a line of several pieces on each stream, with descriptor writes (as a child or C
    code makes) between the pieces, and answers how its streams buffer."""
    for stream, fd in ((sys.stdout, 1), (sys.stderr, 2)):
        stream.write(f"line on {fd} ")
        os.write(fd, f"[fd {fd} between pieces]\n".encode())
        print("in", "pieces", file=stream)
    return f"{sys.stderr.line_buffering} {sys.stderr.write_through}"


if __name__ == "__main__":
    server.run()
