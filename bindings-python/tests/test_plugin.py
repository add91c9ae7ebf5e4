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
        if how == "option":
            args += ["--respload-url", url]
        else:
            monkeypatch.setenv("RESPLOAD_URL", url)
        result = pytester.runpytest_subprocess(*args)
        result.assert_outcomes(passed=1)
        # The server saw the run, is still up, and keeps what the test left.
        assert existing.calls("set") + existing.calls("get") == 2 + 120
        assert existing.call("GET", "before") is None
        assert existing.call("GET", "left") == "by the test"
        assert existing.running
        assert existing.dir.exists()


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
