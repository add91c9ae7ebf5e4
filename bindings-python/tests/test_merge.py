"""Shards started at one instant and their reports merged (issue 26), against a real server."""

from __future__ import annotations

import datetime
import threading
import time
from pathlib import Path

import pytest

import respload
from respload.testing import RedisServer
from typed import typed_json


def _run_shards(w: respload.Workload, count: int) -> list[respload.Report]:
    at = datetime.datetime.now(datetime.timezone.utc) + datetime.timedelta(seconds=1)
    reports: list[respload.Report | None] = [None] * count

    def host(i: int) -> None:
        reports[i] = respload.run(w, shard=(i, count), start_at=at)

    threads = [threading.Thread(target=host, args=(i,)) for i in range(count)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert all(r is not None for r in reports)
    return [r for r in reports if r is not None]


def test_merged_shards_hold_what_the_server_counted(redis: RedisServer, tmp_path: Path) -> None:
    w = respload.Workload(
        target=redis.target(),
        seed=4,
        load={"connections": 3, "requests": 3001},
        keys={"prefix": "merge:", "range": [0, 99]},
        commands=[{"name": "set"}, {"name": "get", "weight": 2}],
    )
    shards = _run_shards(w, 3)
    assert [r.shard.index if r.shard else None for r in shards] == [0, 1, 2]
    for r in shards:
        assert r.start_skew_ms is not None
        assert 0 <= r.start_skew_ms < 250
    # Reports and report files mix.
    shards[2].save(tmp_path / "s2.json")
    merged = respload.merge_reports([shards[0], shards[1], tmp_path / "s2.json"])
    assert merged.totals.ops == 3001 == redis.calls("set") + redis.calls("get")
    assert merged.commands["SET"].ops == redis.calls("set")
    assert [h.shard for h in merged.hosts] == [0, 1, 2]
    assert sum(h.ops for h in merged.hosts) == 3001
    assert merged.workload["load"]["requests"] == 3001
    # The percentiles of the hosts' histograms added, read by the hdrhistogram package.
    added = shards[0].totals.decode_histogram()
    for r in shards[1:]:
        added.add(r.totals.decode_histogram())
    assert added.get_total_count() == 3001
    max_ns = max(round(r.totals.latency_ms.max * 1e6) for r in shards)
    for q, got in ((50, merged.totals.latency_ms.p50), (99, merged.totals.latency_ms.p99)):
        want = min(added.get_value_at_percentile(q), max_ns) / 1e6
        # Exact: the core and the hdrhistogram package both read the sample of rank
        # round(q * count) from the same added counts, and divide the same integer by 1e6.
        assert got == want, f"p{q}"
    assert merged.totals.latency_ms.max == max_ns / 1e6
    # Timeline rows sum to the totals; every new field is typed.
    assert sum(row.ops for row in merged.timeline) == 3001
    assert typed_json(merged) == merged.to_dict()
    assert typed_json(shards[0]) == shards[0].to_dict()


def test_merging_reports_of_other_workloads_names_the_difference(redis: RedisServer) -> None:
    spec = {"target": redis.target(), "load": {"connections": 2, "requests": 40}}
    a = respload.run(spec, shard=(0, 2))
    other = respload.run({**spec, "load": {"connections": 2, "requests": 42}}, shard=(1, 2))
    with pytest.raises(respload.SpecError) as caught:
        respload.merge_reports([a, other])
    assert caught.value.path == "reports[1].workload"
    assert "load.requests" in caught.value.reason
    with pytest.raises(respload.SpecError, match="missing"):
        respload.merge_reports([a])


def test_merging_a_file_that_is_missing_or_not_a_report_names_it(
    redis: RedisServer, tmp_path: Path
) -> None:
    spec = {"target": redis.target(), "load": {"connections": 2, "requests": 40}}
    a = respload.run(spec, shard=(0, 2))
    missing = tmp_path / "gone.json"
    with pytest.raises(respload.FileError) as caught:
        respload.merge_reports([a, missing])
    assert str(missing) in str(caught.value)
    bad = tmp_path / "bad.json"
    bad.write_text('{"schema_version": 1}', encoding="utf-8")
    with pytest.raises(respload.SpecError) as refused:
        respload.merge_reports([a, str(bad)])
    assert str(bad) in str(refused.value)
    # Given as a file (a str is a path here, as for Report.load), a report merges as itself.
    a.save(tmp_path / "a.json")
    b = respload.run(spec, shard=(1, 2))
    merged = respload.merge_reports([str(tmp_path / "a.json"), b])
    assert merged.totals.ops == 40


def test_a_start_instant_in_the_past_is_refused_before_traffic(redis: RedisServer) -> None:
    spec = {"target": redis.target(), "load": {"connections": 1, "requests": 10}}
    with pytest.raises(respload.SpecError) as caught:
        respload.run(spec, start_at=time.time() - 10)
    assert caught.value.path == "start_at"
    # Nothing was sent (the barrier's own keys, and its scripts' SET and GET, are all the
    # server saw: a target used as the barrier counts them in its commandstats).
    assert redis.call("KEYS", "alone:*") == []
    with pytest.raises(respload.SpecError, match="RFC 3339"):
        respload.run(spec, start_at="tomorrow")
    with pytest.raises(TypeError, match="start_at"):
        respload.run(spec, start_at=[1])
    r = respload.run(spec, start_at=f"{time.time() + 0.2:.3f}")
    assert r.start_at is not None
    assert r.start_skew_ms is not None
    assert r.phases[0].started_at >= r.start_at
    assert r.timeline[-1].unix_s == pytest.approx(r.phases[0].started_at + r.timeline[-1].t)


def test_two_hosts_snapshots_of_a_second_merge_into_one(redis: RedisServer) -> None:
    import respload.distributed

    live: list[respload.Snapshot] = []
    respload.run(
        target=redis.target(),
        load={"connections": 2, "rate": 1000, "duration": "2s"},
        commands=[{"name": "set"}],
        on_progress=live.append,
    )
    a, b = [s for s in live if s.measured and not s.partial][:2]
    both = respload.distributed.merge_snapshots([a, b])
    assert (both.ops, both.connections, both.errors) == (a.ops + b.ops, 4, 0)
    assert both.measured
    assert both.phase == a.phase
    # The latency is that of the two interval histograms added.
    added = respload.decode_histogram(a.histogram)
    added.add(respload.decode_histogram(b.histogram))
    merged = respload.decode_histogram(both.histogram)
    assert merged.get_total_count() == a.ops + b.ops
    assert list(merged.counts) == list(added.counts)
    assert both.latency_ms.max == max(a.latency_ms.max, b.latency_ms.max)
    with pytest.raises(ValueError, match="no snapshot"):
        respload.distributed.merge_snapshots([])


def test_a_barrier_runs_the_shards_phases_in_step(redis: RedisServer) -> None:
    # The target is the barrier server too: a standalone one will do.
    w = respload.Workload(
        target=redis.target(),
        seed=9,
        load={"connections": 3},
        keys={"prefix": "step:", "range": [1, 600]},
        phases=[
            {
                "name": "populate",
                "measured": False,
                "load": {"requests": "all_keys"},
                "keys": {"distribution": "sequential"},
                "commands": [{"name": "set"}],
            },
            {"name": "read", "load": {"requests": 600}, "commands": [{"name": "get"}]},
        ],
    )
    reports: list[respload.Report | None] = [None, None]

    def host(i: int) -> None:
        reports[i] = respload.run(
            w, shard=(i, 2), barrier=redis.url, barrier_id="py-step", barrier_timeout=30
        )

    threads = [threading.Thread(target=host, args=(i,)) for i in range(2)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    done = [r for r in reports if r is not None]
    assert len(done) == 2
    ended = max(r.phases[0].started_at + r.phases[0].duration_s for r in done)
    for r in done:
        assert r.phases[0].barrier_wait_s is not None
        assert r.phases[1].barrier_wait_s is not None
        assert r.phases[1].started_at >= ended
    # Every read found a key: both hosts had populated before either read.
    assert sum(r.phases[1].totals.misses for r in done) == 0
    assert sum(r.phases[1].totals.hits for r in done) == 600


def test_a_host_that_never_arrives_raises_barrier_error(redis: RedisServer) -> None:
    w = respload.Workload(
        target=redis.target(),
        load={"connections": 2, "requests": 10},
        keys={"prefix": "alone:"},
        commands=[{"name": "set"}],
    )
    with pytest.raises(respload.BarrierError) as e:
        respload.run(
            w, shard=(0, 2), barrier=redis.url, barrier_id="py-alone", barrier_timeout="1s"
        )
    assert e.value.phase == "main"
    assert "1 of 2 hosts arrived within 1s" in e.value.reason
    assert "missing: shard 1" in e.value.reason
    # Nothing was sent (the barrier's own keys, and its scripts' SET and GET, are all the
    # server saw: a target used as the barrier counts them in its commandstats).
    assert redis.call("KEYS", "alone:*") == []
    with pytest.raises(respload.SpecError) as bad:
        respload.run(w, shard=(0, 2), barrier=redis.url)
    assert bad.value.path == "barrier_id"
