#!/usr/bin/env python3
"""respload against redis-benchmark (and resp-benchmark when installed), same server, same run.

Each scenario runs every tool in alternation (the starting tool rotates each round) for
several rounds against one local redis-server. For every run it records the tool's own
throughput figure, the client process's CPU time (user + sys) and peak RSS (both from
wait4's rusage). The machine is shared and noisy, so what counts is the median of the
*paired* ratios: respload's figure divided by redis-benchmark's from the same round.

    python3 scripts/bench.py                      # W1-W5, TLS vs plain, cluster (make bench)
    python3 scripts/bench.py --quick              # W1, W1E and W2, briefly (make bench-quick)
    python3 scripts/bench.py --only W1,W4         # some scenarios
    python3 scripts/bench.py --only OL1,OL2       # open-loop pacing modes against closed loop
    python3 scripts/bench.py --only D3            # 3 Ray hosts against one process (.venv)
    python3 scripts/bench.py --only M1            # merging 16 one-hour reports (.venv)
    python3 scripts/bench.py --soak 10            # RSS stability at 50k ops/s for 10 minutes
"""

from __future__ import annotations

import argparse
import contextlib
import json
import math
import os
import platform
import re
import resource
import shutil
import socket
import statistics
import subprocess
import sys
import tempfile
import threading
import time
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parent.parent
# RESPLOAD_BIN: another build to measure (an A/B comparison), default the release build.
RESPLOAD = Path(os.environ.get("RESPLOAD_BIN") or ROOT / "target" / "release" / "respload")
# Throwaway servers (the respload-testing crate's program).
SERVERS = ROOT / "target" / "release" / "respload-servers"


@dataclass
class Sample:
    """One run of one tool."""

    ops: float  # requests per second, as the tool reports it
    cpu: float  # client CPU seconds (user + sys)
    rss_mb: float  # client peak RSS, MiB
    requests: int
    server_cpu: float = 0.0  # the servers' CPU seconds (user + sys) during the run

    @property
    def cpu_per_m(self) -> float:
        return self.cpu / self.requests * 1e6

    @property
    def server_cpu_per_m(self) -> float:
        return self.server_cpu / self.requests * 1e6

    @property
    def server_busy(self) -> float:
        """The fraction of a core the server spent at the tool's throughput: about 1 when
        the server, not the client, is the limit."""
        return self.ops * self.server_cpu / self.requests


RUSAGE = ROOT / "target" / "bench-rusage"


def run_child(cmd: list[str]) -> tuple[str, float, float, float]:
    """Run cmd to its end through the small rusage launcher (scripts/rusage.c); return
    (stdout, wall seconds, CPU seconds, peak RSS MiB)."""
    with tempfile.NamedTemporaryFile("r", suffix=".rusage") as f:
        start = time.monotonic()
        p = subprocess.run(
            [str(RUSAGE), f.name, *cmd], capture_output=True, text=True, errors="replace"
        )
        wall = time.monotonic() - start
        if p.returncode != 0:
            sys.exit(
                f"bench: {' '.join(cmd)} failed with status {p.returncode}: {p.stderr[-2000:]}"
            )
        user, sys_s, maxrss_kb, _ = f.read().split()
    return p.stdout, wall, float(user) + float(sys_s), int(maxrss_kb) / 1024


# --- the tools -----------------------------------------------------------------------------


@dataclass
class Target:
    """Where a tool connects: a port, TLS (CA file) or not, cluster or not."""

    port: int
    ca: str | None = None
    cluster: bool = False


def respload_report(t: Target, spec: dict, extra: list[str] = ()) -> tuple[dict, float, float]:
    """Run respload on `spec` against `t`; return (its JSON report, client CPU seconds, peak
    RSS MiB)."""
    with tempfile.TemporaryDirectory() as d:
        path = Path(d) / "spec.json"
        report = Path(d) / "report.json"
        path.write_text(json.dumps(spec))
        cmd = [
            str(RESPLOAD),
            "run",
            str(path),
            "-H",
            "127.0.0.1",
            "--port",
            str(t.port),
            "-q",
            "--json",
            str(report),
        ]
        if t.ca:
            cmd += ["--tls", "--cacert", t.ca]
        if t.cluster:
            cmd.append("--cluster")
        _, _, cpu, rss = run_child(cmd + list(extra))
        return json.loads(report.read_text()), cpu, rss


def respload(t: Target, spec: dict, n: int | None, extra: list[str] = ()) -> Sample:
    r, cpu, rss = respload_report(t, spec, extra)
    totals = r["totals"]
    if n is not None:
        assert totals["ops"] == n, totals
        assert totals["errors"] == 0, totals
        if spec["commands"] == [{"name": "get"}]:
            # Every GET read a preloaded 1 KiB value ($1024, the value, CRLF: 1,033 bytes),
            # none a smaller one left by W3's SETs.
            assert totals["misses"] == 0, totals
            assert totals["bytes_received"] == 1033 * n, totals
    return Sample(totals["ops_per_sec"], cpu, rss, totals["ops"])


def redis_benchmark(t: Target, args: list[str], n: int) -> Sample:
    cmd = ["redis-benchmark", "-h", "127.0.0.1", "-p", str(t.port), "--csv", *args]
    if t.ca:
        cmd += ["--tls", "--cacert", t.ca]
    if t.cluster:
        cmd.append("--cluster")
    out, _, cpu, rss = run_child(cmd)
    rates = [float(m) for m in re.findall(r'^"[A-Z_ ]+[^"]*","([0-9.]+)"', out, re.M)]
    if not rates:
        sys.exit(f"bench: no result from {' '.join(cmd)}: {out[-500:]}")
    # Several tests run one after another: total requests over the sum of their times.
    seconds = sum(n / len(rates) / r for r in rates)
    return Sample(n / seconds, cpu, rss, n)


def resp_benchmark_exe() -> str | None:
    exe = shutil.which("resp-benchmark")
    return exe if exe and Path(exe).exists() else None


def resp_benchmark(t: Target, args: list[str], n: int) -> Sample:
    exe = resp_benchmark_exe()
    assert exe
    out, wall, cpu, rss = run_child([exe, "-h", "127.0.0.1", "-p", str(t.port), *args])
    m = re.search(r"QPS:\s*([0-9.]+)", out)
    return Sample(float(m.group(1)) if m else n / wall, cpu, rss, n)


# --- scenarios -----------------------------------------------------------------------------


def get_spec(n: int, conns: int, pipeline: int, threads: int | None = 1) -> dict:
    load = {"connections": conns, "pipeline": pipeline, "requests": n}
    if threads:
        load["threads"] = threads
    return {
        "load": load,
        "keys": {"prefix": "key:", "pad": 12, "range": [0, 99_999]},
        "commands": [{"name": "get"}],
    }


def set_spec(n: int, conns: int, pipeline: int, size: int, threads: int = 1) -> dict:
    return {
        "load": {"connections": conns, "threads": threads, "pipeline": pipeline, "requests": n},
        "keys": {"prefix": "key:", "pad": 12, "range": [0, 99_999]},
        "values": {"size": size},
        "commands": [{"name": "set"}],
    }


def uring(spec: dict) -> dict:
    """`spec` with the io_uring transport (`load.io = "uring"`) instead of epoll."""
    spec["load"]["io"] = "uring"
    return spec


# The tool name of respload over io_uring, and its targets (issue 49: CPU per request over
# redis-benchmark's), in the rows beside epoll's.
URING = "respload (io_uring)"
URING_TARGETS = {"W1": 0.40, "W2": 0.50}


def batch(spec: dict) -> dict:
    """`spec` with redis-benchmark's pipelining: the next batch once all replies are in."""
    spec["load"]["refill"] = "batch"
    return spec


@dataclass
class Scenario:
    key: str
    title: str
    requests: int
    tools: dict[str, Callable[[dict, int], Sample]]  # tool -> run(targets, n)
    target: float | None = None  # respload's CPU ratio must be at most this
    quick: int = 0  # requests in --quick mode


def cluster_rb_args(n: int) -> list[str]:
    """redis-benchmark's side of C1 and C3: SET 1 KiB, pipeline 50, 51 connections."""
    return ["-t", "set", "-n", str(n), "-d", "1024", "-P", "50", "-c", "51", "-r", "100000"]


def scenarios(have_resp_benchmark: bool) -> list[Scenario]:
    def w1_rb(n: int) -> list[str]:
        return ["-t", "get", "-n", str(n), "-d", "1024", "-P", "50", "-c", "50", "-r", "100000"]

    def w1_tools(port: str, batches: bool) -> dict[str, Callable[[dict, int], Sample]]:
        """respload (in batches as redis-benchmark -P, or its eager default) and
        redis-benchmark on W1's GETs, on the plain or the TLS port."""

        def ours(tg: dict, n: int) -> Sample:
            spec = get_spec(n, 50, 50)
            return respload(tg[port], batch(spec) if batches else spec, n)

        def ours_uring(tg: dict, n: int) -> Sample:
            spec = uring(get_spec(n, 50, 50))
            return respload(tg[port], batch(spec) if batches else spec, n)

        tools = {
            "respload": ours,
            "redis-benchmark": lambda tg, n: redis_benchmark(tg[port], w1_rb(n), n),
        }
        # io_uring runs plain TCP only (TLS stays on epoll).
        if port == "plain":
            tools[URING] = ours_uring
        return tools

    out = [
        Scenario(
            "W1",
            "GET 1 KiB, 100k keys, pipeline 50 (batches, as redis-benchmark -P), 50 connections",
            2_000_000,
            {
                **w1_tools("plain", batches=True),
                "resp-benchmark": lambda tg, n: resp_benchmark(
                    tg["plain"],
                    [
                        "-c",
                        "50",
                        "-P",
                        "50",
                        "-n",
                        str(n),
                        "--cores",
                        "0",
                        "GET {key uniform 100000}",
                    ],
                    n,
                ),
            },
            0.5,
            300_000,
        ),
        Scenario(
            "W1E",
            "W1 with respload's default refill (eager: 50 kept in flight, memtier-style)",
            2_000_000,
            w1_tools("plain", batches=False),
            None,
            300_000,
        ),
        Scenario(
            "W2",
            "GET 1 KiB, no pipeline, 50 connections",
            500_000,
            {
                "respload": lambda tg, n: respload(tg["plain"], get_spec(n, 50, 1), n),
                URING: lambda tg, n: respload(tg["plain"], uring(get_spec(n, 50, 1)), n),
                "redis-benchmark": lambda tg, n: redis_benchmark(
                    tg["plain"],
                    ["-t", "get", "-n", str(n), "-d", "1024", "-c", "50", "-r", "100000"],
                    n,
                ),
                "resp-benchmark": lambda tg, n: resp_benchmark(
                    tg["plain"],
                    ["-c", "50", "-n", str(n), "--cores", "0", "GET {key uniform 100000}"],
                    n,
                ),
            },
            0.65,
            50_000,
        ),
        Scenario(
            "W3",
            "SET/GET 1:1, values 100-1000 B (redis-benchmark: 550 B), 100 connections, no pipeline",
            400_000,
            {
                "respload": lambda tg, n: respload(
                    tg["plain"],
                    {
                        "load": {"connections": 100, "threads": 1, "pipeline": 1, "requests": n},
                        "keys": {"prefix": "key:", "pad": 12, "range": [0, 99_999]},
                        "values": {"size": [100, 1000]},
                        "commands": [{"name": "set"}, {"name": "get"}],
                    },
                    n,
                ),
                "redis-benchmark": lambda tg, n: redis_benchmark(
                    tg["plain"],
                    ["-t", "set,get", "-n", str(n // 2), "-d", "550", "-c", "100", "-r", "100000"],
                    n,
                ),
            },
            0.65,
        ),
        Scenario(
            "W4",
            "W1 over TLS (TLS 1.3, both tools; batches of 50, as redis-benchmark -P)",
            2_000_000,
            w1_tools("tls", batches=True),
            0.6,
        ),
        Scenario(
            "W4E",
            "W4 with respload's default refill (eager: 50 kept in flight, memtier-style)",
            2_000_000,
            w1_tools("tls", batches=False),
        ),
        Scenario(
            "C1",
            "SET 1 KiB, pipeline 50, one node, 51 connections",
            1_000_000,
            {
                "respload": lambda tg, n: respload(
                    tg["plain"], batch(set_spec(n, 51, 50, 1024)), n
                ),
                "redis-benchmark": lambda tg, n: redis_benchmark(
                    tg["plain"],
                    cluster_rb_args(n),
                    n,
                ),
            },
        ),
        Scenario(
            "C3",
            "SET 1 KiB, pipeline 50, cluster of 3 primaries, 17 connections per primary (51)",
            1_000_000,
            {
                "respload": lambda tg, n: respload(
                    tg["cluster"], batch(set_spec(n, 17, 50, 1024)), n
                ),
                "redis-benchmark": lambda tg, n: redis_benchmark(
                    tg["cluster"],
                    cluster_rb_args(n),
                    n,
                ),
            },
        ),
    ]
    if not have_resp_benchmark:
        for s in out:
            s.tools.pop("resp-benchmark", None)
    return out


# --- servers -------------------------------------------------------------------------------


class Servers:
    """One redis-server (plain and TLS ports), and a 3-primary cluster when asked, started by
    `respload-servers` (the respload-testing crate, which starts every test's servers too);
    stopped on close, or when this script ends however it ends."""

    def __init__(self, tls: bool, cluster: bool, maxclients: int = 10_100) -> None:
        cmd = [str(SERVERS)]
        if tls:
            cmd.append("--tls")
        if cluster:
            cmd += ["--cluster", "3"]
        cmd += ["--", "--maxclients", str(maxclients)]
        # They stop when our end of this pipe closes: on close(), or when we exit.
        self.proc = subprocess.Popen(cmd, stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True)
        assert self.proc.stdout is not None
        line = self.proc.stdout.readline()
        if not line:
            self.proc.wait()
            sys.exit("bench: respload-servers did not start the servers (its error is above)")
        started = json.loads(line)
        self.port: int = started["port"]
        self.tls_port: int | None = started["tls_port"]
        self.ca: str | None = started["ca_file"]
        self.nodes: list[int] = started["cluster"]
        self.cluster_port = self.nodes[0] if self.nodes else None

    def targets(self) -> dict[str, Target]:
        t = {"plain": Target(self.port)}
        if self.tls_port:
            t["tls"] = Target(self.tls_port, ca=self.ca)
        if self.cluster_port:
            t["cluster"] = Target(self.cluster_port, cluster=True)
        return t

    def cpu(self) -> float:
        """CPU seconds (user + sys) used so far by every server, from INFO: read before and
        after each run, it shows how much of the server a tool's traffic took."""
        total = 0.0
        for port in (self.port, *self.nodes):
            info = cli(port, "info", "cpu")
            total += sum(
                float(v) for v in re.findall(r"^used_cpu_(?:user|sys):([0-9.]+)", info, re.M)
            )
        return total

    def close(self) -> None:
        if self.proc.stdin is not None and not self.proc.stdin.closed:
            self.proc.stdin.close()
        self.proc.wait()


def cli(port: int, *args: str) -> str:
    r = subprocess.run(["redis-cli", "-p", str(port), *args], capture_output=True, text=True)
    return r.stdout.strip()


def preload(t: Target, prefix: str, pad: int) -> None:
    """100k keys of 1 KiB, so every tool's GETs hit."""
    respload(
        t,
        {
            "load": {"connections": 20, "pipeline": 50, "requests": 100_000},
            "keys": {
                "prefix": prefix,
                "pad": pad,
                "range": [0, 99_999],
                "distribution": "sequential",
            },
            "values": {"size": 1024},
            "commands": [{"name": "set"}],
        },
        100_000,
    )


# --- reporting -----------------------------------------------------------------------------


def med(xs: list[float]) -> float:
    return statistics.median(xs) if xs else float("nan")


def run_scenario(
    sc: Scenario,
    tg: dict,
    server_cpu: Callable[[], float],
    rounds: int,
    scale: float,
    quick: bool,
    log: Callable[[str], None],
) -> dict:
    n = sc.quick if quick else max(1000, int(sc.requests * scale))
    tools = list(sc.tools)
    samples: dict[str, list[Sample]] = {t: [] for t in tools}
    for r in range(rounds):
        order = tools[r % len(tools) :] + tools[: r % len(tools)]
        for tool in order:
            before = server_cpu()
            s = sc.tools[tool](tg, n)
            s.server_cpu = server_cpu() - before
            samples[tool].append(s)
            log(
                f"  {sc.key} round {r + 1}/{rounds} {tool}: {s.ops:,.0f} ops/s, "
                f"{s.cpu_per_m:.2f} CPU s/M, {s.rss_mb:.1f} MiB; "
                f"server {s.server_cpu_per_m:.2f} CPU s/M, {s.server_busy:.0%} busy"
            )
    base = samples["redis-benchmark"]
    result = {"key": sc.key, "title": sc.title, "requests": n, "target": sc.target, "tools": {}}
    for tool, ss in samples.items():
        result["tools"][tool] = {
            "ops": med([s.ops for s in ss]),
            "cpu_per_m": med([s.cpu_per_m for s in ss]),
            "rss_mb": med([s.rss_mb for s in ss]),
            # Paired: this tool's figure over redis-benchmark's of the same round.
            "cpu_ratio": med([a.cpu_per_m / b.cpu_per_m for a, b in zip(ss, base)]),
            "ops_ratio": med([a.ops / b.ops for a, b in zip(ss, base)]),
            "rss_ratio": med([a.rss_mb / b.rss_mb for a, b in zip(ss, base)]),
            "server_cpu_per_m": med([s.server_cpu_per_m for s in ss]),
            "server_busy": med([s.server_busy for s in ss]),
            "server_cpu_ratio": med(
                [a.server_cpu_per_m / b.server_cpu_per_m for a, b in zip(ss, base)]
            ),
            "raw": [s.__dict__ for s in ss],
        }
    return result


# The server is the limit when it was this busy during respload's runs (median) ...
SERVER_BOUND_BUSY = 0.9
# ... and respload's traffic cost it no more CPU per request than redis-benchmark's, within
# this factor (median paired ratio).
SERVER_BOUND_COST = 1.02


def verdict(m: dict, cpu_target: float) -> str:
    """respload's targets in a scenario: CPU per request at most `cpu_target` times
    redis-benchmark's, and throughput at least redis-benchmark's, or, when the server is the
    limit, the server as busy and its work per request the same as with redis-benchmark (the
    throughputs are then the server's speed in each run, which moves by a few percent)."""
    cpu = f"CPU <= {cpu_target}x: {'met' if m['cpu_ratio'] <= cpu_target else 'NOT met'}"
    if m["ops_ratio"] >= 1.0:
        ops = "met"
    elif m["server_busy"] >= SERVER_BOUND_BUSY and m["server_cpu_ratio"] <= SERVER_BOUND_COST:
        ops = (
            f"met, server-bound (server {m['server_busy']:.0%} busy, its CPU per request "
            f"{m['server_cpu_ratio']:.2f}x)"
        )
    else:
        ops = "NOT met"
    return f"{cpu}; ops >= 1x: {ops}"


def table(results: list[dict]) -> list[str]:
    lines = [
        "| scenario | tool | ops/s | CPU s / 1M req | peak RSS MiB "
        "| CPU ratio | ops/s ratio | RSS ratio | server CPU s / 1M req | server busy | target |",
        "|---|---|---|---|---|---|---|---|---|---|---|",
    ]
    for res in results:
        for tool, m in res["tools"].items():
            target = ""
            if tool == "respload" and res["target"] is not None:
                target = verdict(m, res["target"])
            elif tool == URING and res["key"] in URING_TARGETS:
                target = verdict(m, URING_TARGETS[res["key"]])
            lines.append(
                f"| {res['key']}: {res['title']} ({res['requests']:,} req) | {tool} "
                f"| {m['ops']:,.0f} | {m['cpu_per_m']:.2f} | {m['rss_mb']:.1f} "
                f"| {m['cpu_ratio']:.2f} | {m['ops_ratio']:.2f} | {m['rss_ratio']:.2f} "
                f"| {m['server_cpu_per_m']:.2f} | {m['server_busy']:.0%} | {target} |"
            )
    return lines


def cross_ratios(results: list[dict]) -> list[str]:
    """TLS / plain (W4 / W1) and cluster / one node (C3 / C1), per tool, ratio of medians."""
    by = {r["key"]: r for r in results}
    lines = []
    for a, b, what in (
        ("W4", "W1", "TLS / plaintext (W4 / W1)"),
        ("W4E", "W1E", "TLS / plaintext, eager (W4E / W1E)"),
        ("C3", "C1", "cluster of 3 / one node (C3 / C1)"),
    ):
        if a in by and b in by:
            lines += [
                "",
                f"{what}, ratio of medians:",
                "",
                "| tool | CPU per request | ops/s | peak RSS |",
                "|---|---|---|---|",
            ]
            for tool in by[a]["tools"]:
                if tool in by[b]["tools"]:
                    x, y = by[a]["tools"][tool], by[b]["tools"][tool]
                    lines.append(
                        f"| {tool} | {x['cpu_per_m'] / y['cpu_per_m']:.2f} "
                        f"| {x['ops'] / y['ops']:.2f} | {x['rss_mb'] / y['rss_mb']:.2f} |"
                    )
    return lines


def idle_ish_spec(conns: int, seconds: int) -> dict:
    """W5's and W5C's load: GETs, one per connection (or cluster client) per second."""
    return {
        "load": {"connections": conns, "rate": conns, "duration": f"{seconds}s", "timeout": "30s"},
        "keys": {"prefix": "key:", "pad": 12, "range": [0, 99_999]},
        "commands": [{"name": "get"}],
    }


def w5(srv: Servers, conns: int, seconds: int, log: Callable[[str], None]) -> list[str]:
    """Many idle-ish connections at a low rate (one request per connection per second)."""
    t = srv.targets()["plain"]
    s = respload(t, idle_ish_spec(conns, seconds), None)
    log(f"  W5 respload: {conns} connections, {s.ops:,.0f} ops/s, {s.rss_mb:.1f} MiB peak RSS")
    # redis-benchmark has no rate limit: the same connection count, flat out, for its RSS only.
    rb = redis_benchmark(
        t,
        ["-t", "get", "-n", str(conns * 5), "-d", "1024", "-c", str(conns), "-r", "100000"],
        conns * 5,
    )
    log(f"  W5 redis-benchmark -c {conns} (no rate limit): {rb.rss_mb:.1f} MiB peak RSS")
    ok = s.rss_mb < 100
    return [
        "",
        f"W5: {conns:,} connections, {conns:,} requests/s in total (open loop), {seconds} s:",
        "",
        "| tool | peak RSS MiB | ops/s | target |",
        "|---|---|---|---|",
        f"| respload | {s.rss_mb:.1f} | {s.ops:,.0f} "
        f"| under 100 MB: {'met' if ok else 'NOT met'} |",
        f"| redis-benchmark (`-c {conns}`, no rate limit, for comparison) "
        f"| {rb.rss_mb:.1f} | {rb.ops:,.0f} | |",
    ]


def write_trace(path: Path, n: int, clients: int, rate: int, size: int) -> None:
    """A respload trace of n commands (GET and SET of `size`-byte values, 1:1, over 100,000
    keys) from `clients` clients, evenly spaced at `rate` per second."""
    value = "v" * size
    with path.open("w") as f:
        for i in range(n):
            t_us = 1_700_000_000_000_000 + i * 1_000_000 // rate
            key = f"key:{(i * 7919) % 100_000:012d}"
            args = f'["GET","{key}"]' if i % 2 else f'["SET","{key}","{value}"]'
            f.write(f'{{"t_us":{t_us},"client":"c{i % clients}","args":{args}}}\n')


def replay_run(t: Target, trace: Path, extra: list[str]) -> tuple[dict, float, float]:
    """`respload replay` of `trace` against `t`: (its report, client CPU s, peak RSS MiB)."""
    with tempfile.TemporaryDirectory() as d:
        report = Path(d) / "report.json"
        cmd = [str(RESPLOAD), "replay", str(trace), "-H", "127.0.0.1", "--port", str(t.port)]
        cmd += ["-q", "--no-prefill", "--json", str(report), *extra]
        _, _, cpu, rss = run_child(cmd)
        return json.loads(report.read_text()), cpu, rss


def tr1(t: Target, rounds: int, scale: float, log: Callable[[str], None]) -> list[str]:
    """TR1: a trace replayed against the same commands generated, in alternating rounds:
    client CPU per request and peak RSS. TR2: a 1 GB trace replayed: peak RSS."""
    rate, clients, secs = 20_000, 50, max(2, int(10 * scale))
    n = rate * secs
    rows = []
    with tempfile.TemporaryDirectory() as d:
        trace = Path(d) / "tr1.jsonl"
        write_trace(trace, n, clients, rate, 100)
        synthetic = {
            "load": {"connections": clients, "rate": rate, "duration": f"{secs}s"},
            "keys": {"prefix": "key:", "pad": 12, "range": [0, 99_999]},
            "values": {"size": 100},
            "commands": [{"name": "get"}, {"name": "set"}],
        }
        for r in range(rounds):
            rep, cpu, rss = replay_run(t, trace, [])
            ops = rep["totals"]["ops"]
            assert ops == n, rep["totals"]
            assert rep["totals"]["errors"] == 0, rep["totals"]
            syn, scpu, srss = respload_report(t, synthetic)
            sops = syn["totals"]["ops"]
            rows.append((cpu / ops * 1e6, rss, scpu / sops * 1e6, srss))
            log(
                f"  TR1 round {r + 1}: replay {rows[-1][0]:.2f} CPU s/M ({rss:.1f} MiB), "
                f"synthetic {rows[-1][2]:.2f} CPU s/M ({srss:.1f} MiB)"
            )
        big = Path(d) / "tr2.jsonl"
        big_n = max(10_000, int(1_000_000 * scale))
        write_trace(big, big_n, 200, 50_000, 2000)
        gb = big.stat().st_size / 1e9
        rep, cpu, big_rss = replay_run(t, big, ["-c", "50"])
        assert rep["totals"]["ops"] == big_n, rep["totals"]
        log(f"  TR2: {gb:.2f} GB trace, {big_n:,} commands: {big_rss:.1f} MiB peak RSS")
    ratio = med([a / b for a, _, b, _ in rows])
    ok = ratio <= 1.0
    return [
        "",
        f"TR1: a trace of {n:,} GET/SET (100 B values) from {clients} clients at {rate:,}/s, "
        f"replayed, against the same commands generated (open loop, {clients} connections, "
        f"{rate:,}/s), {rounds} rounds in alternation; medians:",
        "",
        "| run | client CPU s per million requests | peak RSS MiB |",
        "|---|---|---|",
        f"| replay | {med([r[0] for r in rows]):.2f} | {med([r[1] for r in rows]):.1f} |",
        f"| synthetic | {med([r[2] for r in rows]):.2f} | {med([r[3] for r in rows]):.1f} |",
        f"| ratio (replay / synthetic, paired) | {ratio:.2f}x "
        f"| target: no more CPU per request, {'met' if ok else 'NOT met'} |",
        "",
        f"TR2: a {gb:.2f} GB trace ({big_n:,} SET/GET of 2,000 B values, 200 clients hashed "
        f"onto 50 connections, 50,000/s) replayed: {big_rss:.1f} MiB peak client RSS "
        f"(target under 50 MB: {'met' if big_rss < 50 else 'NOT met'}).",
    ]


def free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return sock.getsockname()[1]


def attach_browser(port: int, seen: list[int]) -> None:
    """Headless Chromium on the dashboard at `port` until the run's stream ends; the rows its
    page received go into `seen`."""
    until = time.monotonic() + 20
    while time.monotonic() < until:
        with contextlib.suppress(OSError), socket.create_connection(("127.0.0.1", port), 0.2):
            break
        time.sleep(0.02)
    profile = f"--user-data-dir={tempfile.mkdtemp()}"
    browser = ["chromium", "--headless", "--no-sandbox", "--disable-gpu", profile]
    out = subprocess.run(
        [*browser, "--virtual-time-budget=2000", "--dump-dom", f"http://127.0.0.1:{port}/"],
        capture_output=True,
        text=True,
        check=False,
    ).stdout
    m = re.search(r'data-live-rows="(\d+)"', out)
    seen.append(int(m.group(1)) if m else 0)


def db1(t: Target, rounds: int, scale: float, log: Callable[[str], None]) -> list[str]:
    """DB1: the live dashboard's cost: client CPU per request of an open-loop run without a
    dashboard, with one nobody watches, and with a browser (headless Chromium) on it, in
    alternating rounds."""
    rate, conns, secs = 10_000, 50, max(3, int(10 * scale))
    spec = {
        "load": {"connections": conns, "rate": rate, "duration": f"{secs}s"},
        "keys": {"prefix": "key:", "pad": 12, "range": [0, 99_999]},
        "commands": [{"name": "get"}, {"name": "set"}],
    }
    rows = []
    for r in range(rounds):
        row = []
        for mode in ("none", "idle", "browser"):
            port, seen = free_port(), []
            extra = [] if mode == "none" else ["--dashboard", f"127.0.0.1:{port}"]
            browser = threading.Thread(target=attach_browser, args=(port, seen))
            if mode == "browser":
                browser.start()
            rep, cpu, _ = respload_report(t, spec, extra)
            if mode == "browser":
                browser.join()
                # The browser saw the run live: a row for most of its seconds.
                assert seen, "the browser did not finish"
                assert seen[0] >= secs - 2, f"the browser received {seen[0]} rows"
            row.append(cpu / rep["totals"]["ops"] * 1e6)
        rows.append(row)
        log(
            f"  DB1 round {r + 1}: CPU s/M without {row[0]:.2f}, idle dashboard {row[1]:.2f}, "
            f"browser attached {row[2]:.2f}"
        )
    idle = med([b / a for a, b, _ in rows])
    watched = med([c / a for a, _, c in rows])
    return [
        "",
        f"DB1: the live dashboard (`--dashboard`), open loop {rate:,}/s over {conns} connections, "
        f"{secs} s, {rounds} rounds in alternation; client CPU s per million requests, medians:",
        "",
        "| run | client CPU s per million requests | ratio to no dashboard (paired) |",
        "|---|---|---|",
        f"| no dashboard | {med([a for a, _, _ in rows]):.2f} | 1.00x |",
        f"| dashboard, no browser | {med([b for _, b, _ in rows]):.2f} | {idle:.2f}x |",
        f"| dashboard, headless Chromium attached | {med([c for _, _, c in rows]):.2f} "
        f"| {watched:.2f}x |",
    ]


def w5c(srv: Servers, clients: int, seconds: int, log: Callable[[str], None]) -> list[str]:
    """W5 against the cluster: each client holds a connection to each of the 3 primaries."""
    s = respload(srv.targets()["cluster"], idle_ish_spec(clients, seconds), None)
    log(
        f"  W5C respload: {clients} clients, {s.ops:,.0f} ops/s, {s.rss_mb:.1f} MiB peak RSS, "
        f"{s.cpu:.2f} CPU s"
    )
    return [
        "",
        f"W5C: {clients:,} cluster clients ({3 * clients:,} connections to 3 primaries), "
        f"{clients:,} requests/s in total (open loop), {seconds} s:",
        "",
        "| tool | peak RSS MiB | ops/s | client CPU s |",
        "|---|---|---|---|",
        f"| respload | {s.rss_mb:.1f} | {s.ops:,.0f} | {s.cpu:.2f} |",
    ]


def soak(srv: Servers, minutes: float, rate: int, log: Callable[[str], None]) -> list[str]:
    """RSS over a long open-loop run: sampled every 5 s from /proc, compared with its value
    after 1 minute."""
    t = srv.targets()["plain"]
    spec = {
        "load": {
            "connections": 50,
            "pipeline": 8,
            "rate": rate,
            "duration": f"{int(minutes * 60)}s",
        },
        "keys": {"prefix": "key:", "pad": 12, "range": [0, 99_999]},
        "values": {"size": 1024},
        "commands": [{"name": "set", "weight": 1}, {"name": "get", "weight": 10}],
    }
    with tempfile.TemporaryDirectory() as d:
        path = Path(d) / "spec.json"
        path.write_text(json.dumps(spec))
        report = Path(d) / "report.json"
        p = subprocess.Popen(
            [str(RESPLOAD), "run", str(path), "--port", str(t.port), "-q", "--json", str(report)],
            stdout=subprocess.DEVNULL,
        )
        start = time.monotonic()
        samples: list[tuple[float, float]] = []
        while p.poll() is None:
            try:
                status = Path(f"/proc/{p.pid}/status").read_text()
                kb = int(re.search(r"VmRSS:\s+(\d+)", status).group(1))
                samples.append((time.monotonic() - start, kb / 1024))
            except (OSError, AttributeError):
                pass
            time.sleep(5)
        r = json.loads(report.read_text())["totals"]
    at_1m = next((m for s, m in samples if s >= 60), samples[-1][1])
    # Only while the load runs: once it ends the workers free their memory and RSS falls.
    later = [m for s, m in samples if 60 <= s <= minutes * 60] or [at_1m]
    up = (max(later) - at_1m) / at_1m if later else 0.0
    down = (min(later) - at_1m) / at_1m if later else 0.0
    log(
        f"  soak: RSS after 1 min {at_1m:.1f} MiB, at the end of the load {later[-1]:.1f} MiB, "
        f"range {down:+.1%} .. {up:+.1%}"
    )
    lines = [
        "",
        f"Soak: {minutes:g} min at {rate:,} ops/s (open loop, 50 connections), "
        "RSS sampled every 5 s:",
        "",
        f"- achieved {r['ops_per_sec']:,.0f} ops/s, {r['ops']:,} requests, {r['errors']} errors",
        f"- RSS after the first minute: {at_1m:.1f} MiB; at the end of the load: "
        f"{later[-1]:.1f} MiB (after it, while the report is written: {samples[-1][1]:.1f}); "
        f"from the first minute to the end of the load it ranged from {down:+.1%} to "
        f"{up:+.1%} of that "
        f"(growth within 5%: {'met' if up <= 0.05 else 'NOT met'}; "
        f"within 5% both ways: {'met' if max(up, -down) <= 0.05 else 'NOT met'})",
        "- RSS (MiB) by minute: " + ", ".join(f"{m:.1f}" for s, m in samples if int(s) % 60 < 5),
    ]
    return lines


# --- open loop: pacing against closed loop (OL1, OL2) --------------------------------------

# key -> (total rate, connections): GETs of the preloaded 1 KiB values, as in the W rows.
OPEN_LOOP = {"OL1": (10_000, 10), "OL2": (100_000, 50)}
PACINGS = ("precise", "spin", "coarse")
OL_SECONDS = 5.0  # each measured run
PROBE_SECONDS = 1.0  # each closed-loop probe that picks the closed loop's connections
LAG_TARGET_US = 100.0  # send-lag p99, at both rates
OPEN_CPU_TARGET = 1.5  # open loop's CPU per request over closed loop's at the same rate
RATE_REACHED = 0.99  # below this fraction of its rate, an open-loop run was overloaded


def ol_spec(conns: int, seconds: float, rate: int | None = None, pacing: str = "") -> dict:
    """GETs on one worker thread (as in the W rows) for `seconds`: open loop at `rate` in
    total with `pacing`, or closed loop (pipeline 1) without a rate."""
    load: dict = {"connections": conns, "threads": 1, "duration": f"{seconds:g}s"}
    if rate is not None:
        load |= {"rate": rate, "pacing": pacing}
    return {
        "load": load,
        "keys": {"prefix": "key:", "pad": 12, "range": [0, 99_999]},
        "commands": [{"name": "get"}],
    }


@dataclass
class PacedRun:
    """One OL run, open loop (one pacing mode) or closed loop."""

    ops: float  # achieved requests per second
    requests: int
    cpu: float  # client process CPU seconds (user + sys, rusage)
    workers_cpu_per_m: float  # the report's client.cpu_s_per_million (worker threads)
    queue_us: float | None  # latency p50 - service p50 (open loop): waiting in the client
    lag_p99_us: float | None  # send-lag p99 (open loop)
    unsent: int  # requests due but never sent when the run ended
    failed: list[str]  # the validity checks that failed

    @property
    def cpu_per_m(self) -> float:
        return self.cpu / self.requests * 1e6


def paced_run(t: Target, spec: dict) -> PacedRun:
    r, cpu, _ = respload_report(t, spec)
    totals = r["totals"]
    assert totals["errors"] == 0, totals
    assert totals["misses"] == 0, totals  # every GET read a preloaded value
    is_open = "rate" in spec["load"]
    if is_open and "send_lag_ms" not in totals:
        sys.exit(f"bench: {RESPLOAD} reports no send lag in open loop: a build before pacing?")
    queue = lag = None
    if is_open:
        queue = (totals["latency_ms"]["p50"] - totals["service_ms"]["p50"]) * 1e3
        lag = totals["send_lag_ms"]["p99"] * 1e3
    checks = r.get("validity", {}).get("checks", [])
    return PacedRun(
        totals["ops_per_sec"],
        totals["ops"],
        cpu,
        r["client"]["cpu_s_per_million"],
        queue,
        lag,
        (r.get("unsent") or {}).get("requests", 0),
        [c["check"] for c in checks if not c["passed"]],
    )


def matched_connections(
    t: Target, rate: int, most: int, log: Callable[[str], None]
) -> tuple[int, dict[int, float]]:
    """The closed loop's connection count, 1 to `most` (pipeline 1), whose throughput comes
    nearest `rate`, and every probe's (connections -> requests/s): bisection on short
    closed-loop probes, throughput growing with connections until the server is the limit.
    Closed loop cannot be slower than one connection against this server: when one is
    already above `rate`, it is 1."""
    probes: dict[int, float] = {}

    def probe(c: int) -> float:
        probes[c] = paced_run(t, ol_spec(c, PROBE_SECONDS)).ops
        log(f"    closed-loop probe: {c} connections, {probes[c]:,.0f} req/s")
        return probes[c]

    lo, hi = 1, most
    if probe(lo) < rate and probe(hi) > rate:
        while hi - lo > 1:
            mid = (lo + hi) // 2
            if probe(mid) < rate:
                lo = mid
            else:
                hi = mid
    return min(probes, key=lambda c: abs(math.log(probes[c] / rate))), probes


def med_of(xs: list[float | None]) -> float | None:
    ys = [x for x in xs if x is not None]
    return med(ys) if ys else None


def open_loop(key: str, t: Target, rounds: int, scale: float, log: Callable[[str], None]) -> dict:
    """One OL scenario: open loop at its rate in each pacing mode, and closed loop at the
    nearest throughput it can run at, in alternation (the first run rotates each round)."""
    rate, conns = OPEN_LOOP[key]
    seconds = max(1.0, OL_SECONDS * scale)
    closed_conns, probes = matched_connections(t, rate, conns, log)
    runs: dict[str, list[PacedRun]] = {p: [] for p in (*PACINGS, "closed")}
    names = list(runs)
    for r in range(rounds):
        for name in names[r % len(names) :] + names[: r % len(names)]:
            if name == "closed":
                spec = ol_spec(closed_conns, seconds)
            else:
                spec = ol_spec(conns, seconds, rate, name)
            run = paced_run(t, spec)
            runs[name].append(run)
            lag = "" if run.lag_p99_us is None else f", send lag p99 {run.lag_p99_us:,.0f} us"
            log(
                f"  {key} round {r + 1}/{rounds} {name}: {run.ops:,.0f} req/s{lag}, "
                f"{run.cpu_per_m:.2f} CPU s/M (workers {run.workers_cpu_per_m:.2f}), "
                f"{run.unsent:,} unsent, failed checks: {', '.join(run.failed) or 'none'}"
            )
    closed = runs["closed"]
    result: dict = {
        "key": key,
        "rate": rate,
        "connections": conns,
        "closed_connections": closed_conns,
        "probes": probes,
        "seconds": seconds,
        "rounds": rounds,
        "runs": {},
    }
    for name, rs in runs.items():
        failed: dict[str, int] = {}
        for run in rs:
            for check in run.failed:
                failed[check] = failed.get(check, 0) + 1
        result["runs"][name] = {
            "ops": med([x.ops for x in rs]),
            "queue_us": med_of([x.queue_us for x in rs]),
            "lag_p99_us": med_of([x.lag_p99_us for x in rs]),
            "cpu_per_m": med([x.cpu_per_m for x in rs]),
            "workers_cpu_per_m": med([x.workers_cpu_per_m for x in rs]),
            # Paired: this run's figure over the closed loop's of the same round.
            "cpu_ratio": med([a.cpu_per_m / b.cpu_per_m for a, b in zip(rs, closed)]),
            "workers_cpu_ratio": med(
                [a.workers_cpu_per_m / b.workers_cpu_per_m for a, b in zip(rs, closed)]
            ),
            "trusted": sum(not x.failed for x in rs),
            "failed": failed,
            "raw": [x.__dict__ for x in rs],
        }
    return result


def ol_verdict(m: dict) -> tuple[bool, bool]:
    """An open-loop mode's two targets: (send-lag p99 within LAG_TARGET_US, CPU per request
    within OPEN_CPU_TARGET times closed loop's)."""
    lag = m["lag_p99_us"]
    return lag is not None and lag <= LAG_TARGET_US, m["cpu_ratio"] <= OPEN_CPU_TARGET


def ol_table(res: dict) -> list[str]:
    def us(x: float | None) -> str:
        return "" if x is None else f"{x:,.1f}"

    rate, conns, closed_conns = res["rate"], res["connections"], res["closed_connections"]
    probes = ", ".join(f"{c}: {ops:,.0f}" for c, ops in sorted(res["probes"].items()))
    lines = [
        "",
        f"{res['key']}: open loop, GET 1 KiB on 100k preloaded keys, {rate:,} requests/s in "
        f"total over {conns} connections (uniform arrivals, 1 worker thread), "
        f"{res['seconds']:g} s per run, each pacing mode and the closed loop in alternation, "
        f"{res['rounds']} rounds, medians. Closed loop at a matched throughput: pipeline 1 on "
        f"the connection count (1 to {conns}) whose {PROBE_SECONDS:g}-second closed-loop "
        f"probes came nearest {rate:,} requests/s (probes, connections: req/s: {probes}; "
        f"chosen: {closed_conns}); with the same {conns} connections a closed loop runs as "
        "fast as the server answers, and one connection is as slow as it gets. CPU: the "
        "client process's (rusage, user + sys) per million requests, the worker threads' "
        "alone (client.cpu_s_per_million) in brackets; CPU open / closed: median of the "
        "ratios paired by round:",
        "",
        "| run | achieved req/s | latency p50 - service p50 us | send lag p99 us "
        "| client CPU s / 1M req (workers) | CPU open / closed (workers) | trusted runs "
        "| target |",
        "|---|---|---|---|---|---|---|---|",
    ]
    for name, m in res["runs"].items():
        failed = ", ".join(f"{c} {k}x" for c, k in m["failed"].items())
        trusted = f"{m['trusted']}/{res['rounds']}" + (f" (failed: {failed})" if failed else "")
        if name == "closed":
            plural = "s" if closed_conns > 1 else ""
            label, ratio, target = f"closed loop, {closed_conns} connection{plural}", "1", ""
        else:
            lag_ok, cpu_ok = ol_verdict(m)
            label = f"open, pacing {name}"
            ratio = f"{m['cpu_ratio']:.2f} ({m['workers_cpu_ratio']:.2f})"
            target = (
                f"lag p99 <= {LAG_TARGET_US:g} us: {'met' if lag_ok else 'NOT met'}; "
                f"CPU <= {OPEN_CPU_TARGET}x closed: {'met' if cpu_ok else 'NOT met'}"
            )
            if m["ops"] < RATE_REACHED * rate:
                target += f"; rate not reached ({m['ops'] / rate:.0%}): an overloaded run"
        lines.append(
            f"| {label} | {m['ops']:,.0f} | {us(m['queue_us'])} | {us(m['lag_p99_us'])} "
            f"| {m['cpu_per_m']:.2f} ({m['workers_cpu_per_m']:.2f}) | {ratio} | {trusted} "
            f"| {target} |"
        )
    return lines


def ol_summary(results: list[dict]) -> list[str]:
    """The targets at every rate run, per pacing mode."""
    if not results:
        return []
    keys = " and ".join(f"{r['key']} ({r['rate']:,} req/s)" for r in results)
    lines = ["", f"Open-loop targets over {keys}:", ""]
    for p in PACINGS:
        verdicts = [ol_verdict(r["runs"][p]) for r in results]
        lag = "met" if all(v[0] for v in verdicts) else "NOT met"
        cpu = "met" if all(v[1] for v in verdicts) else "NOT met"
        short = [r["key"] for r in results if r["runs"][p]["ops"] < RATE_REACHED * r["rate"]]
        lines.append(
            f"- pacing {p}: send-lag p99 <= {LAG_TARGET_US:g} us {lag}; CPU per request "
            f"<= {OPEN_CPU_TARGET}x closed loop's {cpu}"
            + (f" (rate not reached in {', '.join(short)}: overloaded)" if short else "")
        )
    return lines


# --- D3: one workload from 3 Ray hosts on this machine against one process -----------------

VENV_PY = ROOT / ".venv" / "bin" / "python"

# Run by the project's venv (respload and ray installed by scripts/python-env.sh): a local Ray
# cluster of 3 nodes, then in each round the same workload from one process and from 3 hosts
# (respload.distributed), in alternation. Prints the samples as JSON.
D3_DRIVER = r"""
import json, resource, subprocess, sys, time
import respload, respload.distributed
from respload.testing import ray_cluster

# One host's shard run in a process of its own (the local run a Ray host is compared with):
# prints its report and its CPU from just before the run to its end.
CHILD = '''
import json, resource, sys
import respload
spec, index, start_at = json.loads(sys.argv[1]), int(sys.argv[2]), float(sys.argv[3])
def cpu():
    u = resource.getrusage(resource.RUSAGE_SELF)
    return u.ru_utime + u.ru_stime
before = cpu()
rep = respload.run(spec, shard=(index, 3), start_at=start_at)
print(json.dumps({"report": rep.to_json(), "cpu": cpu() - before}))
'''

def processes(spec):
    at = time.time() + 2.0
    children = [
        subprocess.Popen(
            [sys.executable, "-c", CHILD, json.dumps(spec), str(i), str(at)],
            stdout=subprocess.PIPE, text=True,
        )
        for i in range(3)
    ]
    out = [json.loads(c.communicate()[0]) for c in children]
    assert all(c.returncode == 0 for c in children)
    merged = respload.merge_reports([respload.Report.from_json(o["report"]) for o in out])
    return merged, [o["cpu"] for o in out]

port, n, rounds = int(sys.argv[1]), int(sys.argv[2]), int(sys.argv[3])
spec = {
    "target": {"url": f"redis://127.0.0.1:{port}"},
    "load": {"connections": 48, "requests": n, "threads": 1},
    "keys": {"prefix": "key:", "pad": 12, "range": [0, 99_999]},
    "commands": [{"name": "get"}],
    "observe": {"info": False},
}

def cpu():
    u = resource.getrusage(resource.RUSAGE_SELF)
    return u.ru_utime + u.ru_stime

samples = []
with ray_cluster(3):
    for r in range(rounds):
        kinds = ["one", "one3", "procs", "ray"]
        for kind in kinds[r % 4:] + kinds[:r % 4]:
            if kind == "procs":
                rep, process = processes(spec)
                actor = process
            elif kind != "ray":
                before = cpu()
                rep = respload.run(spec, load={"threads": 3 if kind == "one3" else 1})
                process = actor = [cpu() - before]
            else:
                done = respload.distributed.run_hosts(spec, hosts=3)
                rep, process, actor = done.report, done.run_cpu_s, done.process_cpu_s
            assert rep.totals.ops == n and rep.totals.errors == 0, rep
            samples.append({
                "kind": kind, "ops": rep.totals.ops, "ops_per_sec": rep.totals.ops_per_sec,
                "client_cpu": rep.client.cpu_user_s + rep.client.cpu_sys_s,
                "process_cpu": sum(process),
                "actor_cpu": sum(actor),
            })
print(json.dumps(samples))
"""


def venv_json(args: list[str], log: Callable[[str], None]) -> tuple[Any, str | None]:
    """Run the project's venv Python with ``args``: the JSON of its last line of output, or
    (when it failed, its stderr logged) the last line of its stderr."""
    done = subprocess.run([str(VENV_PY), *args], capture_output=True, text=True, timeout=1800)
    if done.returncode != 0:
        log(done.stderr[-3000:])
        return None, (done.stderr.strip().splitlines() or ["?"])[-1]
    return json.loads(done.stdout.strip().splitlines()[-1]), None


def d3(t: Target, rounds: int, scale: float, log: Callable[[str], None]) -> list[str]:
    """3 Ray hosts on this machine against local runs of the same total load (GET 1 KiB, 48
    connections, closed loop): one process, one process with 3 threads, and 3 processes with
    one shard each (as many processes as hosts: the same contention for this machine's 2
    cores). Client CPU per request, the workers' own (as the report says) and the whole
    processes' while they run (a Ray actor's from the start instant to its report, Ray's own
    threads included), and an actor's from its creation (set-up and the wait for the start
    instant added)."""
    ok = (
        VENV_PY.exists()
        and subprocess.run(
            [str(VENV_PY), "-c", "import ray, respload.distributed"], capture_output=True
        ).returncode
        == 0
    )
    if not ok:
        log("D3 skipped: needs .venv with respload and ray (source scripts/python-env.sh)")
        return ["", "D3 not run: .venv with respload and ray missing (scripts/python-env.sh)."]
    n = max(30_000, int(300_000 * scale)) // 3 * 3
    log(f"D3: {n:,} GETs from one process and from 3 Ray hosts, {rounds} rounds")
    samples, failed = venv_json(["-c", D3_DRIVER, str(t.port), str(n), str(rounds)], log)
    if failed is not None:
        return ["", f"D3 failed: {failed}"]
    kinds = {
        "one": "one process",
        "one3": "one process, 3 threads",
        "procs": "3 processes, one shard each",
        "ray": "3 Ray hosts",
    }
    by = {k: [s for s in samples if s["kind"] == k] for k in kinds}

    def per_m(kind: str, what: str) -> float:
        return med([s[what] / s["ops"] * 1e6 for s in by[kind]])

    def paired(kind: str, what: str) -> float:
        """Median over rounds of ``kind``'s CPU per request over one process's."""
        return med(
            [(r[what] / r["ops"]) / (o[what] / o["ops"]) for r, o in zip(by[kind], by["one"])]
        )

    for s in samples:
        log(
            f"  D3 {s['kind']}: {s['ops_per_sec']:,.0f} ops/s, client "
            f"{s['client_cpu'] / s['ops'] * 1e6:.2f} CPU s/M, processes "
            f"{s['process_cpu'] / s['ops'] * 1e6:.2f} CPU s/M, since created "
            f"{s['actor_cpu'] / s['ops'] * 1e6:.2f} CPU s/M"
        )

    def ray_over(kind: str, what: str) -> float:
        """Median over rounds of the Ray hosts' ``what`` per request over ``kind``'s whole
        processes' while running."""
        return med(
            [
                (r[what] / r["ops"]) / (o["process_cpu"] / o["ops"])
                for r, o in zip(by["ray"], by[kind])
            ]
        )

    # Ray's own cost: the hosts' whole processes against the same shards run as local
    # processes, one each (as many processes, so the same contention on this machine).
    ray_vs_procs = ray_over("procs", "process_cpu")
    # The target: 3 hosts against one process with the same total load.
    ray_vs_one = paired("ray", "process_cpu")
    met = "met" if ray_vs_one <= 1.0 else "NOT met"
    return [
        "",
        f"D3: {n:,} GETs (1 KiB, 48 connections, closed loop) from one process, from 3 Ray "
        "hosts on this machine (16 connections each, one thread each), from one process "
        "with 3 threads of 16 (the same split without Ray) and from 3 processes running one "
        "shard each (`respload.run(spec, shard=(i, 3), start_at=...)`), medians of "
        f"{len(by['one'])} rounds in alternation:",
        "",
        "| | ops/s | client CPU s/M (workers) | process CPU s/M (whole, while running) "
        "| process CPU s/M (whole, since the actor was created) |",
        "|---|---|---|---|---|",
        *(
            f"| {label} | {med([s['ops_per_sec'] for s in by[k]]):,.0f} | "
            f"{per_m(k, 'client_cpu'):.2f} | {per_m(k, 'process_cpu'):.2f} | "
            f"{per_m(k, 'actor_cpu'):.2f} |"
            for k, label in kinds.items()
        ),
        "",
        "Paired ratios to one process: 3 Ray hosts, workers' CPU "
        f"{paired('ray', 'client_cpu'):.2f}x, whole processes' "
        f"{paired('ray', 'process_cpu'):.2f}x; "
        f"one process with 3 threads, {paired('one3', 'client_cpu'):.2f}x and "
        f"{paired('one3', 'process_cpu'):.2f}x; 3 processes, {paired('procs', 'client_cpu'):.2f}x "
        f"and {paired('procs', 'process_cpu'):.2f}x. 3 Ray hosts, whole processes while "
        f"running, against the same shards as 3 local processes: {ray_vs_procs:.2f}x (since "
        f"the actors were created: {ray_over('procs', 'actor_cpu'):.2f}x); against one process "
        f"with 3 threads: {ray_over('one3', 'process_cpu'):.2f}x. Target (3 hosts cost no more "
        f"CPU per request than one process with the same total load): {met}, "
        f"{ray_vs_one:.2f}x; Ray's own share (against the same shards as local processes): "
        f"{ray_vs_procs:.2f}x.",
    ]


def m1(rounds: int, log: Callable[[str], None]) -> list[str]:
    """Merging 16 hosts' reports of a one-hour run (scripts/bench_merge.py), with and without
    interval histograms: ``merge_reports`` and ``respload merge``, medians of ``rounds``."""
    if not VENV_PY.exists():
        log("M1 skipped: needs .venv with respload (source scripts/python-env.sh)")
        return ["", "M1 not run: .venv with respload missing (scripts/python-env.sh)."]
    rows = []
    for hist in (False, True):
        log(f"M1: merging 16 one-hour reports, {'with' if hist else 'without'} interval histograms")
        script = str(ROOT / "scripts" / "bench_merge.py")
        flags = [*(["hist"] if hist else []), "--rounds", str(rounds), "--json"]
        row, failed = venv_json([script, *flags], log)
        if failed is not None:
            return ["", f"M1 failed: {failed}"]
        rows.append(row)
    worst = max(max(med(r["merge_reports"]), med(r["cli16"])) for r in rows)
    met = "met" if worst < 1.0 else "NOT met"

    def span(xs: list[float]) -> str:
        return f"{med(xs):.2f} s ({min(xs):.2f}-{max(xs):.2f})"

    return [
        "",
        "M1: 16 hosts' reports of a one-hour run (a 17 s run's 16 rows stretched to 3,600, each "
        f"host starting at another row; scripts/bench_merge.py), medians of {rounds} rounds "
        "(range):",
        "",
        "| reports | file size | `merge_reports` | `respload merge` (16 files) | "
        "`respload merge` (1 file) |",
        "|---|---|---|---|---|",
        *(
            f"| {'`output.interval_histograms = true`' if r['hist'] else 'default'} | "
            f"{r['bytes'] / 16 / 1e6:.1f} MB | {span(r['merge_reports'])} | {span(r['cli16'])} | "
            f"{span(r['cli1'])} |"
            for r in rows
        ),
        "",
        f"Target (merging 16 reports of one-hour runs takes under a second): {met}.",
    ]


def machine() -> str:
    cpu = "unknown CPU"
    with contextlib.suppress(OSError, AttributeError):
        cpu = re.search(r"model name\s*:\s*(.*)", Path("/proc/cpuinfo").read_text()).group(1)
    ver = subprocess.run(
        ["redis-server", "--version"], capture_output=True, text=True
    ).stdout.split()[2]
    rb = ""
    if resp_benchmark_exe():
        rb = subprocess.run(
            [resp_benchmark_exe(), "--version"], capture_output=True, text=True
        ).stdout.strip()
        rb = f", resp-benchmark {rb.split()[-1] if rb else '?'}"
    return (
        f"{platform.node()}: {cpu}, {os.cpu_count()} cores, Linux {platform.release()}; "
        f"redis-server/redis-benchmark {ver}{rb}; {time.strftime('%Y-%m-%d %H:%M')}"
    )


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--rounds", type=int, default=5)
    ap.add_argument(
        "--scale", type=float, default=1.0, help="multiply request counts (OL1, OL2: run times)"
    )
    ap.add_argument(
        "--only",
        default="",
        help="comma-separated scenarios: W1,W1E,W2,W3,W4,W4E,C1,C3,W5,W5C,OL1,OL2,D3,M1,TR1,DB1",
    )
    ap.add_argument("--quick", action="store_true", help="W1, W1E and W2 briefly (under a minute)")
    ap.add_argument("--connections", type=int, default=10_000, help="W5's connection count")
    ap.add_argument(
        "--soak", type=float, default=0, metavar="MINUTES", help="only the RSS soak test"
    )
    ap.add_argument("--rate", type=int, default=50_000, help="the soak test's rate")
    ap.add_argument(
        "--out", default=None, help="markdown results (default bench-results/latest.md)"
    )
    args = ap.parse_args()

    _soft, hard = resource.getrlimit(resource.RLIMIT_NOFILE)
    resource.setrlimit(resource.RLIMIT_NOFILE, (hard, hard))
    if args.quick:
        only, rounds, scale = {"W1", "W1E", "W2"}, args.rounds, 1.0
    else:
        only = set(filter(None, args.only.upper().split(","))) or {
            "W1",
            "W1E",
            "W2",
            "W3",
            "W4",
            "W4E",
            "C1",
            "C3",
            "W5",
            "W5C",
            "OL1",
            "OL2",
            "D3",
            "M1",
            "TR1",
            "DB1",
        }
        rounds, scale = args.rounds, args.scale
    if args.soak:
        only = set()

    def log(s: str) -> None:
        print(s, file=sys.stderr, flush=True)

    for exe in (RESPLOAD, RUSAGE):
        if not exe.exists():
            sys.exit(f"bench: {exe} missing: run scripts/bench.sh (it builds both)")
    srv = Servers(tls=bool(only & {"W4", "W4E"}), cluster=bool(only & {"C3", "W5C"}))
    results: list[dict] = []
    ol_results: list[dict] = []
    extra: list[str] = []
    try:
        tg = srv.targets()
        preload(tg["plain"], "key:", 12)
        if resp_benchmark_exe() and only & {"W1", "W2"} and not args.quick:
            preload(tg["plain"], "key_", 10)  # resp-benchmark's key format
        if "cluster" in tg:
            preload(tg["cluster"], "key:", 12)
        # resp-benchmark is left out of the quick check, to keep it under a minute.
        with_rb = resp_benchmark_exe() is not None and not args.quick
        for sc in scenarios(with_rb):
            if sc.key in only:
                log(f"{sc.key}: {sc.title}")
                # The same 1 KiB values for every scenario: W3 overwrites them with its own
                # 100-1000 B (redis-benchmark's 550 B), and W4 and W4E read them after it.
                preload(tg["plain"], "key:", 12)
                results.append(run_scenario(sc, tg, srv.cpu, rounds, scale, args.quick, log))
        for key in OPEN_LOOP:
            if key in only:
                rate, conns = OPEN_LOOP[key]
                log(f"{key}: open loop, {rate:,} req/s over {conns} connections, each pacing")
                preload(tg["plain"], "key:", 12)
                ol_results.append(open_loop(key, tg["plain"], rounds, scale, log))
                extra += ol_table(ol_results[-1])
        extra += ol_summary(ol_results)
        if "D3" in only:
            preload(tg["plain"], "key:", 12)
            extra += d3(tg["plain"], rounds, scale, log)
        if "M1" in only:
            extra += m1(rounds, log)
        if "TR1" in only:
            extra += tr1(tg["plain"], rounds, scale, log)
        if "DB1" in only:
            extra += db1(tg["plain"], rounds, scale, log)
        if "W5" in only:
            extra += w5(srv, args.connections, 20, log)
        if "W5C" in only:
            extra += w5c(srv, args.connections * 3 // 10, 20, log)
        if args.soak:
            extra += soak(srv, args.soak, args.rate, log)
    finally:
        srv.close()
    head = [
        f"{machine()}.",
        f"{rounds} rounds in alternation; medians"
        + (
            "; ratios are respload (or resp-benchmark) over redis-benchmark in the same round, "
            "median over rounds."
            if results
            else "."
        ),
        "",
    ]
    text = (
        "\n".join(head + (table(results) if results else []) + cross_ratios(results) + extra) + "\n"
    )
    print(text)
    out = (
        Path(args.out)
        if args.out
        else ROOT / "bench-results" / ("quick.md" if args.quick else "latest.md")
    )
    out.parent.mkdir(parents=True, exist_ok=True)
    out.write_text(text)
    out.with_suffix(".json").write_text(
        json.dumps({"machine": machine(), "results": results, "open_loop": ol_results}, indent=1)
    )
    if args.quick:
        by = {r["key"]: r["tools"]["respload"] for r in results}
        print(
            "bench-quick: respload / redis-benchmark, median paired ratios: "
            + "; ".join(
                f"{k} CPU {m['cpu_ratio']:.2f}x ops {m['ops_ratio']:.2f}x "
                f"(server {m['server_busy']:.0%} busy)"
                for k, m in by.items()
            )
        )


if __name__ == "__main__":
    main()
