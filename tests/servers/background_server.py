"""A server whose tools leave a child process behind that writes after its call ended.

``start_quietly(tag)`` starts the child and prints nothing; ``start_loudly(tag)`` prints a line
first; ``start_through_a_shell(tag)`` (unix) has a shell start it in the background and exit
within the call; ``start_from_c(tag)`` (unix) starts it through the C library's
``posix_spawn``, which no audit hook or fork handler reports, and
``start_from_c_through_a_shell(tag)`` (unix) through the C library's ``system`` with ``&``: the
shell exits within the call and leaves its child behind. The child writes "late from TAG" to
stdout after 0.3 s and "later from TAG" to stderr after 0.6 s; ``start_briefly_from_c(tag)``
starts one from C that writes "brief from TAG" after 0.05 s and exits. ``noisy(tag)`` prints a line
(``output="result"``); ``quiet()`` prints nothing; ``pause()`` prints nothing and takes a
millisecond (long enough to have started a process).
"""

import ctypes
import os
import shlex
import subprocess
import sys
import time

from mcpline import Server

CHILD = (
    "import sys, time\n"
    "time.sleep(0.3)\n"
    "print('late from', sys.argv[1], flush=True)\n"
    "time.sleep(0.3)\n"
    "print('later from', sys.argv[1], file=sys.stderr, flush=True)\n"
)

server = Server("background", version="1.0.0", output="result")


@server.tool
def start_quietly(tag: str) -> str:
    """Leave a child behind; print nothing."""
    subprocess.Popen([sys.executable, "-c", CHILD, tag])
    return "started"


@server.tool
def start_loudly(tag: str) -> str:
    """Print a line, then leave a child behind."""
    print(f"starting {tag}")
    subprocess.Popen([sys.executable, "-c", CHILD, tag])
    return "started"


@server.tool
def start_through_a_shell(tag: str) -> str:
    """Have a shell leave a child behind and exit; print nothing."""
    subprocess.run(["sh", "-c", '"$0" -c "$1" "$2" &', sys.executable, CHILD, tag], check=True)
    return "started"


BRIEF_CHILD = "import sys, time\ntime.sleep(0.05)\nprint('brief from', sys.argv[1], flush=True)\n"


def spawn_from_c(child: str, tag: str) -> None:
    """Starts ``python -c child tag`` through the C library's ``posix_spawn``."""
    argv = [sys.executable.encode(), b"-c", child.encode(), tag.encode()]
    env = [f"{k}={v}".encode() for k, v in os.environ.items()]
    pid = ctypes.c_int()
    libc = ctypes.CDLL(None, use_errno=True)
    failed = libc.posix_spawn(
        ctypes.byref(pid),
        argv[0],
        None,
        None,
        (ctypes.c_char_p * (len(argv) + 1))(*argv, None),
        (ctypes.c_char_p * (len(env) + 1))(*env, None),
    )
    if failed:
        raise OSError(failed, os.strerror(failed))


@server.tool
def start_from_c(tag: str) -> str:
    """Leave a child behind, started by C code; print nothing."""
    spawn_from_c(CHILD, tag)
    return "started"


@server.tool
def start_briefly_from_c(tag: str) -> str:
    """Leave a short-lived child behind, started by C code; print nothing."""
    spawn_from_c(BRIEF_CHILD, tag)
    return "started"


@server.tool
def start_from_c_through_a_shell(tag: str) -> str:
    """Have C's ``system`` run a shell that leaves a child behind and exits; print nothing."""
    command = " ".join(shlex.quote(part) for part in (sys.executable, "-c", CHILD, tag))
    status = ctypes.CDLL(None).system(f"{command} &".encode())
    if status != 0:
        raise OSError(f"system() returned {status}")
    return "started"


@server.tool
def start_from_c_through_dev_stderr(tag: str) -> str:
    """Have C's ``system`` run a shell that leaves a child behind writing through its own open
    of ``/dev/stderr`` (``> /dev/stderr 2>&1``, a description the cell did not make); print
    nothing."""
    command = " ".join(shlex.quote(part) for part in (sys.executable, "-c", CHILD, tag))
    status = ctypes.CDLL(None).system(f"{command} > /dev/stderr 2>&1 &".encode())
    if status != 0:
        raise OSError(f"system() returned {status}")
    return "started"


@server.tool
def noisy(tag: str) -> str:
    """Print a line."""
    print(f"noisy {tag}")
    return tag


@server.tool
def quiet() -> str:
    """Print nothing."""
    return "ok"


@server.tool
def pause() -> str:
    """Print nothing; take a millisecond."""
    time.sleep(0.001)
    return "ok"


if __name__ == "__main__":
    server.run()
