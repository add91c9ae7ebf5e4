"""A one-test suite run with the installed wheel only (scripts/test-dist.sh, in a fresh venv
outside the repository): the `redis_url` fixture comes from the pytest plugin the wheel
registers (entry point `pytest11`); without it, the test errors."""

from __future__ import annotations

import respload


def test_a_budget_on_the_plugins_server(redis_url: str) -> None:
    report = respload.run(
        target={"url": redis_url},
        load={"connections": 2, "requests": 2_000},
        keys={"prefix": "plugin:", "range": [0, 999]},
        commands=[{"name": "get", "weight": 3}, {"name": "set"}],
    )
    report.check(error_rate=0.0)
    assert report.totals.ops == 2_000
