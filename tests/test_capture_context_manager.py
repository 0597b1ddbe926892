"""``with mcpline.capture() as out:`` captures fds 1 and 2 and always gives them back.

Every case runs as a subprocess script (pytest's own capture replaces sys.stdout/sys.stderr and
would hide what reaches the real descriptors). A script writes its findings as JSON to the path
in ``sys.argv[1]``; the test then also checks what reached the script's real stdout/stderr.
"""

import json
import subprocess
import sys
import textwrap
from typing import Any

PRELUDE = textwrap.dedent(
    """
    import json, os, subprocess, sys, threading
    import mcpline

    def report(**findings):
        with open(sys.argv[1], "w") as f:
            json.dump(findings, f)
    """
)


def run_script(tmp_path, body: str) -> tuple[subprocess.CompletedProcess, dict[str, Any]]:
    script = tmp_path / "script.py"
    script.write_text(PRELUDE + textwrap.dedent(body))
    findings = tmp_path / "findings.json"
    ran = subprocess.run(
        [sys.executable, str(script), str(findings)], capture_output=True, timeout=60
    )
    assert findings.exists(), (ran.returncode, ran.stdout, ran.stderr)
    return ran, json.loads(findings.read_text())


def test_print_fd_writes_and_a_child_are_captured_with_their_byte_count(tmp_path):
    ran, found = run_script(
        tmp_path,
        """
        with mcpline.capture() as out:
            print("PY-PRINT-FLUSHED", flush=True)
            print("PY-PRINT-BUFFERED")  # left in sys.stdout's buffer: capture flushes it
            print("PY-STDERR", file=sys.stderr)
            os.write(1, b"FD1-WRITE\\n")
            os.write(2, b"FD2-WRITE\\n")
            subprocess.run(["sh", "-c", "echo CHILD-OUT; echo CHILD-ERR >&2"], check=True)
        report(text=out.text, total_bytes=out.total_bytes)
        """,
    )
    assert ran.returncode == 0, ran.stderr
    expected = [
        "PY-PRINT-FLUSHED",
        "PY-PRINT-BUFFERED",
        "PY-STDERR",
        "FD1-WRITE",
        "FD2-WRITE",
        "CHILD-OUT",
        "CHILD-ERR",
    ]
    assert sorted(found["text"].splitlines()) == sorted(expected), found
    assert found["text"].endswith("\n"), found
    assert found["total_bytes"] == sum(len(line) + 1 for line in expected), found
    assert found["total_bytes"] == len(found["text"].encode()), found
    for line in expected:
        assert line.encode() not in ran.stdout + ran.stderr, (ran.stdout, ran.stderr)


def test_an_empty_capture_has_empty_text_and_zero_bytes(tmp_path):
    ran, found = run_script(
        tmp_path,
        """
        with mcpline.capture() as out:
            pass
        report(text=out.text, total_bytes=out.total_bytes)
        """,
    )
    assert ran.returncode == 0, ran.stderr
    assert found == {"text": "", "total_bytes": 0}


def test_after_the_block_writes_reach_the_real_stdout_and_stderr_again(tmp_path):
    ran, found = run_script(
        tmp_path,
        """
        print("BEFORE")  # still in sys.stdout's buffer: flushed before redirecting
        with mcpline.capture() as out:
            print("INSIDE", flush=True)
        print("AFTER-PRINT", flush=True)
        os.write(1, b"AFTER-FD1\\n")
        subprocess.run(["sh", "-c", "echo AFTER-CHILD"], check=True)
        print("AFTER-STDERR", file=sys.stderr, flush=True)
        os.write(2, b"AFTER-FD2\\n")
        report(text=out.text)
        """,
    )
    assert ran.returncode == 0, ran.stderr
    assert found["text"] == "INSIDE\n"
    assert ran.stdout == b"BEFORE\nAFTER-PRINT\nAFTER-FD1\nAFTER-CHILD\n"
    assert ran.stderr == b"AFTER-STDERR\nAFTER-FD2\n"


def test_a_nested_capture_is_a_window_onto_the_outer_one(tmp_path):
    ran, found = run_script(
        tmp_path,
        """
        with mcpline.capture() as out:
            print("OUTER-BEFORE", flush=True)
            with mcpline.capture() as inner:
                print("INNER-BODY", flush=True)
                os.write(2, b"INNER-FD2\\n")
            print("OUTER-AFTER", flush=True)
        print("REAL-STDOUT", flush=True)
        report(text=out.text, inner=inner.text, inner_bytes=inner.total_bytes)
        """,
    )
    assert ran.returncode == 0, ran.stderr
    assert found["inner"].splitlines() == ["INNER-BODY", "INNER-FD2"], found
    assert found["inner_bytes"] == len("INNER-BODY\nINNER-FD2\n"), found
    # The outer capture keeps every byte, the window's included.
    assert found["text"].splitlines() == [
        "OUTER-BEFORE",
        "INNER-BODY",
        "INNER-FD2",
        "OUTER-AFTER",
    ], found
    assert ran.stdout == b"REAL-STDOUT\n"
    assert b"OUTER" not in ran.stderr, ran.stderr


def test_capture_errors_are_mcpline_CaptureError(tmp_path):
    # The capture() docstring and DESIGN.md §5 promise ``mcpline.CaptureError``.
    ran, found = run_script(
        tmp_path,
        """
        from mcpline import _core

        cell = _core.CaptureCell.begin()
        cell.finish()
        try:
            cell.finish()
        except Exception as e:
            error = e
        exported = getattr(mcpline, "CaptureError", None)
        report(
            raised=f"{type(error).__module__}.{type(error).__qualname__}",
            message=str(error),
            exported=exported is not None,
            is_instance=exported is not None and isinstance(error, exported),
        )
        """,
    )
    assert ran.returncode == 0, ran.stderr
    assert found["exported"], f"mcpline has no attribute CaptureError (raised: {found['raised']})"
    assert found["is_instance"], found
    assert "already finished" in found["message"], found


def test_a_capture_in_another_thread_while_one_is_active_is_a_window_onto_it(tmp_path):
    ran, found = run_script(
        tmp_path,
        """
        seen = {}

        def other():
            with mcpline.capture() as window:
                os.write(1, b"OTHER-THREAD\\n")
            seen["window"] = window.text

        with mcpline.capture() as out:
            os.write(1, b"MAIN-1\\n")
            worker = threading.Thread(target=other)
            worker.start()
            worker.join()
            os.write(1, b"MAIN-2\\n")
        report(text=out.text, **seen)
        """,
    )
    assert ran.returncode == 0, ran.stderr
    assert found["window"] == "OTHER-THREAD\n", found
    assert found["text"] == "MAIN-1\nOTHER-THREAD\nMAIN-2\n", found


def test_a_raising_block_restores_the_descriptors_and_the_exception_propagates(tmp_path):
    ran, found = run_script(
        tmp_path,
        """
        propagated = None
        try:
            with mcpline.capture() as out:
                print("IN-RAISING-BLOCK", flush=True)
                os.write(2, b"IN-RAISING-BLOCK-FD2\\n")
                raise ValueError("boom")
        except ValueError as e:
            propagated = str(e)
        print("AFTER-RAISE", flush=True)
        os.write(2, b"AFTER-RAISE-FD2\\n")
        # the cell is free again: a new capture can begin
        with mcpline.capture() as again:
            os.write(1, b"SECOND-CAPTURE\\n")
        report(propagated=propagated, text=out.text, again=again.text)
        """,
    )
    assert ran.returncode == 0, ran.stderr
    assert found["propagated"] == "boom"
    assert ran.stdout == b"AFTER-RAISE\n"
    assert ran.stderr == b"AFTER-RAISE-FD2\n"
    assert found["text"] == "IN-RAISING-BLOCK\nIN-RAISING-BLOCK-FD2\n", found
    assert found["again"] == "SECOND-CAPTURE\n", found


def test_limit_keeps_the_tail_with_a_truncation_marker(tmp_path):
    ran, found = run_script(
        tmp_path,
        """
        with mcpline.capture(limit=100) as out:
            for i in range(1000):
                os.write(1, f"line {i:04d}\\n".encode())  # 10 bytes each
        with mcpline.capture(limit=1_000_000) as whole:
            os.write(1, b"short\\n")
        report(
            text=out.text, total_bytes=out.total_bytes,
            whole=whole.text, whole_bytes=whole.total_bytes,
        )
        """,
    )
    assert ran.returncode == 0, ran.stderr
    assert found["total_bytes"] == 10_000, found["total_bytes"]
    text = found["text"]
    tail = "".join(f"line {i:04d}\n" for i in range(990, 1000))
    assert text.endswith(tail), text
    marker = text[: -len(tail)]
    assert "9900" in marker and "earlier bytes not shown" in marker, marker
    assert marker.endswith("\n") and marker.count("\n") == 1, marker
    assert len(marker.encode()) < 64, marker
    # a limit larger than the capture: no marker at all
    assert found["whole"] == "short\n"
    assert found["whole_bytes"] == 6


def test_limit_never_cuts_a_character_in_half(tmp_path):
    ran, found = run_script(
        tmp_path,
        """
        with mcpline.capture(limit=51) as out:
            os.write(1, "é".encode() * 100)  # 200 bytes, two per character
        report(text=out.text, total_bytes=out.total_bytes)
        """,
    )
    assert ran.returncode == 0, ran.stderr
    assert found["total_bytes"] == 200
    marker, _, body = found["text"].partition("\n")
    assert "earlier bytes not shown" in marker, found
    assert body == "é" * 25, body  # 50 bytes: the lone continuation byte is left out
    assert "\ufffd" not in found["text"], found
