"""Benchmark driver: cold start, pipelined throughput and idle memory, against peers in one run.

    python bench/run.py [--calls 20000] [--starts 10] [--rounds 5] [--peers mcpline,stdlib,sdk]

Every peer serves the same `add(a, b)` tool over stdio. Figures are printed as a table with
ratios against the stdlib loop (the bar mcpline must clear). A 2-core machine is noisy, so
the peers take turns for several rounds (start-ups and throughput runs interleaved) and each
figure is the median over the rounds. Build mcpline in release mode
first (`MATURIN_PROFILE=release make build`): a dev build is unoptimised.
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import sys
import threading
import time
from pathlib import Path

HERE = Path(__file__).parent / "peers"
PEERS = {
    "mcpline": [sys.executable, str(HERE / "mcpline_server.py")],
    "stdlib": [sys.executable, str(HERE / "stdlib_loop.py")],
    "sdk": [sys.executable, str(HERE / "sdk_server.py")],
}
INIT = {
    "jsonrpc": "2.0",
    "id": 0,
    "method": "initialize",
    "params": {
        "protocolVersion": "2025-06-18",
        "capabilities": {},
        "clientInfo": {"name": "bench", "version": "1"},
    },
}


def line(obj: object) -> bytes:
    return (json.dumps(obj) + "\n").encode()


def start(argv: list[str]) -> subprocess.Popen[bytes]:
    return subprocess.Popen(
        argv, stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=subprocess.DEVNULL
    )


def cold_start(argv: list[str]) -> float:
    """Seconds from spawn to the initialize response."""
    t0 = time.perf_counter()
    proc = start(argv)
    assert proc.stdin and proc.stdout
    proc.stdin.write(line(INIT))
    proc.stdin.flush()
    proc.stdout.readline()
    elapsed = time.perf_counter() - t0
    proc.stdin.close()
    proc.wait(10)
    return elapsed


def rss_kib(pid: int) -> int:
    for row in Path(f"/proc/{pid}/status").read_text().splitlines():
        if row.startswith("VmRSS:"):
            return int(row.split()[1])
    return 0


def throughput(argv: list[str], calls: int) -> tuple[float, int]:
    """Pipelined tools/call per second, and idle RSS (KiB) after initialize."""
    proc = start(argv)
    assert proc.stdin and proc.stdout
    proc.stdin.write(line(INIT))
    proc.stdin.write(line({"jsonrpc": "2.0", "method": "notifications/initialized"}))
    proc.stdin.flush()
    proc.stdout.readline()
    time.sleep(0.3)
    idle = rss_kib(proc.pid)
    payload = b"".join(
        line(
            {
                "jsonrpc": "2.0",
                "id": i + 1,
                "method": "tools/call",
                "params": {"name": "add", "arguments": {"a": i, "b": 1}},
            }
        )
        for i in range(calls)
    )

    def feed() -> None:
        assert proc.stdin
        proc.stdin.write(payload)
        proc.stdin.flush()

    t0 = time.perf_counter()
    writer = threading.Thread(target=feed)
    writer.start()
    got = 0
    for _ in proc.stdout:
        got += 1
        if got == calls:
            break
    elapsed = time.perf_counter() - t0
    writer.join()
    proc.stdin.close()
    proc.wait(30)
    if got != calls:
        raise RuntimeError(f"{argv}: {got} of {calls} responses")
    return calls / elapsed, idle


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--calls", type=int, default=20000)
    ap.add_argument("--starts", type=int, default=10)
    ap.add_argument("--rounds", type=int, default=5)
    ap.add_argument("--peers", default="mcpline,stdlib,sdk")
    ns = ap.parse_args()
    names = ns.peers.split(",")
    starts: dict[str, list[float]] = {name: [] for name in names}
    rates: dict[str, list[float]] = {name: [] for name in names}
    idles: dict[str, list[int]] = {name: [] for name in names}
    for _ in range(ns.rounds):
        for name in names:
            argv = PEERS[name]
            calls = ns.calls if name != "sdk" else min(ns.calls, 2000)
            starts[name].extend(cold_start(argv) for _ in range(ns.starts))
            rate, idle = throughput(argv, calls)
            rates[name].append(rate)
            idles[name].append(idle)
    rows = {
        name: (
            statistics.median(starts[name]),
            statistics.median(rates[name]),
            statistics.median(idles[name]),
        )
        for name in names
    }
    base = rows.get("stdlib")
    print(f"{'peer':<8} {'cold start':>11} {'calls/s':>10} {'idle RSS':>9}  vs stdlib loop")
    for name, (cold, rate, idle) in rows.items():
        ratio = ""
        if base:
            ratio = f"start x{cold / base[0]:.2f}, calls x{rate / base[1]:.2f}"
        print(f"{name:<8} {cold * 1000:>8.1f} ms {rate:>10.0f} {idle / 1024:>6.1f} MiB  {ratio}")
    print(f"python {sys.version.split()[0]}, {os.cpu_count()} cpus, medians of {ns.rounds} rounds")


if __name__ == "__main__":
    main()
