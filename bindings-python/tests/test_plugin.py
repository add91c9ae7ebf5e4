"""The pytest plugin is registered by installing respload (entry point ``pytest11``)."""

from __future__ import annotations

import pytest

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
