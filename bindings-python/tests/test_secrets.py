"""Secrets never shown from Python: a password given in a URL (user info or query), as a
field, or wrong, appears in no repr, HTML summary, report JSON, workload form or exception."""

from __future__ import annotations

import pytest

import respload
from conftest import Redis

PASSWORD = "hunter2"
SECRETS = (PASSWORD, "hunter", "Wr0ng-guess")


def shown(*texts: str) -> list[str]:
    return [s for s in SECRETS for t in texts if s in t]


def test_no_python_output_holds_a_password(redis_with_password: Redis) -> None:
    port = redis_with_password.port
    forms = [
        {"url": f"redis://:{PASSWORD}@127.0.0.1:{port}"},
        {"url": f"redis://127.0.0.1:{port}/0?password={PASSWORD}"},
        {"host": "127.0.0.1", "port": port, "password": PASSWORD},
    ]
    for target in forms:
        workload = respload.Workload(target=target, load={"requests": 50})
        report = respload.run(workload, thresholds={"p99_ms": 0.0000001})
        assert report.totals.ops == 50
        assert report.totals.errors == 0
        with pytest.raises(AssertionError) as failed:
            report.check(p99_ms=0.0000001)
        texts = [
            repr(workload),
            str(workload.to_dict()),
            repr(report),
            report._repr_html_(),
            report.to_json(),
            str(failed.value),
            repr(respload.compare(report, report)),
            respload.compare(report, report)._repr_html_(),
        ]
        assert shown(*texts) == [], target
    errors = []
    for target in [
        {"url": f"redis://:Wr0ng-guess@127.0.0.1:{port}"},
        {"url": f"redis://:Wr0ng-guess%zz@127.0.0.1:{port}"},
        {"url": f"redis://127.0.0.1:{port}/?pasword=Wr0ng-guess"},
        {"url": f"redis://:{PASSWORD}@127.0.0.1:notaport"},
    ]:
        with pytest.raises(respload.RespLoadError) as e:
            respload.run(target=target, load={"requests": 5})
        errors += [str(e.value), repr(e.value)]
    assert shown(*errors) == []
    assert any("AUTH failed" in e for e in errors)
