"""A latency budget as a pytest test, with the fixtures of respload's pytest plugin.

    pytest examples/python/test_latency_budget.py

``redis_url`` is a fresh throwaway redis-server for each test (the plugin is registered when
respload is installed). Against your own service, point ``target`` at its Redis instead.
"""

from __future__ import annotations

import respload
from respload.testing import RedisCluster, RedisServer


# --8<-- [start:budget]
def test_session_cache_meets_its_budget(redis_url: str) -> None:
    report = respload.run(
        target={"url": redis_url},
        load={"connections": 4, "duration": "2s"},
        keys={"prefix": "session:", "range": [0, 4_999]},
        values={"size": 256},
        commands=[{"name": "get", "weight": 4}, {"name": "set"}],
    )
    # Generous limits for a shared CI machine; tighten them for a dedicated one.
    report.check(p99_ms=50, error_rate=0.0, ops_per_sec=500)


# --8<-- [end:budget]


def test_populated_keys_are_all_hits(redis_server: RedisServer) -> None:
    respload.run(
        target={"url": redis_server.url},
        load={"connections": 2, "requests": "all_keys"},
        keys={"prefix": "item:", "range": [0, 999], "distribution": "sequential"},
        commands=[{"name": "set"}],
    )
    report = respload.run(
        target={"url": redis_server.url},
        load={"connections": 2, "requests": 2_000},
        keys={"prefix": "item:", "range": [0, 999]},
        commands=[{"name": "get"}],
    )
    assert report.commands["GET"].hits == 2_000
    assert redis_server.call("DBSIZE") == 1_000


def test_cluster_spreads_the_load(redis_cluster: RedisCluster) -> None:
    report = respload.run(
        target=redis_cluster.target(),
        load={"connections": 2, "requests": 3_000},
        commands=[{"name": "set"}],
    ).check(error_rate=0.0)
    assert len(report.nodes) == 3  # every primary served its share of the slots
