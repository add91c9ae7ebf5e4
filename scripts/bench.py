#!/usr/bin/env python3
"""respload against redis-benchmark (and resp-benchmark when installed), same server, same run.

Each scenario runs every tool in alternation for several rounds against one local
redis-server; each tool's client CPU (user + sys, from wait4's rusage) and its own reported
throughput are recorded. The machine is shared and noisy, so the result is the ratio of
medians, not absolute numbers.

    python3 scripts/bench.py [--rounds 3] [--scale 1.0] [--out bench-results/latest.md]
"""

from __future__ import annotations

import argparse
import json
import os
import re
import shutil
import socket
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
RESPLOAD = ROOT / "target" / "release" / "respload"


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def timed(cmd: list[str]) -> tuple[str, float, float]:
    """Run cmd; return (stdout, wall seconds, client CPU seconds)."""
    start = time.monotonic()
    p = subprocess.Popen(cmd, stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, text=True)
    out = p.stdout.read() if p.stdout else ""
    _, status, usage = os.wait4(p.pid, 0)
    wall = time.monotonic() - start
    if status != 0:
        sys.exit(f"bench: {' '.join(cmd)} failed with status {status}")
    return out, wall, usage.ru_utime + usage.ru_stime


def respload(port: int, spec: dict, n: int) -> tuple[float, float]:
    with tempfile.TemporaryDirectory() as d:
        path = Path(d) / "spec.json"
        report = Path(d) / "report.json"
        path.write_text(json.dumps(spec))
        _, _, cpu = timed([str(RESPLOAD), "run", str(path), "--port", str(port), "-q", "--json", str(report)])
        r = json.loads(report.read_text())
    assert r["totals"]["ops"] == n and r["totals"]["errors"] == 0, r["totals"]
    return r["totals"]["ops_per_sec"], cpu


def redis_benchmark(port: int, args: list[str], n: int) -> tuple[float, float]:
    out, _, cpu = timed(["redis-benchmark", "-p", str(port), "--csv", *args])
    rates = [float(m) for m in re.findall(r'^"[A-Z_ ]+[^"]*","([0-9.]+)"', out, re.M)]
    # Several tests run one after another: total requests over the sum of their times.
    seconds = sum(n / len(rates) / r for r in rates)
    return n / seconds, cpu


def resp_benchmark(port: int, args: list[str], n: int) -> tuple[float, float] | None:
    exe = shutil.which("resp-benchmark") or str(ROOT / ".venv" / "bin" / "resp-benchmark")
    if not Path(exe).exists():
        return None
    out, wall, cpu = timed([exe, "-p", str(port), *args])
    m = re.search(r"QPS:\s*([0-9.]+)", out)
    return (float(m.group(1)) if m else n / wall), cpu


SCENARIOS = {
    "a: GET 1 KiB, 100k keys, P=50, c=50": {
        "requests": 2_000_000,
        "respload": lambda n: {
            "load": {"connections": 50, "threads": 1, "pipeline": 50, "requests": n},
            "keys": {"prefix": "key:", "pad": 12, "range": [0, 99_999]},
            "commands": [{"name": "get"}],
        },
        "redis-benchmark": lambda n: ["-t", "get", "-n", str(n), "-d", "1024", "-P", "50", "-c", "50", "-r", "100000"],
        "resp-benchmark": lambda n: ["-c", "50", "-P", "50", "-n", str(n), "--cores", "0", "GET {key uniform 100000}"],
    },
    "b: SET/GET 1:1, 1 KiB, no pipeline, c=50": {
        "requests": 200_000,
        "respload": lambda n: {
            "load": {"connections": 50, "threads": 1, "pipeline": 1, "requests": n},
            "keys": {"prefix": "key:", "pad": 12, "range": [0, 99_999]},
            "values": {"size": 1024},
            "commands": [{"name": "set"}, {"name": "get"}],
        },
        "redis-benchmark": lambda n: ["-t", "set,get", "-n", str(n // 2), "-d", "1024", "-c", "50", "-r", "100000"],
        "resp-benchmark": None,
    },
}


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--rounds", type=int, default=3)
    ap.add_argument("--scale", type=float, default=1.0, help="multiply request counts")
    ap.add_argument("--out", default=str(ROOT / "bench-results" / "latest.md"))
    args = ap.parse_args()
    port = free_port()
    tmp = tempfile.mkdtemp()
    server = subprocess.Popen(
        ["redis-server", "--port", str(port), "--bind", "127.0.0.1", "--save", "", "--appendonly", "no", "--dir", tmp],
        stdout=subprocess.DEVNULL,
    )
    try:
        for _ in range(100):
            if subprocess.run(["redis-cli", "-p", str(port), "ping"], capture_output=True).returncode == 0:
                break
            time.sleep(0.05)
        # 100k keys of 1 KiB in redis-benchmark's key format (key:000000012345) and in
        # resp-benchmark's (key_0000012345), so every tool's GETs hit.
        for prefix, pad in (("key:", 12), ("key_", 10)):
            respload(port, {
                "load": {"connections": 20, "pipeline": 50, "requests": 100_000},
                "keys": {"prefix": prefix, "pad": pad, "range": [0, 99_999], "distribution": "sequential"},
                "values": {"size": 1024},
                "commands": [{"name": "set"}],
            }, 100_000)
        lines = [
            f"redis-server {subprocess.run(['redis-server', '--version'], capture_output=True, text=True).stdout.split()[2]}, "
            f"{os.cpu_count()} cores, {args.rounds} rounds in alternation, medians.",
            "",
            "| scenario | tool | ops/s | client CPU s per 1M requests | CPU ratio to redis-benchmark |",
            "|---|---|---|---|---|",
        ]
        for name, sc in SCENARIOS.items():
            n = int(sc["requests"] * args.scale)
            results: dict[str, list[tuple[float, float]]] = {}
            for _ in range(args.rounds):
                results.setdefault("respload", []).append(respload(port, sc["respload"](n), n))
                results.setdefault("redis-benchmark", []).append(redis_benchmark(port, sc["redis-benchmark"](n), n))
                if sc["resp-benchmark"]:
                    r = resp_benchmark(port, sc["resp-benchmark"](n), n)
                    if r:
                        results.setdefault("resp-benchmark", []).append(r)
            med = {t: (statistics.median(o for o, _ in v), statistics.median(c for _, c in v) / n * 1e6) for t, v in results.items()}
            base = med["redis-benchmark"][1]
            for tool, (ops, cpu) in med.items():
                lines.append(f"| {name} | {tool} | {ops:,.0f} | {cpu:.2f} | {cpu / base:.2f} |")
        text = "\n".join(lines) + "\n"
        print(text)
        Path(args.out).parent.mkdir(parents=True, exist_ok=True)
        Path(args.out).write_text(text)
    finally:
        server.kill()
        server.wait()
        shutil.rmtree(tmp, ignore_errors=True)


if __name__ == "__main__":
    main()
