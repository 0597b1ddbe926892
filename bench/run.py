"""Benchmark driver: start-up, throughput, latency and memory of mcpline against its peers.

    python bench/run.py [--scenario add|stderr10|all] [--peers mcpline,stdlib,sdk]
                        [--variant NAME=PYTHON ...] [--rounds 5] [--calls 50000] [--json FILE]

Each peer serves the same tools over stdio (`bench/peers/`); the compiled client
`mcpline-bench` (`cargo build --release -p mcpline-bench`) drives them, so the client is never
the bottleneck, and checks every response. A 2-core machine is noisy, so the peers take turns
for several rounds and each figure is the median over the rounds. `--variant before=PYTHON`
adds the mcpline peer run by another interpreter (another venv, another build) to the same
rounds. Build mcpline in release mode first (`MATURIN_PROFILE=release make build`): a dev build
is unoptimised. See bench/README.md for what each column means.
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import sys
import tempfile
from dataclasses import asdict, dataclass
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parent.parent
HERE = ROOT / "bench" / "peers"
SCRIPTS = {
    "mcpline": HERE / "mcpline_server.py",
    "stdlib": HERE / "stdlib_loop.py",
    "sdk": HERE / "sdk_server.py",
}
# Metrics of one peer in one scenario; "start" is per peer and shown in every scenario.
METRICS = ("start_ms", "idle_kib", "calls_per_s", "p50_us", "p99_us", "peak_kib")


@dataclass(frozen=True)
class Scenario:
    name: str
    tool: str
    args: dict[str, Any]
    about: str


SCENARIOS = {
    "add": Scenario("add", "add", {"a": 1, "b": 2}, "add(a, b) -> int"),
    "stderr10": Scenario(
        "stderr10",
        "shout",
        {"text": "hello"},
        "shout(text) writes 10 lines to stderr per call (mcpline captures them)",
    ),
}


@dataclass(frozen=True)
class Peer:
    name: str
    argv: list[str]
    slow: bool = False  # the SDK: call counts are capped


@dataclass(frozen=True)
class Counts:
    starts: int
    pipelined: int
    lockstep: int
    warmup: int
    burst: int


def default_client() -> Path:
    target = Path(os.environ.get("CARGO_TARGET_DIR") or ROOT / "target")
    return target / "release" / "mcpline-bench"


class Bench:
    def __init__(self, client: Path, timeout: int, pycache: Path) -> None:
        self.client = client
        self.timeout = timeout
        # Servers start as they would from an installed wheel, with their bytecode cached: in a
        # directory of this run's own, so no checkout is written to, and never disabled (with
        # PYTHONDONTWRITEBYTECODE every start would compile mcpline's sources again).
        self.env = {k: v for k, v in os.environ.items() if k != "PYTHONDONTWRITEBYTECODE"}
        self.env["PYTHONPYCACHEPREFIX"] = str(pycache)

    def measure(
        self, mode: str, peer: Peer, count: int, scenario: Scenario, *extra: str
    ) -> dict[str, Any]:
        cmd = [
            str(self.client),
            mode,
            "-n",
            str(count),
            "--tool",
            scenario.tool,
            "--args",
            json.dumps(scenario.args),
            "--timeout",
            str(self.timeout),
            *extra,
            "--",
            *peer.argv,
        ]
        proc = subprocess.run(cmd, capture_output=True, text=True, check=False, env=self.env)
        if proc.returncode != 0:
            sys.exit(f"{peer.name} {scenario.name} {mode} failed:\n{proc.stderr.strip()}")
        report: dict[str, Any] = json.loads(proc.stdout)
        return report


def run_rounds(
    bench: Bench,
    peers: list[Peer],
    scenarios: list[Scenario],
    counts: Counts,
    rounds: int,
    sdk_cap: int,
) -> dict[str, dict[str, dict[str, list[float]]]]:
    """samples[scenario][peer][metric]: one value per round (all samples for start_ms)."""
    samples: dict[str, dict[str, dict[str, list[float]]]] = {
        sc.name: {p.name: {m: [] for m in METRICS} for p in peers} for sc in scenarios
    }
    for peer in peers:  # untimed: fills the bytecode cache
        bench.measure("start", peer, 1, scenarios[0])
    for r in range(rounds):
        for peer in peers:
            print(f"round {r + 1}/{rounds}: {peer.name}", file=sys.stderr, flush=True)

            def cap(n: int, limit: int = sdk_cap, peer: Peer = peer) -> int:
                return min(n, limit) if peer.slow else n

            warm = ("--warmup", str(cap(counts.warmup, sdk_cap // 10)))
            first = scenarios[0]
            start = bench.measure("start", peer, counts.starts, first)
            for sc in scenarios:
                row = samples[sc.name][peer.name]
                row["start_ms"].extend(start["samples_ms"])
                piped = bench.measure("pipelined", peer, cap(counts.pipelined), sc, *warm)
                row["calls_per_s"].append(piped["calls_per_s"])
                lock = bench.measure("lockstep", peer, cap(counts.lockstep), sc, *warm)
                row["p50_us"].append(lock["p50_us"])
                row["p99_us"].append(lock["p99_us"])
                burst = bench.measure("burst", peer, counts.burst, sc)
                if burst["idle_rss_kib"] is not None:
                    row["idle_kib"].append(burst["idle_rss_kib"])
                    row["peak_kib"].append(burst["peak_rss_kib"])
    return samples


def medians(rows: dict[str, dict[str, list[float]]]) -> dict[str, dict[str, float | None]]:
    return {
        peer: {m: statistics.median(v) if v else None for m, v in metrics.items()}
        for peer, metrics in rows.items()
    }


HEADER = ("cold start", "idle RSS", "calls/s", "p50", "p99", "burst peak")


def cells(row: dict[str, float | None]) -> list[str]:
    def fmt(value: float | None, spec: str, unit: str) -> str:
        return "-" if value is None else f"{value:{spec}}{unit}"

    return [
        fmt(row["start_ms"], ".1f", " ms"),
        fmt(None if row["idle_kib"] is None else row["idle_kib"] / 1024, ".1f", " MiB"),
        fmt(row["calls_per_s"], ",.0f", ""),
        fmt(row["p50_us"], ".1f", " µs"),
        fmt(row["p99_us"], ".1f", " µs"),
        fmt(None if row["peak_kib"] is None else row["peak_kib"] / 1024, ".1f", " MiB"),
    ]


def ratio_cells(row: dict[str, float | None], ref: dict[str, float | None]) -> list[str]:
    out = []
    for m in METRICS:
        a, b = row[m], ref[m]
        out.append("-" if a is None or not b else f"x{a / b:.2f}")
    return out


def table(title: str, rows: list[tuple[str, list[str]]]) -> str:
    first = max(len(title), *(len(name) for name, _ in rows))
    widths = [max(len(h), *(len(c[i]) for _, c in rows)) for i, h in enumerate(HEADER)]

    def line(name: str, row: list[str]) -> str:
        cols = zip(row, widths, strict=True)
        return f"{name:<{first}}  " + "  ".join(c.rjust(w) for c, w in cols)

    return "\n".join([line(title, list(HEADER)), *(line(name, row) for name, row in rows)])


def report(
    scenario: Scenario, figures: dict[str, dict[str, float | None]], variants: list[str]
) -> str:
    out = [f"scenario {scenario.name}: {scenario.about}", ""]
    out.append(table("peer", [(name, cells(row)) for name, row in figures.items()]))
    # The mcpline builds against the stdlib loop and the SDK, then mcpline against each variant.
    builds = [p for p in figures if p == "mcpline" or p in variants]
    pairs: list[tuple[str, str]] = [
        (p, ref) for ref in ("stdlib", "sdk") if ref in figures for p in builds
    ]
    pairs += [("mcpline", v) for v in variants if "mcpline" in figures]
    if pairs:
        ratios = [(f"{p}/{ref}", ratio_cells(figures[p], figures[ref])) for p, ref in pairs]
        out += ["", table("ratio", ratios)]
    return "\n".join(out)


def check_interpreter(name: str, python: str) -> str:
    """Where `import mcpline` resolves for this interpreter (it must have a built extension)."""
    probe = "import mcpline, mcpline._core; print(mcpline.__file__)"
    proc = subprocess.run([python, "-c", probe], capture_output=True, text=True, check=False)
    if proc.returncode != 0:
        sys.exit(f"{name}: {python} cannot import mcpline._core:\n{proc.stderr.strip()}")
    return str(Path(proc.stdout.strip()).parent)


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--scenario", choices=[*SCENARIOS, "all"], default="all")
    ap.add_argument("--peers", default="mcpline,stdlib,sdk", help="comma-separated")
    ap.add_argument(
        "--variant",
        action="append",
        default=[],
        metavar="NAME=PYTHON",
        help="also run the mcpline peer with this interpreter (repeatable)",
    )
    ap.add_argument("--rounds", type=int, default=5)
    ap.add_argument("--starts", type=int, default=10, help="cold starts per peer and round")
    ap.add_argument("--calls", type=int, default=50000, help="pipelined calls per run")
    ap.add_argument("--lockstep", type=int, default=5000, help="lock-step calls per run")
    ap.add_argument("--warmup", type=int, default=500, help="untimed calls before each run")
    ap.add_argument("--burst", type=int, default=10000, help="requests sent at once")
    ap.add_argument("--sdk-cap", type=int, default=2000, help="call-count cap for the SDK")
    ap.add_argument("--timeout", type=int, default=600, help="seconds per client run")
    ap.add_argument("--client", type=Path, default=default_client())
    ap.add_argument("--json", type=Path, help="also write samples and medians to this file")
    ns = ap.parse_args()

    if not ns.client.is_file():
        sys.exit(f"{ns.client} not found: cargo build --release -p mcpline-bench")
    peers: list[Peer] = []
    for name in ns.peers.split(","):
        if name not in SCRIPTS:
            sys.exit(f"unknown peer {name!r}: choose among {', '.join(SCRIPTS)}")
        peers.append(Peer(name, [sys.executable, str(SCRIPTS[name])], slow=name == "sdk"))
    variants: list[str] = []
    for spec in ns.variant:
        name, sep, python = spec.partition("=")
        if not sep or not name or not python or name in SCRIPTS or name in variants:
            sys.exit(f"--variant {spec!r}: expected NAME=PYTHON with a new NAME")
        variants.append(name)
        peers.append(Peer(name, [python, str(SCRIPTS["mcpline"])]))
    where = {
        p.name: check_interpreter(p.name, p.argv[0])
        for p in peers
        if p.name == "mcpline" or p.name in variants
    }
    scenarios = list(SCENARIOS.values()) if ns.scenario == "all" else [SCENARIOS[ns.scenario]]
    counts = Counts(ns.starts, ns.calls, ns.lockstep, ns.warmup, ns.burst)

    with tempfile.TemporaryDirectory(prefix="mcpline-bench-pycache-") as pycache:
        bench = Bench(ns.client, ns.timeout, Path(pycache))
        samples = run_rounds(bench, peers, scenarios, counts, ns.rounds, ns.sdk_cap)
    figures = {sc: medians(rows) for sc, rows in samples.items()}
    for sc in scenarios:
        print(report(sc, figures[sc.name], variants))
        print()
    for name, path in where.items():
        print(f"{name}: {next(p.argv[0] for p in peers if p.name == name)} (mcpline from {path})")
    capped = f" (sdk: {ns.sdk_cap} at most)" if "sdk" in ns.peers.split(",") else ""
    print(
        f"python {sys.version.split()[0]}, {os.cpu_count()} cpus, medians of {ns.rounds} rounds; "
        f"per run {ns.calls} pipelined and {ns.lockstep} lock-step calls{capped}, "
        f"{ns.burst} in the burst; {ns.starts} starts per round"
    )
    if ns.json:
        doc = {"counts": asdict(counts), "samples": samples, "medians": figures}
        ns.json.write_text(json.dumps(doc, indent=1) + "\n")


if __name__ == "__main__":
    main()
