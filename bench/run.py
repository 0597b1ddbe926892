"""Benchmark driver: start-up, throughput, latency and memory of mcpline against its peers.

    python bench/run.py [--scenario add|stderr10|all] [--peers mcpline,stdlib,sdk]
                        [--variant NAME=PYTHON ...] [--rounds 5] [--calls 50000] [--json FILE]
    python bench/run.py --scenario http [--peers mcpline,sdk] [--python PYTHON]
                        [--clients 1,16,256] [--seconds 3] [--rounds 5]

Each peer serves the same tools over stdio (`bench/peers/`); the compiled client
`mcpline-bench` (`cargo build --release -p mcpline-bench`) drives them, so the client is never
the bottleneck, and checks every response. A 2-core machine is noisy, so the peers take turns
for several rounds and each figure is the median over the rounds. `--variant before=PYTHON`
adds the mcpline peer run by another interpreter (another venv, another build) to the same
rounds. Build mcpline in release mode first (`MATURIN_PROFILE=release make build`): a dev build
is unoptimised. See bench/README.md for what each column means.

`--scenario http` serves `add` over Streamable HTTP instead: each HTTP peer
(`bench/peers/*_http_server.py`, `asgi_fixed.py`) runs under uvicorn on a free port for the
whole run, and the client's `http` mode sends requests from 1, 16 and 256 concurrent keep-alive
connections; throughput and latency per peer and concurrency, medians over the rounds.
"""

from __future__ import annotations

import argparse
import json
import os
import signal
import socket
import statistics
import subprocess
import sys
import tempfile
import time
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
# The same tools over Streamable HTTP under uvicorn (`--scenario http`); `asgi` is not an MCP
# server but the ceiling of any Python app under the same uvicorn.
HTTP_SCRIPTS = {
    "mcpline": HERE / "mcpline_http_server.py",
    "sdk": HERE / "sdk_http_server.py",
    "sdk-default": HERE / "sdk_http_default_server.py",
    "asgi": HERE / "asgi_fixed.py",
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
    def __init__(self, client: Path, timeout: int, pycache: Path, unbuffered: bool) -> None:
        self.client = client
        self.timeout = timeout
        # Servers start as they would from an installed wheel, with their bytecode cached: in a
        # directory of this run's own, so no checkout is written to, and never disabled (with
        # PYTHONDONTWRITEBYTECODE every start would compile mcpline's sources again). And as a
        # host starts them: PYTHONUNBUFFERED only when asked for (a shell may have it set).
        dropped = {"PYTHONDONTWRITEBYTECODE", "PYTHONUNBUFFERED"}
        self.env = {k: v for k, v in os.environ.items() if k not in dropped}
        self.env["PYTHONPYCACHEPREFIX"] = str(pycache)
        if unbuffered:
            self.env["PYTHONUNBUFFERED"] = "1"

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


# -- Streamable HTTP ------------------------------------------------------------------------

HTTP_METRICS = ("requests_per_s", "p50_us", "p99_us")
HTTP_HEADER = ("requests/s", "p50", "p99")


@dataclass(frozen=True)
class HttpSettings:
    clients: list[int]
    seconds: float
    rounds: int
    revision: str
    uvicorn: list[str]  # --http/--loop for every peer


def free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        port: int = sock.getsockname()[1]
        return port


class HttpPeer:
    """A peer listening on a port of its own for the whole run; its stderr goes to a file."""

    def __init__(self, name: str, argv: list[str], env: dict[str, str], log: Path) -> None:
        self.name = name
        self.port = free_port()
        self.url = f"http://127.0.0.1:{self.port}/mcp"
        self.log = log
        with log.open("wb") as err:
            self.proc = subprocess.Popen(
                [*argv, str(self.port)],
                stdin=subprocess.DEVNULL,
                stdout=err,
                stderr=err,
                env=env,
            )

    def wait_listening(self, limit: float = 60.0) -> None:
        deadline = time.monotonic() + limit
        while time.monotonic() < deadline:
            if self.proc.poll() is not None:
                sys.exit(f"{self.name} exited with {self.proc.returncode}:\n{self.stderr()}")
            try:
                socket.create_connection(("127.0.0.1", self.port), timeout=1).close()
                return
            except OSError:
                time.sleep(0.05)
        self.stop()
        sys.exit(f"{self.name} did not listen on port {self.port} within {limit:.0f} s")

    def stderr(self) -> str:
        return self.log.read_text(errors="replace").strip()[-4000:]

    def stop(self) -> None:
        if self.proc.poll() is None:
            self.proc.send_signal(signal.SIGINT)  # uvicorn shuts down gracefully
            try:
                self.proc.wait(10)
            except subprocess.TimeoutExpired:
                self.proc.kill()
                self.proc.wait()


def http_measure(
    bench: Bench, peer: HttpPeer, settings: HttpSettings, clients: int, count: int, warmup: int
) -> dict[str, Any]:
    cmd = [
        str(bench.client),
        "http",
        "--url",
        peer.url,
        "--clients",
        str(clients),
        "-n",
        str(count),
        "--warmup",
        str(warmup),
        "--revision",
        settings.revision,
        "--timeout",
        str(bench.timeout),
    ]
    proc = subprocess.run(cmd, capture_output=True, text=True, check=False)
    if proc.returncode != 0:
        sys.exit(
            f"{peer.name} http --clients {clients} failed:\n{proc.stderr.strip()}\n"
            f"{peer.name}'s log:\n{peer.stderr()}"
        )
    report: dict[str, Any] = json.loads(proc.stdout)
    return report


def run_http(
    bench: Bench, peers: list[Peer], settings: HttpSettings, logs: Path
) -> tuple[dict[str, dict[str, dict[str, list[float]]]], dict[str, dict[str, int]]]:
    """samples[clients][peer][metric], one value per round, and the call count of each run.

    Every peer listens for the whole run. A first, untimed run per peer and concurrency warms
    it up and sizes the later runs to about `settings.seconds` each; then the peers take turns
    at each concurrency, round after round. Each run starts with an untimed warm-up of its own
    (at least two calls per connection)."""
    running = [
        HttpPeer(p.name, [*p.argv, *settings.uvicorn], bench.env, logs / f"{p.name}.log")
        for p in peers
    ]
    samples: dict[str, dict[str, dict[str, list[float]]]] = {
        str(c): {p.name: {m: [] for m in HTTP_METRICS} for p in running} for c in settings.clients
    }
    counts: dict[str, dict[str, int]] = {str(c): {} for c in settings.clients}
    try:
        for peer in running:
            peer.wait_listening()
            http_measure(bench, peer, settings, 1, 1, 0)  # answers, and correctly
        for c in settings.clients:
            for peer in running:
                print(f"sizing: {peer.name}, {c} clients", file=sys.stderr, flush=True)
                probe = http_measure(bench, peer, settings, c, max(20 * c, 500), 2 * c)
                rate = probe["requests_per_s"]
                counts[str(c)][peer.name] = max(int(rate * settings.seconds), 20 * c)
        for r in range(settings.rounds):
            for c in settings.clients:
                for peer in running:
                    print(
                        f"round {r + 1}/{settings.rounds}: {peer.name}, {c} clients",
                        file=sys.stderr,
                        flush=True,
                    )
                    count = counts[str(c)][peer.name]
                    run = http_measure(bench, peer, settings, c, count, max(2 * c, count // 20))
                    for m in HTTP_METRICS:
                        samples[str(c)][peer.name][m].append(run[m])
    finally:
        for peer in running:
            peer.stop()
    return samples, counts


def http_report(
    settings: HttpSettings,
    figures: dict[str, dict[str, dict[str, float | None]]],
    variants: list[str],
) -> str:
    peers = list(next(iter(figures.values())))
    builds = [p for p in peers if p == "mcpline" or p in variants]
    pairs: list[tuple[str, str]] = [
        (b, ref) for ref in ("sdk", "sdk-default", "asgi") if ref in peers for b in builds
    ]
    pairs += [("mcpline", v) for v in variants if "mcpline" in peers]
    rows: list[tuple[str, str, list[str]]] = []
    for c, by_peer in figures.items():
        for name, row in by_peer.items():
            rows.append(
                (
                    c,
                    name,
                    [
                        f"{row['requests_per_s']:,.0f}",
                        f"{row['p50_us']:,.0f} µs",
                        f"{row['p99_us']:,.0f} µs",
                    ],
                )
            )
        for a, ref in pairs:
            ratio = []
            for m in HTTP_METRICS:
                x, y = by_peer[a][m], by_peer[ref][m]
                ratio.append("-" if x is None or not y else f"x{x / y:.2f}")
            rows.append((c, f"{a}/{ref}", ratio))
    head = ("clients", "peer", *HTTP_HEADER)
    table = [head, *((c, name, *cols) for c, name, cols in rows)]
    widths = [max(len(r[i]) for r in table) for i in range(len(head))]
    lines = []
    for i, r in enumerate(table):
        if i > 1 and r[0] != table[i - 1][0]:
            lines.append("")
        left = f"{r[0]:>{widths[0]}}  {r[1]:<{widths[1]}}"
        lines.append(
            left + "  " + "  ".join(v.rjust(w) for v, w in zip(r[2:], widths[2:], strict=True))
        )
    about = (
        f"scenario http: add(a, b) over Streamable HTTP, revision {settings.revision}, "
        "one keep-alive connection per client"
    )
    return "\n".join([about, "", *lines])


def uvicorn_stack(python: str, choice: list[str]) -> str:
    """The Python version, and the HTTP parser and event loop uvicorn uses under `python` with
    these options."""
    probe = (
        "import importlib.util as u, sys; a = dict(zip(sys.argv[1::2], sys.argv[2::2]));"
        "h = a.get('--http', 'auto'); l = a.get('--loop', 'auto');"
        "h = ('httptools' if u.find_spec('httptools') else 'h11') if h == 'auto' else h;"
        "l = ('uvloop' if u.find_spec('uvloop') else 'asyncio') if l == 'auto' else l;"
        "import uvicorn; v = sys.version.split()[0];"
        "print(f'python {v}, uvicorn {uvicorn.__version__} ({h}, {l})')"
    )
    proc = subprocess.run(
        [python, "-c", probe, *choice], capture_output=True, text=True, check=False
    )
    if proc.returncode != 0:
        sys.exit(f"{python} cannot import uvicorn:\n{proc.stderr.strip()}")
    return proc.stdout.strip()


def choose_peers(
    names: str, scripts: dict[str, Path], python: str, variant_specs: list[str], kind: str
) -> tuple[list[Peer], list[str], dict[str, str]]:
    """The peers named (comma-separated) among `scripts`, run by `python`, plus the mcpline
    peer under each `--variant NAME=PYTHON`; the variant names; where each mcpline build is."""
    peers: list[Peer] = []
    for name in names.split(","):
        if name not in scripts:
            sys.exit(f"unknown {kind} {name!r}: choose among {', '.join(scripts)}")
        peers.append(Peer(name, [python, str(scripts[name])], slow=name == "sdk"))
    variants: list[str] = []
    for spec in variant_specs:
        name, sep, other = spec.partition("=")
        if not sep or not name or not other or name in scripts or name in variants:
            sys.exit(f"--variant {spec!r}: expected NAME=PYTHON with a new NAME")
        variants.append(name)
        peers.append(Peer(name, [other, str(scripts["mcpline"])]))
    where = {
        p.name: check_interpreter(p.name, p.argv[0])
        for p in peers
        if p.name == "mcpline" or p.name in variants
    }
    return peers, variants, where


def main_http(ns: argparse.Namespace) -> None:
    peers, variants, where = choose_peers(
        ns.peers or "mcpline,sdk", HTTP_SCRIPTS, str(ns.python), ns.variant, "HTTP peer"
    )
    uvicorn_args: list[str] = []
    if ns.uvicorn_http:
        uvicorn_args += ["--http", ns.uvicorn_http]
    if ns.uvicorn_loop:
        uvicorn_args += ["--loop", ns.uvicorn_loop]
    stacks = {p.argv[0]: uvicorn_stack(p.argv[0], uvicorn_args) for p in peers}
    settings = HttpSettings(
        clients=[int(c) for c in ns.clients.split(",")],
        seconds=ns.seconds,
        rounds=ns.rounds,
        revision=ns.revision,
        uvicorn=uvicorn_args,
    )
    with (
        tempfile.TemporaryDirectory(prefix="mcpline-bench-pycache-") as pycache,
        tempfile.TemporaryDirectory(prefix="mcpline-bench-http-logs-") as logs,
    ):
        bench = Bench(ns.client, ns.timeout, Path(pycache), ns.unbuffered)
        samples, counts = run_http(bench, peers, settings, Path(logs))
    figures = {c: medians(rows) for c, rows in samples.items()}
    print(http_report(settings, figures, variants))
    print()
    for name, path in where.items():
        print(f"{name}: {next(p.argv[0] for p in peers if p.name == name)} (mcpline from {path})")
    for python_path, stack in stacks.items():
        print(f"{python_path}: {stack}")
    sizes = "; ".join(
        f"{c} clients: " + ", ".join(f"{p} {n:,}" for p, n in by_peer.items())
        for c, by_peer in counts.items()
    )
    print(
        f"{os.cpu_count()} cpus, medians of {ns.rounds} rounds of about {ns.seconds:g} s per "
        f"run; calls per run: {sizes}"
    )
    if ns.json:
        doc = {
            "settings": asdict(settings),
            "counts": counts,
            "samples": samples,
            "medians": figures,
        }
        ns.json.write_text(json.dumps(doc, indent=1) + "\n")


def check_interpreter(name: str, python: str) -> str:
    """Where `import mcpline` resolves for this interpreter (it must have a built extension)."""
    probe = "import mcpline, mcpline._core; print(mcpline.__file__)"
    proc = subprocess.run([python, "-c", probe], capture_output=True, text=True, check=False)
    if proc.returncode != 0:
        sys.exit(f"{name}: {python} cannot import mcpline._core:\n{proc.stderr.strip()}")
    return str(Path(proc.stdout.strip()).parent)


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--scenario", choices=[*SCENARIOS, "all", "http"], default="all")
    ap.add_argument(
        "--peers", help="comma-separated (default mcpline,stdlib,sdk; for http mcpline,sdk)"
    )
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
    ap.add_argument(
        "--unbuffered",
        action="store_true",
        help="start the servers with PYTHONUNBUFFERED=1 (as some host configurations do)",
    )
    http = ap.add_argument_group("--scenario http")
    http.add_argument(
        "--python",
        default=sys.executable,
        help="interpreter of the HTTP peers, with mcpline, mcp and uvicorn (default: this one)",
    )
    http.add_argument("--clients", default="1,16,256", help="concurrencies, comma-separated")
    http.add_argument("--seconds", type=float, default=3.0, help="about how long each run takes")
    http.add_argument("--revision", default="2026-07-28", help="or a handshake one: 2025-06-18")
    http.add_argument("--uvicorn-http", help="h11 or httptools (default: uvicorn's choice)")
    http.add_argument("--uvicorn-loop", help="asyncio or uvloop (default: uvicorn's choice)")
    ns = ap.parse_args()

    if not ns.client.is_file():
        sys.exit(f"{ns.client} not found: cargo build --release -p mcpline-bench")
    if ns.scenario == "http":
        main_http(ns)
        return
    ns.peers = ns.peers or "mcpline,stdlib,sdk"
    peers, variants, where = choose_peers(ns.peers, SCRIPTS, sys.executable, ns.variant, "peer")
    scenarios = list(SCENARIOS.values()) if ns.scenario == "all" else [SCENARIOS[ns.scenario]]
    counts = Counts(ns.starts, ns.calls, ns.lockstep, ns.warmup, ns.burst)

    with tempfile.TemporaryDirectory(prefix="mcpline-bench-pycache-") as pycache:
        bench = Bench(ns.client, ns.timeout, Path(pycache), ns.unbuffered)
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
        + ("; PYTHONUNBUFFERED=1" if ns.unbuffered else "")
    )
    if ns.json:
        doc = {"counts": asdict(counts), "samples": samples, "medians": figures}
        ns.json.write_text(json.dumps(doc, indent=1) + "\n")


if __name__ == "__main__":
    main()
