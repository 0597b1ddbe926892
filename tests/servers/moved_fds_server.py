"""Tools that move or close fds 1 and 2 behind the capture's back, and a tool that prints."""

import ctypes
import os
import subprocess
import sys

from mcpline import Server

server = Server("moved-fds")

# The C library, as the process has it (no search: `ctypes.util.find_library` runs a process).
LIBC = ctypes.CDLL(None)
LIBC.fopen.restype = ctypes.c_void_p
LIBC.fputs.argtypes = [ctypes.c_char_p, ctypes.c_void_p]
LIBC.fclose.argtypes = [ctypes.c_void_p]


@server.tool
def log_to(path: str) -> str:
    """Points fds 1 and 2 at the tool's own log file, as a daemonising library might."""
    log = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_APPEND, 0o600)
    os.dup2(log, 1)
    os.dup2(log, 2)
    os.close(log)
    return "logging to " + path


@server.tool
def close_std() -> str:
    """Closes fds 1 and 2."""
    os.close(1)
    os.close(2)
    return "closed"


@server.tool(output="result")
def child_logs_to(path: str) -> str:
    """Points fd 1 at the tool's own log while a child writes to fd 1 and to fd 2."""
    log = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_APPEND, 0o600)
    saved = os.dup(1)
    os.dup2(log, 1)
    os.close(log)
    try:
        script = "echo child to the log; echo child to the capture >&2"
        subprocess.run(["sh", "-c", script], check=True)
    finally:
        os.dup2(saved, 1)
        os.close(saved)
    return "done"


@server.tool(output="result")
def child_without_stdout() -> str:
    """Closes fd 1, then a child writes to fd 2."""
    os.close(1)
    subprocess.run(["sh", "-c", "echo child to stderr >&2"], check=True)
    return "done"


LATE_CHILD = "import sys, time; time.sleep(0.3); print('late from', sys.argv[1], flush=True)"


@server.tool
def child_after_fd_1_back(tag: str) -> str:
    """Runs a child while fd 1 points elsewhere, puts fd 1 back, then leaves a child behind
    that prints "late from TAG" 0.3 s later."""
    saved = os.dup(1)
    null = os.open(os.devnull, os.O_WRONLY)
    os.dup2(null, 1)
    os.close(null)
    subprocess.run(["true"], check=True)
    os.dup2(saved, 1)
    os.close(saved)
    subprocess.Popen([sys.executable, "-c", LATE_CHILD, tag])
    return "started"


@server.tool(output="result")
def python_dev_stderr(mode: str) -> str:
    """Prints, writes twice through its own opens of /dev/stderr in `mode`, prints again."""
    print("python before", flush=True)
    for line in ("direct one", "direct two"):
        with open("/dev/stderr", mode, encoding="utf-8") as stream:
            stream.write(line + "\n")
    print("python after", flush=True)
    return "done"


@server.tool(output="result")
def speak(word: str) -> str:
    """Prints a word, and a child prints it too."""
    print(f"python says {word}", flush=True)
    subprocess.run(["sh", "-c", f"echo child says {word}"], check=True)
    return word


@server.tool(output="result")
def chatter(lines: int) -> str:
    """Prints that many lines."""
    for i in range(lines):
        print(f"chatter line {i}")
    return "done"


@server.tool(output="result")
def dev_stderr(redirect: str) -> str:
    """Prints, has a shell write through /dev/stderr (`>>` or `>`), prints again."""
    print("python before", flush=True)
    subprocess.run(["sh", "-c", f"echo shell one {redirect} /dev/stderr"], check=True)
    subprocess.run(["sh", "-c", f"echo shell two {redirect} /dev/stderr"], check=True)
    print("python after", flush=True)
    return "done"


@server.tool(output="result")
def c_dev_stderr(how: str) -> str:
    """Prints, then C code the interpreter knows nothing of opens /dev/stderr with truncation
    twice: C's own `system()` running a shell's `>` (`how="system"`), or C's own
    `fopen("/dev/stderr", "w")` (`how="fopen"`); prints again."""
    print("python before", flush=True)
    for word in ("one", "two"):
        if how == "system":
            assert LIBC.system(f"echo c {word} > /dev/stderr".encode()) == 0
        else:
            stream = LIBC.fopen(b"/dev/stderr", b"w")
            assert stream, "fopen /dev/stderr"
            LIBC.fputs(f"c {word}\n".encode(), stream)
            LIBC.fclose(stream)
    print("python after", flush=True)
    return "done"


if __name__ == "__main__":
    server.run()
