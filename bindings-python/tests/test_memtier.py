"""Workload.from_memtier: a memtier_benchmark command line against a real redis-server."""

from __future__ import annotations

import pytest

import respload
from respload.testing import RedisServer


def test_a_memtier_line_populates_every_key_once(redis: RedisServer) -> None:
    line = (
        f"memtier_benchmark -s 127.0.0.1 -p {redis.port} --hide-histogram "
        "--key-maximum=2999 -n allkeys -d 100 --key-pattern=P:P --ratio=1:0 -c 5 -t 2"
    )
    workload = respload.Workload.from_memtier(line)
    assert len(workload) == 1
    spec = workload.to_dict()
    assert spec["load"]["connections"] == 10
    assert spec["load"]["requests"] == "all_keys"

    report = respload.run(workload)
    assert report.totals.ops == 3000
    assert report.totals.errors == 0
    assert redis.call("DBSIZE") == 3000
    assert redis.calls("set") == 3000
    assert redis.call("EXISTS", "memtier-0", "memtier-2999") == 2
    assert redis.call("STRLEN", "memtier-1234") == 100


def test_memtier_options_respload_cannot_run_raise_spec_error_naming_them() -> None:
    # Every memtier option is honoured; a combination respload does not run yet, or a
    # file that cannot be read, is an error naming the option.
    with pytest.raises(respload.SpecError) as caught:
        respload.Workload.from_memtier("memtier_benchmark --client-stats=c --cluster-mode")
    assert caught.value.path == "--client-stats"
    assert "--cluster-mode" in str(caught.value)
    with pytest.raises(respload.SpecError) as caught:
        respload.Workload.from_memtier("memtier_benchmark --data-import=/no/such/file.csv")
    assert caught.value.path == "--data-import"
    assert "cannot read" in str(caught.value)
