"""The resource limits a server enforces, each configurable on ``Server``, through a real
subprocess server. (The concurrency limit is specified in test_concurrency_async_tools.py, the
capture cap in test_capture_flood.py.)"""

from __future__ import annotations

import json
import threading

import mcpline
import pytest
from conftest import SERVERS_DIR

LIMITS = SERVERS_DIR / "limits_server.py"


def frame(request_id: int | str, method: str, params: dict | None = None) -> bytes:
    message = {"jsonrpc": "2.0", "id": request_id, "method": method}
    if params is not None:
        message["params"] = params
    return json.dumps(message).encode() + b"\n"


def sleepy(request_id: int, ms: int) -> bytes:
    return frame(request_id, "tools/call", {"name": "sleepy", "arguments": {"ms": ms}})


def test_a_line_longer_than_max_line_bytes_is_refused_by_id_and_the_next_lines_are_served(spawn):
    server = spawn(LIMITS, "max_line_bytes=1024")
    server.initialize()
    padding = {"_meta": {"pad": "x" * 2000}}
    server.send_bytes(frame(101, "ping", padding) + frame(102, "ping"))
    refused = server.recv()
    assert refused["id"] == 101
    assert refused["error"]["code"] == -32600
    assert "exceeds the 1024 byte line limit" in refused["error"]["message"]
    assert server.recv() == {"jsonrpc": "2.0", "id": 102, "result": {}}
    # A line just under the limit is served.
    server.send_bytes(frame(103, "ping", {"_meta": {"pad": "x" * 900}}))
    assert server.recv()["result"] == {}


def answer_order(server, count: int) -> list[int | str]:
    return [server.recv(timeout=15)["id"] for _ in range(count)]


def test_a_full_call_queue_pauses_reading_until_half_of_it_has_started(spawn):
    # Call 101 runs while 102-106 wait. With room for 4 waiting calls the reader stops at
    # 106 and reads the ping behind it only once calls have started: it is answered after
    # 101, but before the queue has run dry.
    flood = (
        sleepy(101, 300) + b"".join(sleepy(i, 100) for i in range(102, 107)) + frame("p", "ping")
    )
    bounded = spawn(LIMITS, "queue_capacity=4")
    bounded.initialize()
    bounded.send_bytes(flood)
    order = answer_order(bounded, 7)
    assert 0 < order.index("p") < order.index(106), order
    # With the default capacity the same ping is answered while call 101 still runs.
    roomy = spawn(LIMITS)
    roomy.initialize()
    roomy.send_bytes(flood)
    assert answer_order(roomy, 7)[0] == "p"


def test_a_client_flooding_a_small_queue_is_slowed_and_every_call_is_answered_in_order(spawn):
    server = spawn(LIMITS, "queue_capacity=2")
    server.initialize()
    count = 3000
    calls = b"".join(
        frame(i, "tools/call", {"name": "add", "arguments": {"a": i, "b": 1}})
        for i in range(101, 101 + count)
    )
    # The pipe fills while the reader waits for the queue: the client's write blocks, it
    # is not refused. A thread writes so this test can read at the same time.
    writer = threading.Thread(target=server.send_bytes, args=(calls,))
    writer.start()
    for i in range(101, 101 + count):
        answer = server.recv(timeout=15)
        assert answer["id"] == i
        assert answer["result"]["structuredContent"] == {"result": i + 1}
    writer.join(10)
    server.close_stdin()
    assert server.wait(10) == 0


@pytest.mark.parametrize(
    ("setting", "message"),
    [
        ({"max_line_bytes": 0}, "max_line_bytes must be positive"),
        ({"queue_capacity": 0}, "queue_capacity must be positive"),
        ({"max_concurrency": 0}, "max_concurrency must be positive"),
        ({"capture_cap": 1000}, "capture_cap must be at least 65536 bytes"),
    ],
)
def test_a_limit_that_cannot_work_is_refused_when_the_server_is_made(setting, message):
    with pytest.raises(ValueError, match=message):
        mcpline.Server("limits", **setting)
