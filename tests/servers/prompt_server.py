"""A server with prompts, run as a host runs it: ``python tests/servers/prompt_server.py``.

``broken`` prints to stdout and stderr, then raises; ``greet`` returns one message.
"""

import sys

from mcpline import Server

server = Server("prompts", version="1.0.0")


@server.prompt
def broken() -> str:
    """Fails after printing."""
    print("about to fail")
    print("really", file=sys.stderr)
    raise ValueError("no template")


@server.prompt
def greet(name: str) -> str:
    """Greets someone."""
    return f"Say hello to {name}."


if __name__ == "__main__":
    server.run()
