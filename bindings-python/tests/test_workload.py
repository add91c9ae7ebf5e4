"""respload.Workload and errors: validation before any traffic, field paths, error classes."""

from __future__ import annotations

import errno
import json
from pathlib import Path

import jsonschema
import pytest
import tomllib

import respload
from respload.testing import RedisServer, free_port


def test_spec_error_names_the_field_the_value_and_what_is_allowed() -> None:
    with pytest.raises(respload.SpecError) as caught:
        respload.Workload(load={"connections": 0})

    err = caught.value
    assert err.path == "load.connections"
    assert err.reason == "0 is out of range: allowed is 1 to 1000000"
    assert str(err) == (
        "invalid spec at `load.connections`: 0 is out of range: allowed is 1 to 1000000"
    )
    assert err.code == "ERR_RESPLOAD_SPEC"
    assert isinstance(err, ValueError)
    assert isinstance(err, respload.RespLoadError)


def test_spec_error_for_a_wrong_type_and_an_unknown_field() -> None:
    with pytest.raises(respload.SpecError) as caught:
        respload.Workload.from_dict({"load": {"connections": "many"}})
    assert caught.value.path == "load.connections"
    assert "many" in str(caught.value)

    with pytest.raises(respload.SpecError) as caught:
        respload.Workload(load={"conections": 5})
    assert "conections" in str(caught.value)
    assert "connections" in caught.value.reason


def test_spec_error_in_a_phase_has_the_phase_index() -> None:
    with pytest.raises(respload.SpecError) as caught:
        respload.Workload(phases=[{"name": "a"}, {"name": "b", "load": {"pipeline": 0}}])
    assert caught.value.path == "phases[1].load.pipeline"


def test_spec_error_before_any_traffic(redis: RedisServer) -> None:
    connections = int(redis.info("stats")["total_connections_received"])

    with pytest.raises(respload.SpecError, match=r"keys\.distribution.*spiral"):
        respload.run(target=redis.target(), keys={"distribution": "spiral"})

    # No connection since (the helper keeps its own open): respload never connected.
    assert int(redis.info("stats")["total_connections_received"]) == connections


def test_non_json_values_are_spec_errors() -> None:
    with pytest.raises(respload.SpecError, match="not JSON serializable"):
        respload.Workload(load={"duration": object()})


def test_connect_error_names_the_address(closed_port: int) -> None:
    with pytest.raises(respload.ConnectError) as caught:
        respload.run(target={"host": "127.0.0.1", "port": closed_port}, load={"requests": 10})

    err = caught.value
    assert err.address == f"127.0.0.1:{closed_port}"
    assert f"cannot connect to 127.0.0.1:{closed_port}" in str(err)
    assert err.errno == errno.ECONNREFUSED
    # The operating system's text, without the address (the names Node uses too).
    assert "refused" in err.reason.lower()
    assert "127.0.0.1" not in err.reason
    assert err.code == "ERR_RESPLOAD_CONNECT"
    assert isinstance(err, ConnectionError)


def test_tls_error_is_a_connect_error(redis: RedisServer) -> None:
    # TLS to a plain-text port: the handshake fails before any traffic.
    target = {"url": f"rediss://127.0.0.1:{redis.port}", "connect_timeout": "1s"}
    with pytest.raises(respload.TlsError) as caught:
        respload.run(target={**target, "tls": {"insecure": True}}, load={"requests": 10})

    err = caught.value
    assert err.code == "ERR_RESPLOAD_TLS"
    assert isinstance(err, respload.ConnectError)
    assert err.address == redis.address
    assert "plain-text" in err.reason
    assert redis.calls("set") == 0


def test_auth_error_and_a_redacted_password(redis_with_password: RedisServer) -> None:
    server = redis_with_password
    plain = f"redis://{server.address}"  # server.url carries the password
    with pytest.raises(respload.AuthError) as caught:
        respload.run(target={"url": plain, "password": "wrong"}, load={"requests": 10})
    assert caught.value.address == server.address
    assert caught.value.reason  # the server's error reply

    report = respload.run(
        target={"url": plain, "password": "hunter2"},
        load={"requests": 100, "connections": 2},
        commands=[{"name": "set"}],
    )
    assert report.totals.ops == 100 == server.calls("set")
    assert report.workload["target"]["password"] == "***"
    assert "hunter2" not in report.to_json()


def test_from_file_toml_and_json(tmp_path: Path) -> None:
    toml = tmp_path / "spec.toml"
    toml.write_text('[load]\nconnections = 3\nrequests = 10\n[[commands]]\nname = "get"\n')
    as_json = tmp_path / "spec.json"
    as_json.write_text(
        json.dumps({"load": {"connections": 3, "requests": 10}, "commands": [{"name": "get"}]})
    )

    from_toml = respload.Workload.from_file(toml).to_dict()
    from_json = respload.Workload.from_file(str(as_json)).to_dict()

    assert from_toml == from_json
    assert from_toml["load"]["connections"] == 3
    assert from_toml["commands"] == [{"name": "get", "weight": 1}]


_SCALED = """
[vars]
url = "redis://127.0.0.1:1"
last = 99999
[scales.ci]
last = 199
[target]
url = "${url}"
[keys]
prefix = "scaled:"
range = [0, "${last}"]
distribution = "sequential"
[load]
connections = 2
requests = "all_keys"
[[commands]]
name = "set"
"""


def test_from_file_with_a_scale_and_vars(redis: RedisServer, tmp_path: Path) -> None:
    spec = tmp_path / "scaled.toml"
    spec.write_text(_SCALED)

    full = respload.Workload.from_file(spec, vars={"url": redis.url}).to_dict()
    assert full["keys"]["range"] == [0, 99999]
    workload = respload.Workload.from_file(spec, scale="ci", vars={"url": redis.url})
    report = respload.run(workload)

    assert report.totals.ops == 200 == redis.call("DBSIZE")
    with pytest.raises(respload.SpecError) as caught:
        respload.Workload.from_file(spec, vars={"nope": 1})
    assert caught.value.path == "vars.nope"
    with pytest.raises(respload.SpecError) as caught:
        respload.Workload.from_file(spec, scale="full")
    assert caught.value.path == "scale"


@pytest.mark.parametrize(
    ("fields", "path", "reason"),
    [
        ({"load": {"connections": 10**400}}, "load.connections", "(401 digits) is out of range"),
        ({"seed": 2**64}, "seed", "18446744073709551616 is out of range"),
        ({"commands": [{"name": "set", "weight": -(2**70)}]}, "commands[0].weight", "range"),
        ({"load": {"rate": float("nan")}}, "load.rate", "nan is not a finite number"),
        ({"phases": [{"load": {"rate": float("-inf")}}]}, "phases[0].load.rate", "-inf is not"),
    ],
)
def test_numbers_json_cannot_carry_are_refused_by_field_path(
    fields: dict[str, object], path: str, reason: str
) -> None:
    with pytest.raises(respload.SpecError) as caught:
        respload.Workload(**fields)
    assert caught.value.path == path
    assert reason in caught.value.reason
    assert f"`{path}`" in str(caught.value)
    # The widest integers still reach the core.
    assert respload.Workload(seed=2**64 - 1).to_dict()["seed"] == 2**64 - 1


def test_report_check_refuses_a_budget_json_cannot_carry(redis: RedisServer) -> None:
    report = respload.run(target=redis.target(), load={"connections": 1, "requests": 10})
    with pytest.raises(respload.SpecError) as caught:
        report.check(p99_ms=10**400)
    assert caught.value.path == "check.p99_ms"


def test_from_file_argument_types(tmp_path: Path) -> None:
    spec = tmp_path / "spec.toml"
    spec.write_text('[vars]\nn = 5\n[load]\nconnections = "${n}"\n')
    with pytest.raises(TypeError, match="scale: expected the name"):
        respload.Workload.from_file(spec, scale=5)  # type: ignore[arg-type]
    # Not a mapping: the core's error, as in Node.
    with pytest.raises(respload.SpecError) as caught:
        respload.Workload.from_file(spec, vars=[1])  # type: ignore[arg-type]
    assert caught.value.path == "vars"
    assert "expected a mapping" in str(caught.value)
    assert respload.Workload.from_file(spec, vars={"n": 3}).to_dict()["load"]["connections"] == 3


def test_from_file_errors(tmp_path: Path) -> None:
    with pytest.raises(respload.FileError) as caught:
        respload.Workload.from_file(tmp_path / "missing.toml")
    assert caught.value.errno == errno.ENOENT
    assert "no such file" in caught.value.reason.lower()
    assert "missing.toml" not in caught.value.reason
    assert caught.value.path.endswith("missing.toml")
    assert isinstance(caught.value, OSError)

    bad = tmp_path / "bad.toml"
    bad.write_text("[load]\nconnections = 0\n")
    with pytest.raises(respload.SpecError) as spec_error:
        respload.Workload.from_file(bad)
    assert spec_error.value.path == "load.connections"
    assert "bad.toml" in str(spec_error.value)


def test_to_dict_is_the_normalized_spec() -> None:
    w = respload.Workload(load={"connections": 2, "requests": 5}, seed=3)

    d = w.to_dict()

    assert d["load"] == {"connections": 2, "pipeline": 1, "requests": 5, "timeout": "10s"}
    assert d["seed"] == 3
    assert d["commands"] == [{"name": "set", "weight": 1}, {"name": "get", "weight": 10}]
    assert respload.Workload.from_dict(d).to_dict() == d
    assert len(w) == 1


def test_to_dict_redacts_passwords_unless_asked() -> None:
    w = respload.Workload(target={"url": "redis://bob:hunter2@127.0.0.1:7000", "db": 0})

    assert w.to_dict()["target"]["url"] == "redis://bob:***@127.0.0.1:7000"
    assert "hunter2" not in repr(w)
    full = w.to_dict(redact=False)
    assert full["target"]["url"] == "redis://bob:hunter2@127.0.0.1:7000"
    assert respload.Workload.from_dict(full).to_dict(redact=False) == full


def test_with_overrides_returns_a_new_workload() -> None:
    w = respload.Workload(load={"connections": 2})

    o = w.with_overrides(target={"port": 7001}, load={"pipeline": 4})

    assert o.to_dict()["target"]["port"] == 7001
    assert o.to_dict()["load"]["pipeline"] == 4
    assert w.to_dict()["load"]["pipeline"] == 1
    with pytest.raises(respload.SpecError) as caught:
        w.with_overrides(load={"pipeline": 0})
    assert caught.value.path == "load.pipeline"


def test_a_port_override_replaces_a_spec_files_url_and_keeps_its_db(
    redis: RedisServer, tmp_path: Path
) -> None:
    # The file's URL points at a port nobody listens on: only the override reaches the server.
    spec = tmp_path / "spec.toml"
    spec.write_text(
        f'[target]\nurl = "redis://127.0.0.1:{free_port()}/2"\n[load]\nrequests = 60\n'
        '[keys]\nrange = [0, 59]\ndistribution = "sequential"\n[[commands]]\nname = "set"\n'
    )
    report = respload.run(str(spec), target={"port": redis.port})
    assert (report.totals.ops, report.totals.errors) == (60, 0)
    moved = respload.Workload.from_file(spec).with_overrides(target={"port": 1})
    target = moved.to_dict()["target"]
    assert "url" not in target
    assert (target["host"], target["port"], target["db"]) == ("127.0.0.1", 1, 2)
    assert redis.calls("set") == 60
    assert redis.call("DBSIZE") == 0  # database 0: the keys went to the URL's database 2


def test_shards_of_a_workload_send_it_exactly(redis: RedisServer) -> None:
    w = respload.Workload(
        target=redis.target(),
        load={"connections": 4, "requests": 10},
        keys={"prefix": "shard:", "range": [0, 8], "distribution": "sequential"},
        commands=[{"name": "set"}],
        observe={"info": False},
    )
    loads = [w.shard(i, 3).to_dict()["load"] for i in range(3)]
    assert [(x["connections"], x["requests"]) for x in loads] == [(2, 4), (1, 3), (1, 3)]
    ranges = [w.shard(i, 3).to_dict()["keys"]["range"] for i in range(3)]
    assert ranges == [[0, 2], [3, 5], [6, 8]]
    ops = [respload.run(w, shard=(i, 3)).totals.ops for i in range(3)]
    assert ops == [4, 3, 3]
    # Each shard walked its own part of the keys: 9 keys, 10 SETs (shard 0 wrapped once).
    assert redis.call("DBSIZE") == 9
    assert redis.calls("set") == 10


def test_a_shard_that_cannot_be_made_is_named() -> None:
    w = respload.Workload(load={"connections": 2})
    with pytest.raises(respload.SpecError) as caught:
        w.shard(0, 3)
    assert caught.value.path == "load.connections"
    assert "2 connections" in caught.value.reason
    with pytest.raises(ValueError, match=r"shard: 3/3"):
        w.shard(3, 3)
    with pytest.raises(TypeError, match="shard index"):
        w.shard("0", 3)  # type: ignore[arg-type]
    with pytest.raises(TypeError, match=r"shard: expected \(index, count\)"):
        respload.Runner(w, shard=1)


ROOT = Path(__file__).resolve().parents[2]


def test_spec_files_hold_to_the_published_json_schema() -> None:
    # docs/reference/spec.schema.json (`respload schema spec`, derived from the Rust types)
    # accepts what respload reads and refuses the shapes respload refuses.
    schema = json.loads((ROOT / "docs/reference/spec.schema.json").read_text(encoding="utf-8"))
    validator = jsonschema.Draft202012Validator(schema)

    def errors(spec: object) -> list[str]:
        return sorted(e.message for e in validator.iter_errors(spec))

    # Every example, normalized (its variables replaced, its phases expanded), and one that
    # uses no variables as written.
    examples = sorted((ROOT / "examples/scenarios").glob("*.toml"))
    assert len(examples) >= 5
    for path in examples:
        assert errors(respload.Workload.from_file(path).to_dict()) == [], path
    quickstart = tomllib.loads((ROOT / "examples/scenarios/quickstart.toml").read_text())
    assert errors(quickstart) == []
    for w in (
        respload.Workload.from_memtier("--ratio=1:10 -n 100 --key-pattern=G:G"),
        respload.Workload.from_redis_benchmark("-t set,get -n 100 -d 64"),
    ):
        assert errors(w.to_dict()) == []
    # The forms respload reads by hand, each taken by both.
    good = [
        {"load": {"duration": "1.5s", "warmup": 2, "requests": "all_keys"}},
        {"load": {"duration": "250 ms", "rate": 100, "arrivals": "poisson"}},
        {"keys": {"distribution": "zipf"}},
        {"keys": {"distribution": {"kind": "zipf", "exponent": 1.2}}},
        {"keys": {"distribution": {"kind": "hotset", "hot_keys": 0.1, "hot_ops": 0.9}}},
        {"values": {"size": 32}},
        {"values": {"size": [100, 1000]}},
        {"values": {"size": [[100, 3], [1000, 1]]}},
        {"thresholds": {"p99_ms": 5, "commands": {"GET": {"p50_ms": 1}}, "abort_on_fail": True}},
        {"phases": [{"name": "a", "repeat": 2, "load": {"requests": 10}}]},
    ]
    for spec in good:
        respload.Workload.from_dict(spec)
        assert errors(spec) == [], spec
    bad = [
        {"lode": {}},
        {"load": {"connections": "many"}},
        {"load": {"duration": "10 parsecs"}},
        {"load": {"requests": "some"}},
        {"load": {"arrivals": "bursty"}},
        {"keys": {"distribution": "pareto"}},
        {"keys": {"distribution": {"kind": "zipf", "slope": 1}}},
        {"values": {"size": [1, 2, 3]}},
        {"thresholds": {"p99": 5}},
        {"phases": [{"load": {"conections": 2}}]},
    ]
    for spec in bad:
        with pytest.raises(respload.SpecError):
            respload.Workload.from_dict(spec)
        assert errors(spec) != [], spec
