"""A server with a tool whose child floods stderr: ``capture_flood_server.py [CAPTURE_CAP]``.

``flood(nbytes)`` (``output="result"``) runs ``head -c NBYTES /dev/zero | tr '\\0' x >&2`` and
answers "done"; the child's output lands in the call's capture file. ``flood_lines(count)``
(``output="result"``) runs ``seq 1 COUNT >&2``: numbered lines, to check the stderr copy.
``trickle(batches, lines, path)`` (``output="result"``) writes numbered lines to fd 2 in
batches with pauses, so that the capture-cap watcher sees the capture grow; after the watcher's
next look it notes in ``path`` how much storage the file behind fd 2 holds ("held BYTES") and
then "written", and waits a little. ``attach_limit`` is the default made explicit (8 KiB) so the
test can bound the attached text.
"""

import os
import subprocess
import sys
import time

from mcpline import Server

ATTACH_LIMIT = 8 * 1024

CAP = int(sys.argv[1]) if len(sys.argv) > 1 else 64 * 1024 * 1024
server = Server("capture-flood", version="1.0.0", attach_limit=ATTACH_LIMIT, capture_cap=CAP)


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


def allocated(fd: int) -> int:
    """The storage the file behind `fd` takes (Windows: its allocation size)."""
    if sys.platform != "win32":
        return os.fstat(fd).st_blocks * 512
    import ctypes
    import msvcrt

    class StandardInfo(ctypes.Structure):
        _fields_ = [
            ("AllocationSize", ctypes.c_int64),
            ("EndOfFile", ctypes.c_int64),
            ("NumberOfLinks", ctypes.c_uint32),
            ("DeletePending", ctypes.c_ubyte),
            ("Directory", ctypes.c_ubyte),
        ]

    info = StandardInfo()
    kernel32 = ctypes.WinDLL("kernel32", use_last_error=True)
    handle = ctypes.c_void_p(msvcrt.get_osfhandle(fd))
    if not kernel32.GetFileInformationByHandleEx(
        handle, 1, ctypes.byref(info), ctypes.sizeof(info)
    ):
        raise ctypes.WinError(ctypes.get_last_error())
    return info.AllocationSize


@server.tool(output="result")
def trickle(batches: int, lines: int, path: str) -> str:
    """Write batches*lines numbered lines to fd 2, a batch every 20 ms, then note the storage
    the capture holds and "written"."""
    n = 0
    for _ in range(batches):
        chunk = "".join(f"line {n + i:08d}\n" for i in range(lines))
        os.write(2, chunk.encode())
        n += lines
        time.sleep(0.02)
    time.sleep(0.3)  # the watcher's next look
    held = allocated(2)
    with open(path, "a", encoding="utf-8") as notes:
        notes.write(f"held {held}\nwritten\n")
    time.sleep(0.5)
    return "done"


@server.tool
def echo(text: str) -> str:
    """Return the text unchanged."""
    return text


if __name__ == "__main__":
    server.run()
