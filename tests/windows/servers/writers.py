"""Ways a Windows process writes a line to descriptor 1 or 2, for the Windows suite.

``WRITERS`` maps a name to a descriptor and a function that writes one line through one path to
that descriptor: Python's streams, ``os.write``, child processes (Python, ``cmd /c echo``,
``os.system``) and the C runtime CPython uses (the UCRT's ``_write``, and ``printf`` flushed or
left in the C stdio buffer). ``expected_line(name, marker)`` is the line each one writes.

Importable on Linux too (the UCRT is loaded only when a writer runs): the Linux-side tests use
the names and ``expected_line``.
"""

from __future__ import annotations

import ctypes
import os
import subprocess
import sys
from collections.abc import Callable


def _ucrt() -> ctypes.CDLL:
    """The C runtime CPython and its extensions use: the Universal CRT."""
    return ctypes.CDLL("ucrtbase.dll")


def _stdio_file(fd: int) -> int:
    """The UCRT's ``stdout`` (1) or ``stderr`` (2) ``FILE *``: ``__acrt_iob_func(fd)``."""
    iob = _ucrt().__acrt_iob_func
    iob.restype = ctypes.c_void_p
    iob.argtypes = [ctypes.c_uint]
    return iob(fd)


def _c_printf(line: str, flush: bool) -> None:
    """``printf("%s\\n", line)`` as the UCRT's headers expand it, optionally ``fflush(stdout)``."""
    ucrt = _ucrt()
    vfprintf = ucrt.__stdio_common_vfprintf
    vfprintf.restype = ctypes.c_int
    vfprintf.argtypes = [
        ctypes.c_uint64,  # options
        ctypes.c_void_p,  # FILE *
        ctypes.c_char_p,  # format
        ctypes.c_void_p,  # _locale_t
        ctypes.c_void_p,  # va_list: on x64 a pointer to the argument slots
    ]
    text = ctypes.c_char_p(line.encode())
    arguments = (ctypes.c_void_p * 1)(ctypes.cast(text, ctypes.c_void_p))
    stdout = _stdio_file(1)
    written = vfprintf(0, stdout, b"%s\n", None, ctypes.cast(arguments, ctypes.c_void_p))
    assert written == len(line) + 1, written
    if flush:
        fflush = ucrt.fflush
        fflush.argtypes = [ctypes.c_void_p]
        assert fflush(stdout) == 0


def _c_write(fd: int, line: str) -> None:
    """The UCRT's ``_write(fd, ...)``, what C extensions and ``os.write`` use."""
    data = (line + "\n").encode()
    write = _ucrt()._write
    write.argtypes = [ctypes.c_int, ctypes.c_char_p, ctypes.c_uint]
    assert write(fd, data, len(data)) == len(data)


def _python_child(line: str, stream: str) -> None:
    code = f"import sys; print({line!r}, file=sys.{stream})"
    subprocess.run([sys.executable, "-c", code], check=True, timeout=60)


def _os_system(line: str) -> None:
    status = os.system(f"echo {line}")
    assert status == 0, status


# name -> (the descriptor the line goes to, the writer)
WRITERS: dict[str, tuple[int, Callable[[str], object]]] = {
    "print": (1, lambda line: print(line)),
    "print-stderr": (2, lambda line: print(line, file=sys.stderr)),
    "os.write-fd1": (1, lambda line: os.write(1, (line + "\n").encode())),
    "os.write-fd2": (2, lambda line: os.write(2, (line + "\n").encode())),
    "python-child-stdout": (1, lambda line: _python_child(line, "stdout")),
    "python-child-stderr": (2, lambda line: _python_child(line, "stderr")),
    # A command string: a list would be quoted by list2cmdline, and echo prints the quotes.
    "cmd-echo-child": (1, lambda line: subprocess.run(f"cmd /c echo {line}", check=True)),
    "os.system": (1, _os_system),
    "ucrt-_write-fd1": (1, lambda line: _c_write(1, line)),
    "ucrt-_write-fd2": (2, lambda line: _c_write(2, line)),
    "ucrt-printf-fflush": (1, lambda line: _c_printf(line, flush=True)),
    "ucrt-printf-left-in-buffer": (1, lambda line: _c_printf(line, flush=False)),
}


def expected_line(name: str, marker: str) -> str:
    """The line writer ``name`` writes for ``marker``."""
    return f"{marker} via {name}"


def write_everything(marker: str) -> None:
    for name, (_, write) in WRITERS.items():
        write(expected_line(name, marker))
