"""Tools that fork a child which leaves the tool the way a careless child does."""

import os
import sys

from mcpline import Server

server = Server("fork")


def _fork(child) -> str:
    pid = os.fork()
    if pid == 0:
        child()
        return "child returned"  # the child comes back out of the tool here
    _, status = os.waitpid(pid, 0)
    return f"parent waited; child exit status {os.waitstatus_to_exitcode(status)}"


@server.tool(output="result")
def child_raises() -> str:
    """The forked child raises."""

    def child() -> None:
        raise ValueError("child failed")

    return _fork(child)


@server.tool(output="result")
def child_exits() -> str:
    """The forked child calls sys.exit."""

    def child() -> None:
        sys.exit(0)

    return _fork(child)


@server.tool(output="off")
def child_returns_uncaptured() -> str:
    """The forked child returns from the tool, with capture off."""
    return _fork(lambda: None)


@server.tool
def ping() -> str:
    """Answers pong."""
    return "pong"


if __name__ == "__main__":
    server.run()
