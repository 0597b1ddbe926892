"""Windows: ``mcpline.capture()`` catches every way a process writes to descriptors 1 and 2.

Run by the Windows CPython under wine (tests/windows/run.sh) with ``-s``, so that descriptors 1
and 2 of this process are the real ones (pipes). The writers are in ../servers/writers.py:
Python's streams, ``os.write``, Python / ``cmd`` / ``os.system`` children and the UCRT (``_write``,
``printf`` flushed or left in the C buffer).
"""

import subprocess
import sys
import textwrap
from pathlib import Path

import mcpline
import pytest

# The writers and the server these tests share with the Linux side.
sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "servers"))

from writers import WRITERS, expected_line

SERVERS_DIR = Path(__file__).resolve().parents[1] / "servers"

# print() must reach descriptor 1: pytest's own capture (anything but -s) replaces sys.stdout.
pytestmark = pytest.mark.skipif(
    sys.stdout is not sys.__stdout__, reason="needs pytest -s (tests/windows/run.sh passes it)"
)


@pytest.mark.parametrize("writer", list(WRITERS))
def test_capture_receives_the_line_each_path_writes(writer):
    line = expected_line(writer, "CAPTURED")
    _, write = WRITERS[writer]
    with mcpline.capture() as out:
        write(line)
    assert line in out.text.splitlines(), out.text
    assert out.total_bytes >= len(line)


def test_each_line_written_inside_one_capture_appears_in_it_exactly_once():
    with mcpline.capture() as out:
        for writer, (_, write) in WRITERS.items():
            write(expected_line(writer, "ONCE"))
    lines = out.text.splitlines()
    for writer in WRITERS:
        assert lines.count(expected_line(writer, "ONCE")) == 1, (writer, lines)


def test_a_second_capture_while_one_is_open_is_a_window_onto_it():
    with mcpline.capture() as out:
        with mcpline.capture() as window:
            print("in the window", flush=True)
        print("still captured", flush=True)
    assert window.text.splitlines() == ["in the window"]
    assert out.text.splitlines()[-2:] == ["in the window", "still captured"]


# A child Windows process so that its real stdout and stderr are pipes this test can read: what
# was captured must not appear there, and every path must reach them again after the capture.
AFTER_CAPTURE = textwrap.dedent(
    """
    import sys
    sys.path.insert(0, sys.argv[1])
    import mcpline
    from writers import WRITERS, expected_line

    with mcpline.capture() as out:
        for name, (_, write) in WRITERS.items():
            write(expected_line(name, "INSIDE"))
    for name, (_, write) in WRITERS.items():
        write(expected_line(name, "AFTER"))
    captured = out.text.splitlines()
    missing = [n for n in WRITERS if expected_line(n, "INSIDE") not in captured]
    sys.exit(f"not captured: {missing}" if missing else 0)
    """
)


@pytest.fixture(scope="module")
def after_capture():
    """The child's real stdout (1) and stderr (2), as lines."""
    done = subprocess.run(
        [sys.executable, "-c", AFTER_CAPTURE, str(SERVERS_DIR)],
        input=b"",
        capture_output=True,
        timeout=120,
    )
    assert done.returncode == 0, done.stderr.decode(errors="replace")
    streams = {
        1: done.stdout.decode(errors="replace").splitlines(),
        2: done.stderr.decode(errors="replace").splitlines(),
    }
    return streams


@pytest.mark.parametrize("writer", list(WRITERS))
def test_after_a_capture_each_path_reaches_the_real_stream_again(after_capture, writer):
    fd, _ = WRITERS[writer]
    assert expected_line(writer, "AFTER") in after_capture[fd], after_capture


def test_nothing_written_inside_a_capture_reaches_the_real_streams(after_capture):
    # The child exits non-zero unless its capture holds every INSIDE line.
    leaked = [line for lines in after_capture.values() for line in lines if "INSIDE" in line]
    assert leaked == []
