#!/usr/bin/env python3
"""Repeat mode of the timing tests (`make test-timing N=20`): runs every Rust test whose claim
is a time, a rate or a latency N times, one test at a time, and prints each test's pass rate.

A timing test is re-run inside itself only when a signal independent of its figures says
the machine was disturbed (`core/tests/common/mod.rs`, `measured`); this mode shows how often
each passes as a whole, retries included, on this machine as it is (docs/development.md,
"Timing tests"). A failed run's output is kept in target/timing/.

    scripts/test_timing.py [N] [FILTER]   # FILTER: run only the tests whose name contains it
"""

from __future__ import annotations

import subprocess
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent

# (test file of core/tests/, test name): every test that judges a time, a rate or a latency.
TIMING = [
    ("calibration", "closed_loop_latency_is_the_service_time_plus_one_round_trip"),
    ("calibration", "open_loop_latency_at_half_capacity_is_that_of_an_mg1_queue"),
    ("calibration", "above_capacity_the_server_rate_is_achieved_and_the_rest_is_unsent"),
    ("calibration", "precise_and_spin_pacing_send_on_time_where_the_coarse_timer_does_not"),
    (
        "calibration",
        "poisson_sends_on_time_pass_the_arrivals_check_and_the_coarse_timers_fail_it",
    ),
    ("compare", "a_slower_server_is_worse_beyond_noise_and_the_same_one_is_not"),
    ("open_loop", "the_achieved_rate_is_within_one_percent_of_the_target"),
    ("open_loop", "requests_due_together_on_a_connection_go_in_one_write"),
    ("ramps", "a_rate_ramp_achieves_each_steps_rate"),
    ("ramps", "a_poisson_rate_ramp_keeps_each_steps_mean_rate"),
    ("shard", "open_loop_shards_offer_the_workloads_rate_together"),
    (
        "compat_redis_benchmark",
        "with_cluster_clients_and_keys_spread_over_the_primaries_as_redis_benchmarks_do",
    ),
    ("observe", "info_sampling_gives_a_server_cpu_series_aligned_with_the_timeline"),
    # Counts resends over a BUSY window of 580 ms: the waits are times.
    ("compat_memtier", "retry_backoff_factor_and_max_retry_queue_bound_the_resends"),
]

CARGO = ["cargo", "test", "-p", "respload", "--profile", "ci"]


def main() -> int:
    n = int(sys.argv[1]) if len(sys.argv) > 1 else 20
    only = sys.argv[2] if len(sys.argv) > 2 else ""
    tests = [(f, t) for f, t in TIMING if only in t or only == f]
    if not tests:
        print(f"test-timing: no timing test matches {only!r}", file=sys.stderr)
        return 2
    files = sorted({f for f, _ in tests})
    build = [*CARGO, *(a for f in files for a in ("--test", f)), "--no-run"]
    if subprocess.run(build, cwd=ROOT).returncode != 0:
        return 1
    logs = ROOT / "target" / "timing"
    logs.mkdir(parents=True, exist_ok=True)
    passed = {t: 0 for t in tests}
    seconds = {t: 0.0 for t in tests}
    for i in range(1, n + 1):
        for f, t in tests:
            started = time.monotonic()
            out = subprocess.run(
                [*CARGO, "--test", f, "--", "--exact", t, "--nocapture"],
                cwd=ROOT,
                capture_output=True,
                text=True,
            )
            took = time.monotonic() - started
            seconds[(f, t)] += took
            ok = out.returncode == 0
            passed[(f, t)] += ok
            mark = "ok" if ok else "FAILED"
            print(f"test-timing: round {i}/{n} {f}::{t} {mark} ({took:.1f} s)", flush=True)
            if not ok:
                log = logs / f"{t}-{i}.log"
                log.write_text(out.stdout + out.stderr)
                print(f"test-timing:   output in {log.relative_to(ROOT)}", flush=True)
    print(f"\ntest-timing: pass rates over {n} rounds")
    worst = 1.0
    for f, t in tests:
        rate = passed[(f, t)] / n
        worst = min(worst, rate)
        mean = seconds[(f, t)] / n
        print(f"{rate * 100:6.1f}%  {passed[(f, t)]:3}/{n}  {mean:6.1f} s  {f}::{t}")
    return 0 if worst >= 0.95 else 1


if __name__ == "__main__":
    sys.exit(main())
