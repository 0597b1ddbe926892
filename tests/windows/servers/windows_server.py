"""The server of the Windows suite, run by the Windows CPython under wine (tests/windows/run.sh).

``python.exe tests/windows/servers/windows_server.py [EOF_GRACE_SECONDS [CAPTURE_CAP]]`` serves
stdio until end of input. The Windows-side tests (tests/windows/test_*.py) import its ``server``;
the Linux-side tests (tests/windows/linux/) start it under wine and talk to it.

The writers ``write_all`` and ``write_all_then_fail`` run are in writers.py.

Tools:

- ``add(a, b)``: a + b.
- ``write_all(marker)`` (``output="result"``): runs every writer, answers "ok".
- ``write_all_then_fail(marker)``: runs every writer, then fails with "failed on purpose".
- ``ask()``: ``input("name? ")``.
- ``echo(text)``: the text.
- ``wait_for_cancel(seconds)``: reports progress once ("started"), then polls ``ctx.cancelled``
  for up to ``seconds``; prints "<request id> saw the cancellation" when it sees it.
- ``check_until_cancelled(seconds)``: reports progress once, then calls ``ctx.check_cancelled()``
  in a loop; prints "<request id> raised <exception>" when it raises.
- ``say(text)``: prints the text (to the captured stdout) and answers it.
- ``sleep(seconds)``: ``time.sleep``, then "slept".
- ``crash()``: prints a line, writes one to fd 2, then reads address 0 in C code (an access
  violation nothing handles: the process dies).
- ``abort_now(traceback=False)``: prints a line, writes one to fd 2, turns ``faulthandler`` on
  if ``traceback``, then calls ``os.abort()`` (the C runtime's ``abort()``: the process dies).
- ``start_late_writer(tag)``: starts a child that, after ``delay`` seconds, prints "late from
  <tag>" and writes "later from <tag>" to its stderr; answers at once, without waiting for it.
- ``start_late_writer_from_c(tag)``: starts the same child through the C runtime's
  ``_wspawnv``, which nothing reports to mcpline (a C library starting a process).
- ``trickle(batches, lines)`` (``output="result"``): writes ``batches`` x ``lines`` numbered lines
  ("line 00000000") to fd 2, a batch every 50 ms, then answers "done".
"""

from __future__ import annotations

import ctypes
import faulthandler
import os
import subprocess
import sys
import time

# The embeddable CPython's ._pth file keeps the script's folder off sys.path.
sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))

from mcpline import Cancelled, Context, McplineError, Server, ToolError
from writers import write_everything

ARGS = sys.argv[1:] if __name__ == "__main__" else []
EOF_GRACE = float(ARGS[0]) if ARGS else 5.0
CAPTURE_CAP = int(ARGS[1]) if len(ARGS) > 1 else 64 * 1024 * 1024


server = Server("windows", version="1.0.0", eof_grace=EOF_GRACE, capture_cap=CAPTURE_CAP)


@server.tool
def add(a: int, b: int) -> int:
    """Add two integers."""
    return a + b


@server.tool(output="result")
def write_all(marker: str) -> str:
    """Write a line through every writer; attach the output to the result."""
    write_everything(marker)
    return "ok"


@server.tool
def write_all_then_fail(marker: str) -> str:
    """Write a line through every writer, then fail."""
    write_everything(marker)
    raise ToolError("failed on purpose")


@server.tool
def ask() -> str:
    """Prompt for a line with input()."""
    return input("name? ")


@server.tool
def echo(text: str) -> str:
    """Return the text unchanged."""
    return text


@server.tool
def say(text: str) -> str:
    """Print the text and answer it."""
    print(text)
    return text


@server.tool
def sleep(seconds: float) -> str:
    """Sleep, then answer "slept"."""
    time.sleep(seconds)
    return "slept"


@server.tool
def wait_for_cancel(seconds: float, ctx: Context) -> str:
    """Report "started", then poll ctx.cancelled for up to the given seconds."""
    ctx.progress(0, message="started")
    deadline = time.monotonic() + seconds
    try:
        while time.monotonic() < deadline:
            if ctx.cancelled:
                print(f"{ctx.request_id} saw the cancellation")
                return "cancelled"
            time.sleep(0.01)
    except Cancelled:  # stopped before it looked again
        print(f"{ctx.request_id} saw the cancellation")
        raise
    return "not cancelled"


@server.tool(timeout=0.5)
def spin(ctx: Context) -> str:
    """A pure-Python loop past its time limit; says how it ended."""
    try:
        while True:
            pass
    except BaseException as e:
        print(f"{ctx.request_id} spin stopped: {type(e).__name__}")
        raise


@server.tool
def check_until_cancelled(seconds: float, ctx: Context) -> str:
    """Report "started", then call ctx.check_cancelled() in a loop for up to the given seconds."""
    ctx.progress(0, message="started")
    deadline = time.monotonic() + seconds
    try:
        while time.monotonic() < deadline:
            ctx.check_cancelled()
            time.sleep(0.01)
    except McplineError as e:
        print(f"{ctx.request_id} raised {type(e).__name__}")
        raise
    return "not cancelled"


@server.tool
def crash() -> str:
    """Print a line, write one to fd 2, then fault."""
    print("printed before the crash")
    os.write(2, b"written to fd 2 before the crash\n")
    faulthandler._read_null()  # also turns off the crash dialog
    return "survived"


@server.tool
def abort_now(traceback: bool = False) -> str:
    """Print a line, write one to fd 2, then abort (with `faulthandler` on, if `traceback`)."""
    print("printed before the abort")
    os.write(2, b"written to fd 2 before the abort\n")
    if traceback:
        faulthandler.enable()
    os.abort()


P_NOWAIT = 1  # the C runtime's _P_NOWAIT: start the child and return at once

LATE_CHILD = (
    "import sys, time; time.sleep(float(sys.argv[2])); "
    "print('late from ' + sys.argv[1], flush=True); "
    "sys.stderr.write('later from ' + sys.argv[1] + '\\n'); sys.stderr.flush()"
)


@server.tool
def start_late_writer(tag: str, delay: float = 1.0) -> str:
    """Start a child that writes to stdout and stderr after `delay` seconds; do not wait."""
    subprocess.Popen([sys.executable, "-c", LATE_CHILD, tag, str(delay)])
    return "started"


@server.tool
def start_late_writer_from_c(tag: str, delay: float = 1.0) -> str:
    """Start the same child through the C runtime's own ``_wspawnv`` (nothing tells mcpline);
    do not wait."""
    args = [sys.executable, "-c", LATE_CHILD, tag, str(delay)]
    # The C runtime joins the arguments with spaces: each is quoted as it parses them back.
    quoted = [subprocess.list2cmdline([arg]) for arg in args]
    argv = (ctypes.c_wchar_p * (len(quoted) + 1))(*quoted, None)
    spawn = ctypes.CDLL("ucrtbase")._wspawnv
    spawn.restype = ctypes.c_ssize_t
    spawn.argtypes = [ctypes.c_int, ctypes.c_wchar_p, ctypes.POINTER(ctypes.c_wchar_p)]
    if spawn(P_NOWAIT, sys.executable, argv) == -1:
        raise OSError(ctypes.get_errno(), "_wspawnv failed")
    return "started"


@server.tool(output="result")
def trickle(batches: int, lines: int) -> str:
    """Write batches*lines numbered lines to fd 2, a batch every 50 ms."""
    n = 0
    for _ in range(batches):
        os.write(2, "".join(f"line {n + i:08d}\n" for i in range(lines)).encode())
        n += lines
        time.sleep(0.05)
    return "done"


if __name__ == "__main__":
    server.run()
