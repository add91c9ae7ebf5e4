"""The pytest plugin is registered by installing respload (entry point ``pytest11``)."""

from __future__ import annotations

import pytest

from respload.testing import redis_server

pytest_plugins = ["pytester"]


def test_the_installed_plugin_provides_the_fixtures(pytester: pytest.Pytester) -> None:
    pytester.makepyfile(
        """
        import respload

        def test_budget(redis_server, redis_url):
            assert redis_url == redis_server.url
            report = respload.run(target={"url": redis_url}, load={"requests": 200})
            report.check(error_rate=0)
            assert redis_server.calls("get") + redis_server.calls("set") == 200

        def test_fresh_server_each_test(redis_server):
            assert redis_server.call("DBSIZE") == 0
            redis_server.call("SET", "x", "1")

        def test_tls(redis_tls_server):
            assert redis_tls_server.url.startswith("rediss://")
            report = respload.run(target=redis_tls_server.target(), load={"requests": 100})
            report.check(error_rate=0)
            assert redis_tls_server.calls("get") + redis_tls_server.calls("set") == 100
        """
    )
    # A subprocess: the plugin must come from the installed entry point, not this conftest.
    result = pytester.runpytest_subprocess("-p", "no:cacheprovider")
    result.assert_outcomes(passed=3)

    disabled = pytester.runpytest_subprocess("-p", "no:respload", "-p", "no:cacheprovider")
    disabled.assert_outcomes(errors=3)
    disabled.stdout.fnmatch_lines(["*fixture 'redis_server' not found*"])


_EXISTING = """
import respload

def test_uses_the_existing_server(redis_server, redis_url):
    assert redis_url == redis_server.url == URL
    assert redis_server.call("DBSIZE") == 0  # emptied before the test
    report = respload.run(target=redis_server.target(), load={"requests": 120})
    report.check(error_rate=0)
    redis_server.call("SET", "left", "by the test")
"""


@pytest.mark.parametrize("how", ["option", "env"])
def test_fixtures_use_an_existing_server(
    pytester: pytest.Pytester, monkeypatch: pytest.MonkeyPatch, how: str
) -> None:
    with redis_server(password="p/?%@:x") as existing:
        existing.call("SET", "before", "1")
        url = existing.url
        pytester.makepyfile(_EXISTING.replace("URL", repr(url)))
        # Starting a server would fail: the tests pass only on the existing one.
        monkeypatch.setenv("RESPLOAD_REDIS_SERVER", "/nonexistent/redis-server")
        args = ["-p", "no:cacheprovider"]
        # Emptying it needs an explicit opt-in (without, it is refused: the next test).
        if how == "option":
            args += ["--respload-url", url, "--respload-allow-flush"]
            monkeypatch.delenv("RESPLOAD_ALLOW_FLUSH", raising=False)
        else:
            monkeypatch.setenv("RESPLOAD_URL", url)
            monkeypatch.setenv("RESPLOAD_ALLOW_FLUSH", "1")
        result = pytester.runpytest_subprocess(*args)
        result.assert_outcomes(passed=1)
        # The server saw the run, is still up, and keeps what the test left.
        assert existing.calls("set") + existing.calls("get") == 2 + 120
        assert existing.call("GET", "before") is None
        assert existing.call("GET", "left") == "by the test"
        assert existing.running
        assert existing.dir.exists()


_NO_FLUSH = """
import respload

def test_first(redis_server):
    respload.run(target=redis_server.target(), load={"requests": 50}).check(error_rate=0)
    redis_server.call("SET", "left", "by the first test")

def test_second(redis_server):
    pass
"""


@pytest.mark.parametrize("allow", [None, "", "0", "no"])
def test_an_existing_server_is_never_flushed_without_the_opt_in(
    pytester: pytest.Pytester, monkeypatch: pytest.MonkeyPatch, allow: str | None
) -> None:
    pytester.makepyfile(_NO_FLUSH)
    if allow is None:
        monkeypatch.delenv("RESPLOAD_ALLOW_FLUSH", raising=False)
    else:
        monkeypatch.setenv("RESPLOAD_ALLOW_FLUSH", allow)
    with redis_server() as existing:
        existing.call("SET", "kept", "mine")
        # Starting a server would fail: the tests can only use the existing one.
        monkeypatch.setenv("RESPLOAD_REDIS_SERVER", "/nonexistent/redis-server")
        # Database 0 holds a key: every test that asks for it is refused, nothing is written.
        monkeypatch.setenv("RESPLOAD_URL", existing.url)
        refused = pytester.runpytest_subprocess("-p", "no:cacheprovider")
        refused.assert_outcomes(errors=2)
        refused.stdout.fnmatch_lines(
            ["*holds 1 keys*never empties a server it did not start*RESPLOAD_ALLOW_FLUSH=1*"]
        )
        assert existing.call("GET", "kept") == "mine"
        assert existing.call("DBSIZE") == 1
        assert existing.calls("set") == 1  # only ours

        # An empty database (2) is used as it is: the first test runs and writes into it, and
        # the second, finding its keys, is refused rather than flushing them.
        used = pytester.runpytest_subprocess(
            "-p", "no:cacheprovider", "--respload-url", f"{existing.url}/2"
        )
        used.assert_outcomes(passed=1, errors=1)
        assert existing.call("GET", "kept") == "mine"
        assert existing.calls("flushdb") == existing.calls("flushall") == 0
        assert existing.running


def test_a_missing_redis_server_says_how_to_install_it_or_use_one(
    pytester: pytest.Pytester, monkeypatch: pytest.MonkeyPatch
) -> None:
    pytester.makepyfile("def test_needs_a_server(redis_url):\n    pass\n")
    monkeypatch.setenv("RESPLOAD_REDIS_SERVER", "/nonexistent/redis-server")
    monkeypatch.delenv("RESPLOAD_URL", raising=False)
    result = pytester.runpytest_subprocess("-p", "no:cacheprovider")
    result.assert_outcomes(errors=1)
    result.stdout.fnmatch_lines(
        [
            "*RedisNotFoundError*apt-get install -y redis-server*"
            "--respload-url redis://HOST:PORT (or set RESPLOAD_URL)*"
        ]
    )
