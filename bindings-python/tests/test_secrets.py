"""Secrets never shown from Python: a password given in a URL (user info or query), as a
field, or wrong, an ACL user's password, and a TLS client key's file and passphrase appear
in no repr, HTML summary, report JSON, workload form or exception."""

from __future__ import annotations

import subprocess
from pathlib import Path

import pytest

import respload
from respload.testing import RedisServer, redis_server

PASSWORD = "hunter2"
USER_PW = "Us3r/pw?%x"
USER_PW_URL = "Us3r%2Fpw%3F%25x"
KEY_PW = "K3y-pass-phrase"
SECRETS = (PASSWORD, "hunter", "Wr0ng-guess", "Us3r", KEY_PW, "secret-enc")


def shown(*texts: str) -> list[str]:
    return [s for s in SECRETS for t in texts if s in t]


def outputs(workload: respload.Workload, report: respload.Report) -> list[str]:
    """Every form of a workload and its report a user sees."""
    comparison = respload.compare(report, report)
    return [
        repr(workload),
        str(workload.to_dict()),
        repr(report),
        report._repr_html_(),
        report.to_json(),
        repr(comparison),
        comparison._repr_html_(),
    ]


def test_no_python_output_holds_a_password(redis_with_password: RedisServer) -> None:
    port = redis_with_password.port
    acl = redis_with_password.call("ACL", "SETUSER", "alice", "on", f">{USER_PW}", "~*", "+@all")
    assert acl == "OK"
    forms = [
        {"url": f"redis://:{PASSWORD}@127.0.0.1:{port}"},
        {"url": f"redis://127.0.0.1:{port}/0?password={PASSWORD}"},
        {"host": "127.0.0.1", "port": port, "password": PASSWORD},
        {"url": f"redis://alice:{USER_PW_URL}@127.0.0.1:{port}"},
        {"host": "127.0.0.1", "port": port, "user": "alice", "password": USER_PW},
    ]
    for target in forms:
        workload = respload.Workload(target=target, load={"requests": 50})
        report = respload.run(workload, thresholds={"p99_ms": 0.0000001})
        assert report.totals.ops == 50
        assert report.totals.errors == 0
        with pytest.raises(AssertionError) as failed:
            report.check(p99_ms=0.0000001)
        texts = [*outputs(workload, report), str(failed.value)]
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


def test_no_python_output_holds_the_tls_keys_file_or_passphrase(tmp_path: Path) -> None:
    with redis_server(tls=True, tls_auth_clients=True) as server:
        assert server.tls is not None
        key = str(tmp_path / "secret-enc.key")
        encrypt = ["openssl", "pkcs8", "-topk8", "-v2", "aes-256-cbc"]
        files = ["-in", server.tls.client_key, "-out", key, "-passout", f"pass:{KEY_PW}"]
        subprocess.run([*encrypt, *files], check=True)
        tls = {**server.target()["tls"], "key": key, "key_password": KEY_PW}
        target = {**server.target(), "tls": tls}
        workload = respload.Workload(target=target, load={"requests": 50})
        report = respload.run(workload)
        assert (report.totals.ops, report.totals.errors) == (50, 0)
        assert server.calls("set") + server.calls("get") == 50
        texts = outputs(workload, report)
        assert report.workload["target"]["tls"]["key_password"] == "***"
        for wrong in ["Wr0ng-guess", None]:
            bad = {k: v for k, v in tls.items() if k != "key_password"}
            if wrong is not None:
                bad["key_password"] = wrong
            with pytest.raises(respload.SpecError) as e:
                respload.Workload(target={**target, "tls": bad})
            assert e.value.path == "target.tls.key"
            texts += [str(e.value), repr(e.value)]
        assert shown(*texts) == []
        assert server.calls("set") + server.calls("get") == 50
