"""Soak: many mixed calls through one server process, checking every answer and its footprint.

    python bench/soak.py [--calls 1000000] [--window 64] [--json] [--python PYTHON]

Starts bench/soak_server.py as a host does (pipes, no terminal, no PYTHONUNBUFFERED), runs the
handshake, then pipelines a seeded mix with at most --window answers outstanding: quick calls,
structured results, tools that raise, tools that print to stdout and stderr, short sleeps
(sync and async), half of the sleeps cancelled a few frames after they were sent, arguments
the schema refuses, unknown tools and methods, pings, malformed lines and notifications.

It checks that every stdout line is JSON; that each request is answered exactly once with
its expected outcome, and a cancelled one at most once (a cancel can race with completion);
that notifications and unknown ids get no answer; and that the server exits 0 at end of input.
On Linux it samples the server's RSS, open descriptors and threads from /proc every
--calls/200 calls and fails when RSS grows by --rss-limit MiB or more between the end of the
warm-up (--warmup, default the first 10 % of calls) and the end, when descriptors rise more
than FD_SLACK above their warm-up count (the capture files the cell keeps for reuse), or when a
thread outlives its use (more threads at the end than at warm-up, or more than one short-lived
thread at once: the one that stops a cancelled sync call). Elsewhere those checks are skipped.
Exit status 0 when every check passes, 1 otherwise.
"""

from __future__ import annotations

import argparse
import json
import os
import random
import subprocess
import sys
import tempfile
import threading
import time
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Any

SERVER = Path(__file__).resolve().parent / "soak_server.py"
MIB = 1024 * 1024
# Descriptors a healthy server may add after warm-up: the capture cell keeps the files of the
# last few finished captures for reuse (RECENT in rust/mcpline-core/src/capture/late.rs) and
# makes them as calls first need them, so the count rises to that bound and stays there.
FD_SLACK = 4

# The mix, in thousandths of the calls. A "call" is one frame of the mix: a cancel
# notification is part of the call it cancels, not a call of its own.
MIX: dict[str, int] = {
    "add": 460,  # quick: structuredContent {"result": a + b}
    "summary": 100,  # structured data with an outputSchema
    "fail": 80,  # raises: isError, traceback attached
    "chatty": 80,  # prints 2 lines to stdout, 2 to stderr: attached to its result
    "nap": 25,  # sync sleep of NAP_MS; half are cancelled
    "async_nap": 25,  # async sleep of ASYNC_NAP_MS; half are cancelled
    "bad_args": 50,  # add(a="x...") : isError from the schema check
    "unknown_tool": 40,  # -32601
    "unknown_method": 40,  # -32601
    "ping": 30,  # {}
    "malformed": 40,  # not JSON, or not UTF-8: -32700 without an id
    "notification": 30,  # no answer
}
KIND_NAMES = tuple(MIX)
KIND = {name: code for code, name in enumerate(KIND_NAMES)}
NO_ANSWER = {KIND["notification"]}
NO_ID = {KIND["malformed"], KIND["notification"]}
SLEEPY = {KIND["nap"], KIND["async_nap"]}
NAP_MS = 2
ASYNC_NAP_MS = 3
CANCEL_SHARE = 0.5  # of the sleeps


def frame(kind: int, n: int) -> bytes:
    """Call ``n`` of kind ``kind`` as one line. Arguments derive from ``n`` so that the reader
    can check an answer without remembering what was sent."""
    name = KIND_NAMES[kind]
    if name == "malformed":
        if n % 2:
            return b'{"jsonrpc":"2.0","id":%d,"method":"tools/call","params":{"name":"add"\n' % n
        return b'{"jsonrpc":"2.0","method":"\xff\xfe"}\n'  # not UTF-8
    if name == "notification":
        return b'{"jsonrpc":"2.0","method":"notifications/soak/tick","params":{"n":%d}}\n' % n
    message: dict[str, Any] = {"jsonrpc": "2.0", "id": n}
    if name == "unknown_method":
        message["method"] = "soak/no_such_method"
    elif name == "ping":
        message["method"] = "ping"
    else:
        arguments: dict[str, Any] = {"n": n}
        if name == "add":
            arguments = {"a": n % 1000, "b": n // 1000}
        elif name == "nap":
            arguments["ms"] = NAP_MS
        elif name == "async_nap":
            arguments["ms"] = ASYNC_NAP_MS
        elif name == "bad_args":
            name, arguments = "add", {"a": f"x{n}", "b": 1}
        elif name == "unknown_tool":
            name, arguments = "no_such_tool", {}
        message["method"] = "tools/call"
        message["params"] = {"name": name, "arguments": arguments}
    return json.dumps(message, separators=(",", ":")).encode() + b"\n"


def cancel_frame(n: int) -> bytes:
    return b'{"jsonrpc":"2.0","method":"notifications/cancelled","params":{"requestId":%d}}\n' % n


def outcome_problem(kind: int, n: int, message: dict[str, Any]) -> str | None:
    """What is wrong with ``message`` as the answer to call ``n``, or None."""
    name = KIND_NAMES[kind]
    if name in ("unknown_tool", "unknown_method"):
        code = message.get("error", {}).get("code")
        return None if code == -32601 else f"expected error -32601, got {message}"
    result = message.get("result")
    if not isinstance(result, dict):
        return f"expected a result, got {message}"
    if name == "ping":
        return None if result == {} else f"expected {{}}, got {result}"
    texts = [block.get("text") for block in result.get("content", ())]
    if name in ("fail", "bad_args"):
        if result.get("isError") is not True:
            return f"expected isError, got {result}"
        want = f"ValueError: soak failure {n}" if name == "fail" else 'argument "a"'
        return None if texts and want in texts[0] else f"expected {want!r}, got {texts}"
    if result.get("isError"):
        return f"unexpected isError: {texts}"
    structured = result.get("structuredContent")
    if name == "add":
        expected: Any = {"result": n % 1000 + n // 1000}
    elif name == "summary":
        expected = {"n": n, "even": n % 2 == 0, "digits": [int(d) for d in str(n)]}
    else:  # chatty, nap, async_nap
        expected = {"result": n}
    if structured != expected:
        return f"expected structuredContent {expected}, got {structured}"
    if name == "chatty":
        output = f"Output of the tool run:\nout {n} a\nerr {n} a\nout {n} b\nerr {n} b\n"
        if texts != [str(n), output]:
            return f"expected its own four lines attached, got {texts}"
    return None


@dataclass
class Sample:
    calls: int  # calls sent when sampled
    seconds: float
    rss_kib: int
    fds: int
    threads: int
    cpu_s: float  # the server's user + system time so far


def sample(pid: int, calls: int, started: float) -> Sample | None:
    """The server's resident memory, open descriptors and threads, from /proc (Linux only)."""
    try:
        with open(f"/proc/{pid}/status", encoding="ascii") as status:
            rss = next(int(line.split()[1]) for line in status if line.startswith("VmRSS:"))
        fds = len(os.listdir(f"/proc/{pid}/fd"))
        threads = len(os.listdir(f"/proc/{pid}/task"))
        with open(f"/proc/{pid}/stat", encoding="ascii") as stat:
            # utime and stime: fields 14 and 15, counted after the ")" that ends the name.
            ticks = stat.read().rpartition(")")[2].split()[11:13]
    except (OSError, StopIteration):
        return None
    cpu = sum(map(int, ticks)) / os.sysconf("SC_CLK_TCK")
    return Sample(calls, time.monotonic() - started, rss, fds, threads, cpu)


def fd_table(pid: int) -> dict[int, str]:
    """The server's open descriptors and what each points to."""
    table = {}
    for fd in sorted(os.listdir(f"/proc/{pid}/fd"), key=int):
        try:
            table[int(fd)] = os.readlink(f"/proc/{pid}/fd/{fd}")
        except OSError:
            pass  # closed meanwhile
    return table


@dataclass
class Report:
    calls: int
    window: int
    seed: int
    warmup_calls: int
    seconds: float = 0.0
    calls_per_s: float = 0.0
    mix: dict[str, int] = field(default_factory=dict)
    cancelled: int = 0
    cancelled_answered: int = 0
    exit_code: int | None = None
    stderr_bytes: int = 0
    rss_kib: dict[str, int | None] = field(default_factory=dict)
    fds: dict[str, int | None] = field(default_factory=dict)
    threads: dict[str, int | None] = field(default_factory=dict)
    samples: list[Sample] = field(default_factory=list)
    fd_tables: list[dict[str, Any]] = field(default_factory=list)
    failures: list[str] = field(default_factory=list)  # answers and the process
    failure_count: int = 0
    footprint_failures: list[str] = field(default_factory=list)  # RSS, descriptors, threads


class Soak:
    """One server, a writer thread that keeps the window full, a reader thread that checks each
    answer as it arrives. Answers are counted per call in ``answers``; the lock guards the
    window and the answer/cancel bookkeeping, which the two threads both change."""

    def __init__(
        self,
        argv: list[str],
        calls: int,
        window: int,
        seed: int,
        warmup: int,
        mix: dict[str, int] = MIX,
        cancel_share: float = CANCEL_SHARE,
    ) -> None:
        self.cancel_share = cancel_share
        self.calls, self.window = calls, window
        self.rng = random.Random(seed)
        weights = [mix.get(name, 0) for name in KIND_NAMES]
        # kinds[n] is call n's kind; index 0 is unused (ids start at 1).
        self.kinds = bytearray([0, *self.rng.choices(range(len(KIND_NAMES)), weights, k=calls)])
        self.answers = bytearray(calls + 1)
        self.cancelled = bytearray(calls + 1)
        self.report = Report(calls, window, seed, warmup)
        self.warmup = warmup
        self.lock = threading.Condition()
        self.outstanding = 0  # answers awaited, within the window
        self.sent = 0
        self.malformed_sent = 0
        self.malformed_answered = 0
        self.answered = 0  # progress, for the stall watchdog
        self.last_fds = -1
        self.stderr = tempfile.TemporaryFile()
        env = {k: v for k, v in os.environ.items() if k != "PYTHONUNBUFFERED"}
        self.proc = subprocess.Popen(
            argv,
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            stderr=self.stderr,
            env=env,
            start_new_session=True,  # no controlling terminal, as under a host
        )
        self.started = time.monotonic()

    def fail(self, message: str) -> None:
        with self.lock:  # re-entrant: account() calls this holding it
            self.report.failure_count += 1
            if len(self.report.failures) < 20:
                self.report.failures.append(message)

    def take_sample(self) -> None:
        taken = sample(self.proc.pid, self.sent, self.started)
        if taken is None:
            return
        self.report.samples.append(taken)
        # What the descriptors are, at warm-up and whenever their count changes after it:
        # a growing table says itself what leaks.
        if self.sent >= self.warmup and taken.fds != self.last_fds:
            self.last_fds = taken.fds
            self.report.fd_tables.append({"calls": self.sent, "fds": fd_table(self.proc.pid)})

    # ----- the handshake -----

    def initialize(self) -> None:
        assert self.proc.stdin is not None and self.proc.stdout is not None
        params = {
            "protocolVersion": "2025-11-25",
            "capabilities": {},
            "clientInfo": {"name": "soak", "version": "1"},
        }
        hello = {"jsonrpc": "2.0", "id": "init", "method": "initialize", "params": params}
        self.proc.stdin.write(json.dumps(hello).encode() + b"\n")
        self.proc.stdin.flush()
        answer = json.loads(self.proc.stdout.readline() or b"null")
        if not isinstance(answer, dict) or "result" not in answer:
            raise RuntimeError(f"initialize failed: {answer!r}")
        self.proc.stdin.write(b'{"jsonrpc":"2.0","method":"notifications/initialized"}\n')
        self.proc.stdin.flush()

    # ----- writer -----

    def write_all(self) -> None:
        assert self.proc.stdin is not None
        stdin = self.proc.stdin
        pending: list[bytes] = []
        cancels: dict[int, list[int]] = {}  # due after call n is sent -> calls to cancel
        every = max(1, self.calls // 200)
        self.started = time.monotonic()
        try:
            for n in range(1, self.calls + 1):
                kind = self.kinds[n]
                if kind not in NO_ANSWER:
                    with self.lock:
                        full = self.outstanding >= self.window
                    if full:  # send what is held back (never under the lock: the reader
                        # would stop reading, and the server stop reading us), then wait
                        stdin.write(b"".join(pending))
                        stdin.flush()
                        pending.clear()
                    with self.lock:
                        self.lock.wait_for(lambda: self.outstanding < self.window)
                        self.outstanding += 1
                pending.append(frame(kind, n))
                if kind == KIND["malformed"]:
                    self.malformed_sent += 1
                if kind in SLEEPY and self.rng.random() < self.cancel_share:
                    # Anywhere from at once to a window later: the call may still be queued,
                    # be sleeping, or be answered already.
                    due = n + self.rng.randrange(self.window + 1)
                    cancels.setdefault(due, []).append(n)
                for target in cancels.pop(n, ()):
                    pending.append(self.cancel(target))
                self.sent = n
                if len(pending) >= 16:
                    stdin.write(b"".join(pending))
                    stdin.flush()
                    pending.clear()
                if n % every == 0 or n == self.warmup:
                    self.take_sample()
            for targets in cancels.values():
                pending.extend(self.cancel(target) for target in targets)
            stdin.write(b"".join(pending))
            stdin.flush()
        except (BrokenPipeError, ValueError) as e:
            self.fail(f"the server stopped reading after {self.sent} calls: {e!r}")

    def cancel(self, n: int) -> bytes:
        with self.lock:
            self.cancelled[n] = 1
            if not self.answers[n]:
                # It may never be answered: its place in the window is free.
                self.outstanding -= 1
                self.lock.notify()
        return cancel_frame(n)

    # ----- reader -----

    def read_all(self) -> None:
        assert self.proc.stdout is not None
        stdout = self.proc.stdout
        rest = b""
        while chunk := stdout.read1(1 << 16):
            lines = (rest + chunk).split(b"\n")
            rest = lines.pop()
            checked = [self.check(line) for line in lines]
            with self.lock:
                for n in checked:
                    self.account(n)
                self.lock.notify()
        if rest:
            self.fail(f"stdout ended in the middle of a line: {rest[:200]!r}")

    def check(self, line: bytes) -> int | None:
        """Checks one answer's shape and outcome; returns its call number (0: no id)."""
        try:
            message = json.loads(line)
        except ValueError:
            self.fail(f"stdout carried a non-JSON line: {line[:200]!r}")
            return None
        if not isinstance(message, dict) or message.get("jsonrpc") != "2.0":
            self.fail(f"not a JSON-RPC frame: {line[:200]!r}")
            return None
        if "method" in message:
            self.fail(f"unexpected message from the server: {line[:200]!r}")
            return None
        if "id" not in message:
            if message.get("error", {}).get("code") != -32700:
                self.fail(f"an answer without an id that is not -32700: {line[:200]!r}")
                return None
            return 0
        n = message["id"]
        if type(n) is not int or not 1 <= n <= self.sent or self.kinds[n] in NO_ID:
            self.fail(f"an answer to an id never sent as a request: {line[:200]!r}")
            return None
        problem = outcome_problem(self.kinds[n], n, message)
        if problem:
            self.fail(f"call {n} ({KIND_NAMES[self.kinds[n]]}): {problem}")
        return n

    def account(self, n: int | None) -> None:
        """Counts an answer (under the lock) and frees its place in the window."""
        if n is None:
            return
        self.answered += 1
        if n == 0:
            self.malformed_answered += 1
            if self.malformed_answered > self.malformed_sent:
                self.fail("more -32700 answers than malformed lines sent")
            self.outstanding -= 1
            return
        if self.answers[n]:
            self.fail(f"call {n} ({KIND_NAMES[self.kinds[n]]}) answered twice")
            return
        self.answers[n] = 1
        if not self.cancelled[n]:
            self.outstanding -= 1

    # ----- the run -----

    def run(self, stall: float) -> Report:
        report = self.report
        self.initialize()
        reader = threading.Thread(target=self.read_all, daemon=True)
        writer = threading.Thread(target=self.write_all, daemon=True)
        reader.start()
        writer.start()
        if not self.watch(lambda: writer.is_alive(), stall):
            return self.finish(report)
        with self.lock:  # every answer in, then the end sample with the server idle
            drained = self.lock.wait_for(lambda: self.outstanding == 0 or not reader.is_alive(), 1)
        if not drained and not self.watch(lambda: self.outstanding > 0, stall):
            return self.finish(report)
        report.seconds = time.monotonic() - self.started
        report.calls_per_s = self.calls / report.seconds if report.seconds else 0.0
        self.take_sample()
        assert self.proc.stdin is not None
        self.proc.stdin.close()
        reader.join(stall)
        try:
            report.exit_code = self.proc.wait(stall)
        except subprocess.TimeoutExpired:
            self.fail(f"the server did not exit within {stall} s of end of input")
        return self.finish(report)

    def watch(self, busy: Any, stall: float) -> bool:
        """Waits while ``busy()``; False (after recording why) when no answer came for
        ``stall`` seconds or the server died."""
        last, since = -1, time.monotonic()
        while busy():
            time.sleep(0.2)
            if self.answered != last:
                last, since = self.answered, time.monotonic()
            elif time.monotonic() - since > stall:
                self.fail(
                    f"no answer for {stall} s after {self.sent} calls sent and "
                    f"{self.answered} answers: the server hangs"
                )
                return False
            if self.proc.poll() is not None and busy():
                self.fail(f"the server exited ({self.proc.returncode}) after {self.sent} calls")
                return False
        return True

    def finish(self, report: Report) -> Report:
        if self.proc.poll() is None:
            self.proc.kill()
            self.proc.wait()
        if report.exit_code is None:
            report.exit_code = self.proc.returncode
        if report.exit_code != 0:
            self.fail(f"the server exited {report.exit_code}, not 0, at end of input")
        self.stderr.seek(0, os.SEEK_END)
        report.stderr_bytes = self.stderr.tell()
        counts = [0] * len(KIND_NAMES)
        for n in range(1, self.sent + 1):
            kind = self.kinds[n]
            counts[kind] += 1
            if self.cancelled[n]:
                report.cancelled += 1
                report.cancelled_answered += self.answers[n]
            elif kind not in NO_ID and not self.answers[n]:
                self.fail(f"call {n} ({KIND_NAMES[kind]}) was never answered")
        report.mix = dict(zip(KIND_NAMES, counts, strict=True))
        if self.malformed_answered != self.malformed_sent:
            self.fail(
                f"{self.malformed_sent} malformed lines sent, "
                f"{self.malformed_answered} -32700 answers"
            )
        return report

    def stderr_tail(self, lines: int = 20) -> str:
        self.stderr.seek(max(0, self.stderr.tell() - 8192))
        text = self.stderr.read().decode("utf-8", errors="replace")
        return "\n".join(text.splitlines()[-lines:])


def judge(report: Report, rss_limit_mib: float) -> None:
    """Footprint figures and checks: warm-up is the first sample at or after the warm-up
    count, the end is the sample taken once every answer was in."""
    after = [s for s in report.samples if s.calls >= report.warmup_calls]
    if len(after) < 2:
        note = "no /proc samples (not Linux?): footprint not checked"
        report.rss_kib = report.fds = report.threads = {"warmup": None, "end": None, "max": None}
        print(f"soak: {note}", file=sys.stderr)
        return
    warm, end = after[0], after[-1]
    for name in ("rss_kib", "fds", "threads"):
        values = [getattr(s, name) for s in after]
        figures = {"warmup": values[0], "end": values[-1], "max": max(values)}
        setattr(report, name, figures)
    growth = end.rss_kib - warm.rss_kib
    if growth >= rss_limit_mib * 1024:
        report.footprint_failures.append(
            f"RSS grew by {growth / 1024:.2f} MiB after warm-up "
            f"({warm.rss_kib / 1024:.1f} -> {end.rss_kib / 1024:.1f} MiB; "
            f"limit {rss_limit_mib} MiB)"
        )
    fds = report.fds
    if fds["max"] > fds["warmup"] + FD_SLACK:
        report.footprint_failures.append(
            f"descriptors grew: {fds['warmup']} at warm-up, up to {fds['max']} after "
            f"(end: {fds['end']}; the capture cell keeps at most {FD_SLACK} more files)"
        )
    threads = report.threads
    if threads["end"] > threads["warmup"] or threads["max"] > threads["warmup"] + 1:
        report.footprint_failures.append(
            f"threads grew: {threads['warmup']} at warm-up, up to {threads['max']} after "
            f"(end: {threads['end']})"
        )


def summary(report: Report, rss_limit_mib: float) -> str:
    def mib(kib: int | None) -> str:
        return "-" if kib is None else f"{kib / 1024:.1f} MiB"

    rss, fds, threads = report.rss_kib, report.fds, report.threads
    growth = (
        "-"
        if rss.get("end") is None or rss.get("warmup") is None
        else f"{(rss['end'] or 0) / 1024 - (rss['warmup'] or 0) / 1024:+.2f} MiB"
    )
    mix = ", ".join(f"{name} {count:,}" for name, count in report.mix.items())
    lines = [
        f"soak: {report.calls:,} calls in {report.seconds:.1f} s "
        f"({report.calls_per_s:,.0f} calls/s), window {report.window}, seed {report.seed}",
        f"mix: {mix}",
        f"cancelled: {report.cancelled:,} ({report.cancelled_answered:,} answered before the "
        f"cancel took effect, the rest never answered)",
        f"RSS: {mib(rss.get('warmup'))} after {report.warmup_calls:,} calls of warm-up, "
        f"{mib(rss.get('end'))} at the end ({growth}; limit +{rss_limit_mib} MiB), "
        f"max {mib(rss.get('max'))}",
        f"descriptors: {fds.get('warmup')} at warm-up, max {fds.get('max')}, "
        f"end {fds.get('end')}; threads: {threads.get('warmup')} at warm-up, "
        f"max {threads.get('max')}, end {threads.get('end')}",
        f"server: exit {report.exit_code}, {report.stderr_bytes:,} bytes of stderr",
    ]
    if report.failure_count:
        lines.append(f"FAILED: {report.failure_count} problem(s); the first ones:")
        lines += [f"  {failure}" for failure in report.failures]
    else:
        lines.append("OK: every request answered as expected")
    if report.footprint_failures:
        lines.append("FAILED: footprint")
        lines += [f"  {failure}" for failure in report.footprint_failures]
    elif report.rss_kib.get("end") is not None:
        lines.append("OK: footprint flat")
    return "\n".join(lines)


def parse_mix(text: str) -> dict[str, int]:
    mix = {}
    for part in text.split(","):
        name, _, weight = part.partition("=")
        if name not in MIX or not weight.isdigit():
            raise argparse.ArgumentTypeError(f"{part!r}: expected KIND=WEIGHT, KIND one of MIX")
        mix[name] = int(weight)
    if not any(mix.values()):
        raise argparse.ArgumentTypeError("every weight is 0")
    return mix


def main() -> int:
    ap = argparse.ArgumentParser(
        description=__doc__.split("\n\n")[0],
        epilog="RSS, descriptor and thread sampling reads /proc: Linux only (skipped elsewhere).",
    )
    ap.add_argument("--calls", type=int, default=1_000_000)
    ap.add_argument("--window", type=int, default=64, help="answers outstanding at most")
    ap.add_argument("--warmup", type=int, help="calls of warm-up (default: 10 %% of --calls)")
    ap.add_argument("--rss-limit", type=float, default=5.0, help="MiB of growth allowed")
    ap.add_argument("--seed", type=int, default=1)
    ap.add_argument("--stall", type=float, default=60.0, help="seconds without an answer = hang")
    ap.add_argument("--python", default=sys.executable, help="interpreter for the server")
    ap.add_argument("--server", default=str(SERVER), help="server script (same tools)")
    ap.add_argument("--json", action="store_true", help="figures as JSON on stdout")
    ap.add_argument(
        "--mix",
        type=parse_mix,
        default=MIX,
        metavar="KIND=WEIGHT,...",
        help=f"another mix, e.g. nap=1,add=3 (kinds: {', '.join(KIND_NAMES)})",
    )
    ap.add_argument("--cancel", type=float, default=CANCEL_SHARE, help="share of sleeps cancelled")
    ns = ap.parse_args()
    if ns.calls < 10 or ns.window < 1:
        ap.error("--calls must be at least 10 and --window at least 1")
    warmup = ns.calls // 10 if ns.warmup is None else ns.warmup

    soak = Soak([ns.python, ns.server], ns.calls, ns.window, ns.seed, warmup, ns.mix, ns.cancel)
    try:
        report = soak.run(ns.stall)
    except (OSError, RuntimeError) as e:
        soak.fail(f"{e}")
        report = soak.finish(soak.report)
    judge(report, ns.rss_limit)
    text = summary(report, ns.rss_limit)
    if report.failure_count:
        text += "\nthe server's stderr ends with:\n" + soak.stderr_tail()
    if ns.json:
        print(text, file=sys.stderr)
        print(json.dumps(asdict(report), indent=1))
    else:
        print(text)
    return 1 if report.failure_count or report.footprint_failures else 0


if __name__ == "__main__":
    sys.exit(main())
