"""``mcpline call`` run in a terminal: what the tool prints is captured, the result is shown.

On Windows, when stdout and stderr are a console, CPython writes them with a console writer that
keeps the console handle it found at start-up instead of following fds 1 and 2; the capture
would miss the tool's output (and the console handle used to be closed under it). So the command
runs with its stdout and stderr on a real terminal: a pty on POSIX, a pseudo-console on Windows
(the ``pywinpty`` package, ``winpty.PtyProcess``; run by the GitHub Windows job, which installs
it; without it the test fails when ``CI`` is set and is skipped otherwise).
"""

import os
import re
import subprocess
import sys
import threading
import time
from pathlib import Path

import pytest
from conftest import TESTS_DIR

REPO = TESTS_DIR.parent
DEADLINE = 60.0

SERVER = '''
import sys
from mcpline import Server

server = Server("console", output="result")

@server.tool
def shout() -> str:
    """Print to stdout and stderr."""
    print("TOOL-OUT", flush=True)
    print("TOOL-ERR", file=sys.stderr, flush=True)
    return "RESULT-DONE"
'''

# Terminal control sequences (conpty paints the screen with them).
ESCAPES = re.compile(r"\x1b(\[[0-?]*[ -/]*[@-~]|\][^\x07\x1b]*(\x07|\x1b\\)|[@-Z\\-_])")


def run_in_pty_posix(argv: list[str]) -> tuple[int, str]:
    import pty
    import select

    main, secondary = pty.openpty()
    proc = subprocess.Popen(
        argv, stdin=subprocess.DEVNULL, stdout=secondary, stderr=secondary, cwd=REPO
    )
    os.close(secondary)
    chunks = []
    deadline = time.monotonic() + DEADLINE
    while time.monotonic() < deadline:
        ready, _, _ = select.select([main], [], [], 0.5)
        if not ready:
            if proc.poll() is not None:
                break
            continue
        try:
            data = os.read(main, 65536)
        except OSError:  # EIO: the last writer closed the terminal
            break
        if not data:
            break
        chunks.append(data)
    os.close(main)
    code = proc.wait(timeout=DEADLINE)
    return code, b"".join(chunks).decode("utf-8", "replace")


def run_in_pty_windows(argv: list[str]) -> tuple[int, str]:
    try:
        from winpty import PtyProcess
    except ImportError:
        message = (
            "the Windows console test needs a pseudo-console: pip install 'pywinpty>=2.0' "
            "(the CI job must install it)"
        )
        if os.environ.get("CI"):
            pytest.fail(message)
        pytest.skip(message)
    proc = PtyProcess.spawn(argv, cwd=str(REPO), dimensions=(50, 500))
    chunks: list[str] = []

    def pump() -> None:  # read() blocks; a pseudo-console may not report its end at once
        try:
            while True:
                chunks.append(proc.read(65536))
        except (EOFError, OSError):
            pass

    reader = threading.Thread(target=pump, daemon=True)
    reader.start()
    deadline = time.monotonic() + DEADLINE
    while proc.isalive() and time.monotonic() < deadline:
        time.sleep(0.1)
    reader.join(timeout=5)  # what the terminal still holds
    code = proc.exitstatus
    proc.close(force=True)
    return code, "".join(chunks)


def test_call_in_a_terminal_captures_the_tools_output_and_shows_the_result(tmp_path: Path):
    server = tmp_path / "console_server.py"
    server.write_text(SERVER, encoding="utf-8")
    argv = [sys.executable, "-m", "mcpline", "call", str(server), "shout", "--json"]
    if sys.platform == "win32":
        code, shown = run_in_pty_windows(argv)
    else:
        code, shown = run_in_pty_posix(argv)
    text = ESCAPES.sub("", shown).replace("\r", "")
    assert code == 0, f"exit status {code}:\n{text}"
    assert "RESULT-DONE" in text, f"the result is not shown:\n{text}"
    # The attached output is a JSON string in the printed result: its line ends are escaped
    # (and are \r\n on Windows, where Python's text streams translate them).
    captured = re.search(r"TOOL-OUT(\\r)?\\nTOOL-ERR(\\r)?\\n", text)
    assert captured, f"the tool's output was not captured:\n{text}"
    # Printed past the capture, a line would reach the terminal as it is.
    stray = [line for line in text.splitlines() if line.strip() in ("TOOL-OUT", "TOOL-ERR")]
    assert not stray, f"the tool's output bypassed the capture:\n{text}"
