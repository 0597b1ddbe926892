"""A server with a tool whose child floods stderr: ``capture_flood_server.py``.

``flood(nbytes)`` (``output="result"``) runs ``head -c NBYTES /dev/zero | tr '\\0' x >&2`` and
answers "done"; the child's output lands in the call's capture file. ``flood_lines(count)``
(``output="result"``) runs ``seq 1 COUNT >&2``: numbered lines, to check the stderr copy.
``attach_limit`` is the default made explicit (8 KiB) so the test can bound the attached text.
"""

import subprocess

from mcpline import Server

ATTACH_LIMIT = 8 * 1024

server = Server("capture-flood", version="1.0.0", attach_limit=ATTACH_LIMIT)


@server.tool(output="result")
def flood(nbytes: int) -> str:
    """Start a child that writes nbytes of 'x' to stderr, wait for it, answer "done"."""
    command = f"head -c {nbytes} /dev/zero | tr '\\0' x >&2"
    subprocess.run(["sh", "-c", command], check=True)
    return "done"


@server.tool(output="result")
def flood_lines(count: int) -> str:
    """Start a child that writes the numbers 1..count to stderr, one a line."""
    subprocess.run(["sh", "-c", f"seq 1 {count} >&2"], check=True)
    return "done"


@server.tool
def echo(text: str) -> str:
    """Return the text unchanged."""
    return text


if __name__ == "__main__":
    server.run()
