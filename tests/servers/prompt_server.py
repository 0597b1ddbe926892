"""A server with prompts and a resource, run as a host runs it:
``python tests/servers/prompt_server.py``.

The prompt ``broken`` prints to stdout and stderr, then raises; ``greet`` returns one message;
the resource ``files://greeting`` prints while it is read.
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


@server.resource("files://greeting")
def greeting() -> str:
    print("reading the greeting")
    return "hello"


if __name__ == "__main__":
    server.run()
