"""The names the package shares with the core (`respload schema bindings`): its error classes,
limit names and comparison types are the core's, and each error really raised carries its
kind's class, code and fields."""

from __future__ import annotations

import dataclasses
import json
from pathlib import Path
from typing import Any

import pytest

import respload
import respload.exceptions
from respload.cli import main
from respload.testing import RedisServer


@pytest.fixture(scope="module")
def names() -> dict[str, Any]:
    """The core's document, as `respload schema bindings` prints it."""
    import contextlib
    import io

    out = io.StringIO()
    with contextlib.redirect_stdout(out):
        assert main(["schema", "bindings"]) == 0
    document: dict[str, Any] = json.loads(out.getvalue())
    return document


def test_every_error_kind_of_the_core_has_its_class(names: dict[str, Any]) -> None:
    errors = names["errors"]
    assert [e["kind"] for e in errors] == [
        "Spec",
        "Connect",
        "Tls",
        "Auth",
        "Protocol",
        "File",
        "Barrier",
        "Internal",
    ]
    exported = set(respload.exceptions.__all__)
    for e in errors:
        cls = getattr(respload, e["class"])
        assert cls is getattr(respload.exceptions, e["class"])
        assert e["class"] in exported
        assert e["class"] in respload.__all__  # the package root exports every kind's class
        assert cls.code == e["code"]
        parent = getattr(respload, e["parent"]) if e["parent"] else respload.RespLoadError
        assert issubclass(cls, parent)
        assert respload.exceptions.ERROR_CLASSES[e["code"]] is cls
        # Every field the core declares is an attribute of an instance built as the
        # native module builds it (keyword arguments by the core's field names).
        fields = {f["name"]: (7 if f["type"] == "errno" else "x") for f in e["fields"]}
        err = cls("message", code=e["code"], **fields)
        for name, value in fields.items():
            assert getattr(err, name) == value, (e["class"], name)
        assert err.code == e["code"]
        assert str(err) == "message"
    # No class of a kind the core does not have.
    kinds = {e["class"] for e in errors}
    assert set(respload.exceptions.ERROR_CLASSES.values()) == {getattr(respload, k) for k in kinds}
    assert exported == kinds | {"RespLoadError", "UntrustedReportWarning"}


def test_errors_raised_carry_their_kinds_fields(
    names: dict[str, Any], redis_with_password: RedisServer, closed_port: int, tmp_path: Path
) -> None:
    declared = {e["class"]: [f["name"] for f in e["fields"]] for e in names["errors"]}

    with pytest.raises(respload.SpecError) as spec:
        respload.Workload(load={"connections": 0})
    assert spec.value.path == "load.connections"
    assert "0" in spec.value.reason
    assert spec.value.code == "ERR_RESPLOAD_SPEC"

    with pytest.raises(respload.ConnectError) as connect:
        respload.run(target={"port": closed_port}, load={"requests": 1})
    assert connect.value.address == f"127.0.0.1:{closed_port}"
    assert connect.value.errno == 111
    assert "refused" in connect.value.reason

    with pytest.raises(respload.AuthError) as auth:
        respload.run(
            target={"port": redis_with_password.port, "password": "not-hunter2"},
            load={"requests": 1},
        )
    assert auth.value.address == f"127.0.0.1:{redis_with_password.port}"
    assert "WRONGPASS" in auth.value.reason

    with pytest.raises(respload.TlsError) as tls:
        respload.run(
            target={
                "url": f"rediss://127.0.0.1:{redis_with_password.port}",
                "connect_timeout": "1s",
                "tls": {"insecure": True},
            },
            load={"requests": 1},
        )
    assert isinstance(tls.value, respload.ConnectError)
    assert tls.value.address == f"127.0.0.1:{redis_with_password.port}"
    assert "plain-text" in tls.value.reason

    missing = tmp_path / "missing.toml"
    with pytest.raises(respload.FileError) as file:
        respload.Workload.from_file(missing)
    assert file.value.path == str(missing)
    assert file.value.errno == 2

    for caught in (spec, connect, auth, tls, file):
        for name in declared[type(caught.value).__name__]:
            assert hasattr(caught.value, name), (type(caught.value).__name__, name)


def test_limit_names_are_the_cores(names: dict[str, Any], redis: RedisServer) -> None:
    limits = [limit["name"] for limit in names["limits"]]
    assert limits == [
        "p50_ms",
        "p90_ms",
        "p99_ms",
        "p99_9_ms",
        "max_ms",
        "error_rate",
        "ops_per_sec",
    ]
    report = respload.run(target={"url": redis.url}, load={"requests": 200})
    # Every limit of the core is a keyword of check(), and a generous one holds.
    generous = {name: (1.0 if name == "error_rate" else 1e9) for name in limits}
    generous["ops_per_sec"] = 0.0
    assert report.check(**generous) is report
    # A name the core does not know is refused, naming the ones it does.
    with pytest.raises(respload.SpecError) as unknown:
        report.check(p98_ms=1.0)
    assert unknown.value.path == "check"
    assert f"allowed: {', '.join(limits)}, commands" in unknown.value.reason


def test_comparison_types_are_the_cores(names: dict[str, Any], redis: RedisServer) -> None:
    schema = names["comparison"]
    row_fields = [f.name for f in dataclasses.fields(respload.ComparisonRow)]
    assert row_fields == schema["$defs"]["ComparisonRow"]["x-field-order"]
    own = [f.name for f in dataclasses.fields(respload.Comparison)]
    assert own[: len(schema["x-field-order"])] == schema["x-field-order"]

    spec = {"target": {"url": redis.url}, "load": {"requests": 300}}
    a, b = respload.run(**spec), respload.run(**spec)
    comparison = respload.compare(a, b)
    # One vocabulary: a comparison's metrics are the limit names of check().
    limits = [limit["name"] for limit in names["limits"]]
    assert list(dict.fromkeys(r.metric for r in comparison.rows)) == limits
    generous = {m: "+100000%" for m in limits}
    assert comparison.check(**generous).failures == []
    with pytest.raises(respload.SpecError) as unknown:
        comparison.check(p98_ms="+10%")
    assert unknown.value.path == "fail_on"
    assert f"unknown limit `p98_ms` (allowed: {', '.join(limits)})" in unknown.value.reason
