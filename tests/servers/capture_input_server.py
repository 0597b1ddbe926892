"""A server whose tools try to read the protocol input: ``capture_input_server.py``.

- ``ask``: ``input("name? ")`` (the prompt goes to the captured stdout).
- ``ask_later(seconds)``: sleeps, then ``input()`` (requests sent meanwhile wait in the pipe).
- ``read_fd0(seconds=0)``: sleeps, then ``os.read(0, 65536)`` straight from the descriptor.
- ``child_cat(seconds=0)``: sleeps, then runs ``cat`` with the inherited stdin and returns
  what it read.
- ``echo(text)``: returns the text.
"""

import os
import subprocess
import time

from mcpline import Server

server = Server("capture-input", version="1.0.0")


@server.tool
def ask() -> str:
    """Prompt for a line with input()."""
    return input("name? ")


@server.tool
def ask_later(seconds: float) -> str:
    """Sleep, then prompt with input()."""
    time.sleep(seconds)
    return input()


@server.tool
def read_fd0(seconds: float = 0) -> str:
    """Sleep, then read from fd 0 directly."""
    time.sleep(seconds)
    return repr(os.read(0, 65536))


@server.tool
def child_cat(seconds: float = 0) -> str:
    """Sleep, then run cat on the inherited stdin; return what it read."""
    time.sleep(seconds)
    done = subprocess.run(["cat"], stdout=subprocess.PIPE, timeout=10)
    return repr(done.stdout)


@server.tool
def echo(text: str) -> str:
    """Return the text unchanged."""
    return text


if __name__ == "__main__":
    server.run()
