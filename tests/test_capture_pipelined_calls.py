"""Calls sent back to back (the next one already queued when one ends) each get exactly their
own output: quiet calls attach nothing, and what a call printed is never attached to, or
labelled with, a neighbour."""

import json

from conftest import SERVERS_DIR

FD_SERVER = SERVERS_DIR / "capture_fd_server.py"
ATTACHED = "Output of the tool run:"

CALLS = [
    ("quiet", {}),
    ("noisy", {"i": 2}),
    ("quiet", {}),
    ("quiet", {}),
    ("failing", {"i": 5}),
    ("quiet", {}),
    ("noisy", {"i": 7}),
    ("quiet", {}),
]


def texts(result):
    return [block["text"] for block in result["content"] if block["type"] == "text"]


def test_each_pipelined_call_gets_only_its_own_output(spawn):
    server = spawn(FD_SERVER)
    server.initialize()
    frames = [
        {
            "jsonrpc": "2.0",
            "id": 100 + n,
            "method": "tools/call",
            "params": {"name": name, "arguments": args},
        }
        for n, (name, args) in enumerate(CALLS)
    ]
    server.send_bytes(b"".join(json.dumps(frame).encode() + b"\n" for frame in frames))
    results = {}
    for _ in CALLS:
        response = server.recv()
        results[response["id"]] = response["result"]
    server.close_stdin()
    assert server.wait(10) == 0

    for n, (name, args) in enumerate(CALLS):
        shown = texts(results[100 + n])
        attached = [t for t in shown if t.startswith(ATTACHED)]
        if name == "quiet":
            assert shown == ["ok"], (n, shown)
            continue
        i = args["i"]
        assert len(attached) == 1, (n, shown)
        others = [
            other["i"] for other_name, other in CALLS if other_name != "quiet" and other["i"] != i
        ]
        for other in others:
            assert f" {other}\n" not in attached[0], (n, attached[0])
        if name == "noisy":
            assert f"noisy {i}\n" in attached[0] and f"noisy fd2 {i}\n" in attached[0]
        else:
            assert f"failing {i}\n" in attached[0]

    stderr = server.stderr_text()
    assert "[noisy #101] noisy fd2 2" in stderr, stderr
    assert "[noisy #106] noisy fd2 7" in stderr, stderr
    assert "[failing #104] failing 5" in stderr, stderr
    assert "[quiet #" not in stderr, stderr
