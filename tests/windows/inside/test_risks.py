"""Windows-only risks of the capture cell, run by a Windows CPython with ``mcpline`` importable.

Each case runs in a subprocess of its own (the cell changes process-wide descriptors, and the
interpreter's standard streams are part of what is tested), with pipes for its standard
streams. Plain pytest, subprocess and ctypes; no shared fixtures.

- A handle cached from ``GetStdHandle(STD_ERROR_HANDLE)`` before a capture stays valid during
  and after it, and writes to it go where stderr goes.
- A tool printing non-ASCII text while its streams would be in a legacy code page neither raises
  nor loses characters: the output arrives intact (serving, ``mcpline.capture()`` and the
  in-process client).
- A child writing bytes that are not UTF-8 gives replacement characters, never an exception.
"""

import json
import os
import subprocess
import sys
import textwrap

import pytest

pytestmark = pytest.mark.skipif(sys.platform != "win32", reason="Windows handles and code pages")

TEXT = "✓ naïve 日本"
TIMEOUT = 120


def run_python(code: str, stdin: bytes = b"", **env: str) -> subprocess.CompletedProcess[bytes]:
    environ = {k: v for k, v in os.environ.items() if k not in ("PYTHONUTF8", "PYTHONIOENCODING")}
    environ.update(env)
    return subprocess.run(
        [sys.executable, "-c", textwrap.dedent(code)],
        input=stdin,
        capture_output=True,
        env=environ,
        timeout=TIMEOUT,
    )


def describe(proc: subprocess.CompletedProcess[bytes]) -> str:
    return (
        f"exit {proc.returncode}\n--- stdout ---\n{proc.stdout.decode('utf-8', 'replace')}\n"
        f"--- stderr ---\n{proc.stderr.decode('utf-8', 'replace')}"
    )


def lf(text: str) -> str:
    """``text`` with Windows line ends as ``\\n`` (Python's streams write ``\\r\\n`` there)."""
    return text.replace("\r\n", "\n")


CACHED_HANDLE = r"""
import ctypes, sys
from ctypes import wintypes
import mcpline

kernel32 = ctypes.WinDLL("kernel32", use_last_error=True)
kernel32.GetStdHandle.restype = wintypes.HANDLE
kernel32.WriteFile.argtypes = [wintypes.HANDLE, ctypes.c_char_p, wintypes.DWORD,
                               ctypes.POINTER(wintypes.DWORD), ctypes.c_void_p]
STD_ERROR_HANDLE = -12
cached = kernel32.GetStdHandle(STD_ERROR_HANDLE)

def write_cached(text):
    data = text.encode()
    written = wintypes.DWORD()
    if not kernel32.WriteFile(cached, data, len(data), ctypes.byref(written), None):
        raise OSError(ctypes.get_last_error(), "WriteFile to the cached stderr handle failed")

with mcpline.capture() as out:
    write_cached("CACHED-DURING\n")
    print("TOOL-LINE", file=sys.stderr, flush=True)
write_cached("CACHED-AFTER\n")
assert out.text.replace("\r\n", "\n") == "TOOL-LINE\n", repr(out.text)
assert kernel32.GetStdHandle(STD_ERROR_HANDLE) == cached, "stderr slot changed"
print("PY-AFTER", file=sys.stderr, flush=True)
"""


def test_a_cached_stderr_handle_stays_valid_during_and_after_a_capture():
    proc = run_python(CACHED_HANDLE)
    assert proc.returncode == 0, describe(proc)
    stderr = lf(proc.stderr.decode("utf-8", "replace"))
    for line in ("CACHED-DURING", "CACHED-AFTER", "PY-AFTER"):
        assert f"{line}\n" in stderr, describe(proc)
    assert "TOOL-LINE" not in stderr, describe(proc)


SERVER = """
import subprocess, sys
from mcpline import Server

server = Server("risks", output="result")

@server.tool
def unicode() -> str:
    print(TEXT)
    print(TEXT, file=sys.stderr)
    return "printed"

@server.tool
def legacy_child() -> str:
    subprocess.run([sys.executable, "-c", "import os; os.write(1, b'caf\\\\xe9 ok\\\\n')"])
    return "child ran"
""".replace("TEXT", repr(TEXT))


def frames(*messages: dict) -> bytes:
    return b"".join(json.dumps(m).encode() + b"\n" for m in messages)


def serve_and_call(tool: str) -> tuple[dict, subprocess.CompletedProcess[bytes]]:
    requests = frames(
        {
            "jsonrpc": "2.0",
            "id": 1,
            "method": "initialize",
            "params": {
                "protocolVersion": "2025-11-25",
                "capabilities": {},
                "clientInfo": {"name": "risks", "version": "0"},
            },
        },
        {"jsonrpc": "2.0", "method": "notifications/initialized"},
        {"jsonrpc": "2.0", "id": 2, "method": "tools/call", "params": {"name": tool}},
    )
    # A legacy code page for the interpreter's streams, whatever the machine's settings.
    proc = run_python(SERVER + "\nserver.run()\n", requests, PYTHONIOENCODING="cp1252")
    for line in proc.stdout.splitlines():
        message = json.loads(line)
        if message.get("id") == 2:
            return message, proc
    raise AssertionError(f"no answer to the call\n{describe(proc)}")


def attached(message: dict) -> str:
    return lf("\n".join(c["text"] for c in message["result"]["content"] if c["type"] == "text"))


def test_a_served_tool_prints_unicode_in_utf8_whatever_the_code_page():
    message, proc = serve_and_call("unicode")
    assert not message["result"].get("isError"), attached(message)
    assert f"{TEXT}\n{TEXT}\n" in attached(message), describe(proc)
    # The log copy of the captured output is UTF-8 too.
    assert TEXT in proc.stderr.decode("utf-8"), describe(proc)


def test_output_of_a_child_that_is_not_utf8_is_replaced_not_raised():
    message, proc = serve_and_call("legacy_child")
    assert not message["result"].get("isError"), attached(message)
    assert "caf\ufffd ok" in attached(message), describe(proc)


CAPTURE_AND_CLIENT = (
    SERVER
    + """
import json, mcpline
from mcpline.testing import Client

with mcpline.capture() as out:
    print(TEXT)
with Client(server) as client:
    result = client.call("unicode")
report = {"capture": out.text, "client": result.text, "error": result.is_error}
sys.stdout.buffer.write(json.dumps(report).encode() + b"\\n")
""".replace("TEXT", repr(TEXT))
)


def test_capture_and_the_in_process_client_take_unicode_prints():
    proc = run_python(CAPTURE_AND_CLIENT, PYTHONIOENCODING="cp1252")
    assert proc.returncode == 0, describe(proc)
    report = json.loads(proc.stdout.decode().strip().splitlines()[-1])
    assert lf(report["capture"]) == f"{TEXT}\n", report
    assert not report["error"], report
    assert f"{TEXT}\n{TEXT}\n" in lf(report["client"]), report
