"""Workload.from_redis_benchmark: a redis-benchmark line, unchanged, against a real server."""

from __future__ import annotations

import re

import pytest

import respload
from respload.testing import RedisServer


def test_from_redis_benchmark_runs_each_test_as_a_phase(redis: RedisServer) -> None:
    w = respload.Workload.from_redis_benchmark(
        f"redis-benchmark -p {redis.port} -t get,SET -n 300 -r 100 -d 10 -c 3 --seed 4"
    )
    assert len(w) == 2

    report = respload.run(w)

    assert [p.name for p in report.phases] == ["SET", "GET"]
    assert [p.totals.ops for p in report.phases] == [300, 300]
    assert redis.calls("set") == 300 == redis.calls("get")
    keys = redis.call("KEYS", "*")
    assert keys
    for key in keys:
        assert re.fullmatch(r"key:\d{12}", key), key
        assert int(key[4:]) < 100
        assert redis.call("STRLEN", key) == 10
    assert report.seed == 4


def test_from_redis_benchmark_errors_name_the_option() -> None:
    with pytest.raises(respload.SpecError) as caught:
        respload.Workload.from_redis_benchmark("valkey-benchmark -h cache --rdma -t get")
    assert caught.value.path == "--rdma"
    assert "not supported by respload" in str(caught.value)

    # -x reads the last argument from standard input, which only the CLI does.
    with pytest.raises(respload.SpecError, match="CLI") as caught:
        respload.Workload.from_redis_benchmark("redis-benchmark -x set k")
    assert caught.value.path == "-x"

    with pytest.raises(respload.SpecError) as caught:
        respload.Workload.from_redis_benchmark("redis-benchmark -c zero")
    assert caught.value.path == "-c"
    assert "`zero`" in caught.value.reason

    with pytest.raises(respload.SpecError, match="CLI"):
        respload.Workload.from_redis_benchmark("redis-benchmark -l -t ping")

    with pytest.warns(UserWarning, match="-t is ignored"):
        respload.Workload.from_redis_benchmark("redis-benchmark -t get ping")
