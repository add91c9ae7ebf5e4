"""respload.testing: throwaway servers and clusters, and the pytest plugin's fixtures."""

from __future__ import annotations

import os
import socket
import time

import pytest

import respload
from respload.testing import (
    RedisCluster,
    RedisNotFoundError,
    RedisServer,
    ReplyError,
    redis_cluster,
    redis_server,
)
from typed import typed_json


def _gone(pid: int, port: int, deadline_s: float = 5.0) -> bool:
    """Whether the process exited and nothing listens on its port any more."""
    deadline = time.monotonic() + deadline_s
    while time.monotonic() < deadline:
        try:
            os.kill(pid, 0)
        except ProcessLookupError:
            with socket.socket() as s:
                return s.connect_ex(("127.0.0.1", port)) != 0
        time.sleep(0.02)
    return False


def test_redis_server_runs_and_is_stopped_even_on_errors() -> None:
    seen: dict[str, object] = {}

    def use_and_fail() -> None:
        with redis_server(args=["--maxmemory", "10mb"]) as r:
            seen.update(pid=int(r.info("server")["process_id"]), port=r.port, dir=r.dir)
            assert r.url == f"redis://127.0.0.1:{r.port}"
            assert r.call("CONFIG", "GET", "maxmemory") == ["maxmemory", str(10 * 1024 * 1024)]
            assert r.call("CONFIG", "GET", "save") == ["save", ""]
            with pytest.raises(ReplyError) as caught:
                r.call("NOSUCHCOMMAND")
            assert caught.value.code == "ERR"
            raise RuntimeError("boom")

    with pytest.raises(RuntimeError, match="boom"):
        use_and_fail()
    assert _gone(seen["pid"], seen["port"])  # type: ignore[arg-type]
    assert not seen["dir"].exists()  # type: ignore[attr-defined]


def test_redis_server_with_a_password() -> None:
    with redis_server(password="s3cret") as r:
        report = respload.run(target=r.target(), load={"requests": 300, "connections": 2})
        assert report.totals.errors == 0
        assert r.calls("set") + r.calls("get") == 300
        assert r.url == f"redis://:s3cret@127.0.0.1:{r.port}"


def test_a_missing_binary_is_a_clear_error(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("RESPLOAD_REDIS_SERVER", "/nonexistent/redis-server")
    with pytest.raises(RedisNotFoundError, match="not on PATH: install it"), redis_server():
        pass


def test_fixtures_redis_server_and_url(redis_server: RedisServer, redis_url: str) -> None:
    assert redis_url == redis_server.url
    respload.run(
        target={"url": redis_url},
        load={"requests": 500, "connections": 2},
        keys={"range": [0, 499], "distribution": "sequential"},
        commands=[{"name": "set"}],
    ).check(error_rate=0)
    assert redis_server.call("DBSIZE") == 500


def test_cluster_fixture_routes_by_slot_and_reports_per_node(redis_cluster: RedisCluster) -> None:
    primaries = redis_cluster.primaries()
    assert len(primaries) == 3
    assert len(redis_cluster.replicas()) == 3
    assert redis_cluster.nodes[0].call("DBSIZE") == 0  # flushed for this test
    report = respload.run(
        target=redis_cluster.target(),
        load={"requests": 3000, "connections": 2},
        keys={"prefix": "c:", "range": [0, 2999], "distribution": "sequential"},
        commands=[{"name": "set"}],
    )
    assert report.totals.ops == 3000
    assert report.totals.errors == 0
    assert report.server.mode == "cluster"
    # Per node: the requests each primary answered, as its own counters say.
    assert set(report.nodes) == {p.address for p in primaries}
    for p in primaries:
        assert report.nodes[p.address].ops == p.calls("set") == p.call("DBSIZE") > 0
    assert report.phases[0].nodes == report.nodes
    assert sum(s.ops for s in report.nodes.values()) == report.totals.ops
    assert redis_cluster.owner("c:7").call("GET", "c:7") is not None
    # Every field, nodes included, is typed.
    assert typed_json(report) == report.to_dict()


def test_moved_slots_show_as_typed_redirects(redis_cluster: RedisCluster) -> None:
    primaries = redis_cluster.primaries()
    source = redis_cluster.owner("key:0")
    dest = next(p for p in primaries if p.port != source.port)
    slot = source.call("CLUSTER", "KEYSLOT", "key:0")
    runner = respload.Runner(
        target=redis_cluster.target(),
        load={"connections": 2, "pipeline": 2, "duration": "2s", "threads": 1},
        keys={"range": [0, 9]},
        commands=[{"name": "get"}],
    ).start()
    time.sleep(0.6)
    dest_id = dest.call("CLUSTER", "MYID")
    # The new owner first, then the old one (which then answers MOVED), then the rest.
    for p in [dest, source, *(p for p in primaries if p.port not in (source.port, dest.port))]:
        p.call("CLUSTER", "SETSLOT", slot, "NODE", dest_id)
    report = runner.wait()
    assert report.totals.errors == 0, report.totals.errors_by_kind
    assert report.totals.redirects >= 1
    assert report.commands["GET"].redirects == report.totals.redirects
    assert report.to_dict()["totals"]["redirects"] == report.totals.redirects
    assert typed_json(report) == report.to_dict()


def test_cluster_with_a_password_and_no_replicas() -> None:
    with redis_cluster(primaries=3, replicas=0, password="pw") as cluster:
        assert len(cluster.nodes) == 3
        assert cluster.seed_urls[0] == f"redis://:pw@127.0.0.1:{cluster.nodes[0].port}"
        report = respload.run(target=cluster.target(), load={"requests": 600, "connections": 1})
        assert report.totals.errors == 0
        assert len(report.nodes) == 3
        pids = [(int(n.info("server")["process_id"]), n.port) for n in cluster.nodes]
    assert all(_gone(pid, port) for pid, port in pids)


def test_cluster_needs_three_primaries() -> None:
    with pytest.raises(ValueError, match="at least 3"), redis_cluster(primaries=2):
        pass
