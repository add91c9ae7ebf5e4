"""respload.testing: throwaway servers and clusters, and the pytest plugin's fixtures."""

from __future__ import annotations

import json
import os
import socket
import subprocess
import sys
import time
from pathlib import Path

import pytest

import respload
from respload.testing import (
    RedisCluster,
    RedisNotFoundError,
    RedisServer,
    ReplyError,
    connect_redis,
    redis_cluster,
    redis_server,
    start_redis,
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


def test_a_password_with_url_delimiters_is_percent_encoded_in_the_url() -> None:
    password = "p/?%@:#x"
    with redis_server(password=password) as r:
        assert r.url == f"redis://:p%2F%3F%25%40%3A%23x@127.0.0.1:{r.port}"
        assert r.call("CONFIG", "GET", "requirepass") == ["requirepass", password]
        # The core decodes it back: the run authenticates with the password itself.
        report = respload.run(target=r.target(), load={"requests": 200, "connections": 2})
        assert report.totals.errors == 0
        assert r.calls("set") + r.calls("get") == 200


def test_a_missing_binary_is_a_clear_error(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("RESPLOAD_REDIS_SERVER", "/nonexistent/redis-server")
    missing = pytest.raises(RedisNotFoundError, match="not on PATH: install it")
    with missing as caught, redis_server():
        pass
    assert "apt-get install -y redis-server" in str(caught.value)


def test_connect_redis_uses_a_running_server_and_leaves_it_running() -> None:
    with redis_server(password="p/?%@:x") as own:
        url = f"{own.url}/2"
        existing = connect_redis(url)
        assert (existing.url, existing.target()) == (url, {"url": url})
        assert (existing.host, existing.port, existing.password) == (own.host, own.port, "p/?%@:x")
        assert existing.dir.resolve() == own.dir.resolve()
        # Its connection authenticated and selected database 2: what a run writes there.
        respload.run(
            target=existing.target(),
            load={"requests": 50},
            keys={"range": [0, 49], "distribution": "sequential"},
            commands=[{"name": "set"}],
        ).check(error_rate=0)
        assert existing.call("DBSIZE") == 50
        assert own.call("DBSIZE") == 0  # own's connection is on database 0
        existing.stop()
        assert not existing.running
        assert own.running
        assert own.dir.exists()
        assert own.call("PING") == "PONG"
    wrong = pytest.raises(ReplyError, match=r"WRONGPASS|invalid")
    with redis_server(password="right") as own, wrong:
        connect_redis(f"redis://:wrong@127.0.0.1:{own.port}")
    with pytest.raises(ValueError, match="expected redis://"):
        connect_redis("http://127.0.0.1:1")


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


def _run_set_get(target: dict[str, object], n: int) -> respload.Report:
    return respload.run(
        target=target,
        load={"requests": n, "connections": 2, "pipeline": 4},
        keys={"prefix": "t:", "range": [0, n - 1], "distribution": "sequential"},
        commands=[{"name": "set", "weight": 1}, {"name": "get", "weight": 1}],
    )


def test_tls_server_serves_tls_only_and_counts_match_its_commandstats() -> None:
    with redis_server(tls=True) as r:
        assert r.tls is not None
        assert r.url == f"rediss://127.0.0.1:{r.port}"
        assert r.target() == {"url": r.url, "tls": {"ca_file": r.tls.ca_file}}
        assert r.call("CONFIG", "GET", "tls-port") == ["tls-port", str(r.port)]
        assert r.call("CONFIG", "GET", "port") == ["port", "0"]  # no plain-text port
        assert r.call("CONFIG", "GET", "tls-auth-clients") == ["tls-auth-clients", "no"]
        report = _run_set_get(r.target(), 1000)
        assert report.totals.errors == 0
        assert report.totals.ops == 1000
        # What the server counted, read over TLS by the helper's own client.
        assert r.calls("set") == report.commands["SET"].ops > 0
        assert r.calls("get") == report.commands["GET"].ops > 0
        assert r.call("DBSIZE") == r.calls("set")
        # Without TLS the port does not answer: the run fails to connect, nothing is sent.
        with pytest.raises(respload.ConnectError):
            respload.run(target={"url": f"redis://127.0.0.1:{r.port}"}, load={"requests": 10})
        assert r.calls("set") == report.commands["SET"].ops
        # redis-cli over TLS sees the same server.
        cli = subprocess.run(
            ["redis-cli", "--tls", "--cacert", r.tls.ca_file, "-p", str(r.port), "DBSIZE"],
            capture_output=True,
            text=True,
            check=True,
        )
        assert int(cli.stdout) == r.calls("set")
        certs = Path(r.tls.dir)
        assert certs.is_dir()
    assert not certs.exists()


def test_mutual_tls_needs_the_client_certificate() -> None:
    with redis_server(tls=True, tls_auth_clients=True, password="pw") as r:
        assert r.tls is not None
        assert r.url == f"rediss://:pw@127.0.0.1:{r.port}"
        tls = r.target()["tls"]
        assert tls == {"ca_file": r.tls.ca_file, "cert": r.tls.client_cert, "key": r.tls.client_key}
        with pytest.raises(respload.TlsError) as refused:
            respload.run(
                target={"url": r.url, "tls": {"ca_file": r.tls.ca_file}}, load={"requests": 10}
            )
        assert "certificate" in str(refused.value)
        report = _run_set_get(r.target(), 400)
        assert report.totals.errors == 0
        assert r.calls("set") + r.calls("get") == 400
        assert r.call("CONFIG", "GET", "tls-auth-clients") == ["tls-auth-clients", "yes"]


def test_options_that_do_not_fit_are_refused_before_a_server_starts() -> None:
    with pytest.raises(ValueError, match="tls_auth_clients = True needs tls = True"):
        start_redis(tls_auth_clients=True)
    with pytest.raises(ValueError, match="start_timeout = 0"):
        start_redis(start_timeout=0)


def test_a_server_that_cannot_start_says_why() -> None:
    with pytest.raises(RuntimeError, match="exited at start") as caught:
        start_redis(args=["--no-such-directive", "x"])
    # redis-server's own complaint, from its error output.
    assert "no-such-directive" in str(caught.value)


def test_fixture_redis_tls_server(redis_tls_server: RedisServer) -> None:
    assert redis_tls_server.url.startswith("rediss://127.0.0.1:")
    _run_set_get(redis_tls_server.target(), 200).check(error_rate=0)
    assert redis_tls_server.calls("set") + redis_tls_server.calls("get") == 200


def test_cluster_over_mutual_tls_bus_and_replication_included() -> None:
    with redis_cluster(primaries=3, replicas=1, tls=True, tls_auth_clients=True) as cluster:
        assert cluster.tls is not None
        assert all(n.url.startswith("rediss://") for n in cluster.nodes)
        target = cluster.target()
        assert target["tls"] == {
            "ca_file": cluster.tls.ca_file,
            "cert": cluster.tls.client_cert,
            "key": cluster.tls.client_key,
        }
        for n in cluster.nodes:
            assert n.call("CONFIG", "GET", "tls-cluster") == ["tls-cluster", "yes"]
            assert n.call("CONFIG", "GET", "tls-replication") == ["tls-replication", "yes"]
        primaries = cluster.primaries()
        assert len(primaries) == 3
        assert len(cluster.replicas()) == 3  # each synced with its primary over TLS
        report = respload.run(
            target=target,
            load={"requests": 3000, "connections": 2},
            keys={"prefix": "c:", "range": [0, 2999], "distribution": "sequential"},
            commands=[{"name": "set"}],
        )
        assert report.totals.errors == 0
        assert set(report.nodes) == {p.address for p in primaries}
        for p in primaries:
            assert report.nodes[p.address].ops == p.calls("set") == p.call("DBSIZE") > 0
        certs = Path(cluster.tls.dir)
    assert not certs.exists()


def test_nothing_outlives_a_process_killed_with_sigkill() -> None:
    script = (
        "import json, sys, time\n"
        "from respload.testing import start_redis\n"
        "r = start_redis(tls=True)\n"
        "pid = int(r.info('server')['process_id'])\n"
        "print(json.dumps([pid, r.port, str(r.dir), r.tls.dir]), flush=True)\n"
        "time.sleep(60)\n"
    )
    child = subprocess.Popen([sys.executable, "-c", script], stdout=subprocess.PIPE, text=True)
    try:
        assert child.stdout is not None
        pid, port, server_dir, certs_dir = json.loads(child.stdout.readline())
        assert Path(certs_dir, "ca.crt").is_file()
        assert Path(server_dir).is_dir()
    finally:
        child.kill()  # SIGKILL: no cleanup code of the child runs
        child.wait()
    assert _gone(pid, port)
    deadline = time.monotonic() + 5
    while time.monotonic() < deadline and (Path(certs_dir).exists() or Path(server_dir).exists()):
        time.sleep(0.02)
    assert not Path(certs_dir).exists(), "the certificates outlived the process"
    assert not Path(server_dir).exists(), "the server's directory outlived the process"
