"""pytest fixtures for load tests, registered as the ``respload`` pytest plugin.

Installing respload makes these fixtures available in every test suite (entry point
``pytest11``); disable them with ``-p no:respload``.

- ``redis_server``: a fresh :class:`respload.testing.RedisServer` for each test, stopped
  after it. With ``--respload-url URL`` (or ``$RESPLOAD_URL``), the server already running
  there instead (:func:`respload.testing.connect_redis`), left running after. It is never
  emptied unless you opt in: with ``--respload-allow-flush`` (or ``RESPLOAD_ALLOW_FLUSH=1``)
  its database is emptied (``FLUSHDB``) before each test; without, a database that holds keys
  fails the test's setup, and an empty one is used as it is.
- ``redis_url``: that server's URL (``redis://127.0.0.1:PORT``, or the one given).
- ``redis_tls_server``: a fresh TLS-only server (throwaway certificates, no client
  certificate asked) for each test; ``redis_tls_server.target()`` is a workload ``target``
  with its ``rediss://`` URL and ``tls.ca_file``.
- ``redis_cluster``: a :class:`respload.testing.RedisCluster` (3 primaries, 1 replica each),
  started once per session, since a cluster takes seconds to form, and flushed before each
  test. If a test broke it (stopped a node, moved slots), the next test gets a new one.

::

    def test_cache_latency(redis_url):
        respload.run(target={"url": redis_url}, load={"requests": 10_000}).check(p99_ms=5)
"""

from __future__ import annotations

import contextlib
import os
from collections.abc import Iterator

import pytest

from .testing import (
    RedisCluster,
    RedisNotFoundError,
    RedisServer,
    connect_redis,
    redis_cluster,
    start_redis,
)

__all__ = [
    "redis_cluster_fixture",
    "redis_server_fixture",
    "redis_tls_server_fixture",
    "redis_url_fixture",
]


def pytest_addoption(parser: pytest.Parser) -> None:
    """``--respload-url``: run the ``redis_server`` fixture's tests against a server already
    running."""
    parser.getgroup("respload").addoption(
        "--respload-url",
        dest="respload_url",
        default=None,
        metavar="URL",
        help="redis://[user[:password]@]host[:port][/db] of a server already running, for the "
        "redis_server and redis_url fixtures instead of a throwaway redis-server (default: "
        "$RESPLOAD_URL). It is not emptied: a database that holds keys is refused, unless "
        "--respload-allow-flush.",
    )
    parser.getgroup("respload").addoption(
        "--respload-allow-flush",
        dest="respload_allow_flush",
        action="store_true",
        default=None,
        help="empty (FLUSHDB) the database of --respload-url before each test that uses it "
        "(default: $RESPLOAD_ALLOW_FLUSH=1). Only for a server that holds nothing you keep.",
    )


def _flush_allowed(config: pytest.Config) -> bool:
    """Whether ``--respload-allow-flush`` or ``RESPLOAD_ALLOW_FLUSH`` (``1``, ``true`` or
    ``yes``) lets the fixtures empty a server they did not start."""
    if config.getoption("respload_allow_flush"):
        return True
    return os.environ.get("RESPLOAD_ALLOW_FLUSH", "").strip().lower() in ("1", "true", "yes")


class _ClusterHolder:
    """The session's cluster, started on first use and replaced when a test broke it."""

    def __init__(self) -> None:
        self._context: contextlib.AbstractContextManager[RedisCluster] | None = None
        self._cluster: RedisCluster | None = None

    def get(self) -> RedisCluster:
        if self._cluster is not None and not _healthy(self._cluster):
            self.close()
        if self._cluster is None:
            self._context = redis_cluster(primaries=3, replicas=1)
            self._cluster = self._context.__enter__()
        return self._cluster

    def close(self) -> None:
        context, self._context, self._cluster = self._context, None, None
        if context is not None:
            context.__exit__(None, None, None)


def _healthy(cluster: RedisCluster) -> bool:
    try:
        if not all(n.running for n in cluster.nodes):
            return False
        if len(cluster.primaries()) != 3:  # a failover swapped roles: start afresh
            return False
        return all("cluster_state:ok" in str(n.call("CLUSTER", "INFO")) for n in cluster.nodes)
    except (OSError, RuntimeError):
        return False


@pytest.fixture(scope="session")
def _respload_cluster_holder() -> Iterator[_ClusterHolder]:
    holder = _ClusterHolder()
    try:
        yield holder
    finally:
        holder.close()


@pytest.fixture(name="redis_server")
def redis_server_fixture(request: pytest.FixtureRequest) -> Iterator[RedisServer]:
    """A fresh ``redis-server`` on a free 127.0.0.1 port for this test, or the server at
    ``--respload-url`` / ``$RESPLOAD_URL``: emptied with ``--respload-allow-flush`` /
    ``RESPLOAD_ALLOW_FLUSH=1``, else refused when it holds keys."""
    url = request.config.getoption("respload_url") or os.environ.get("RESPLOAD_URL")
    if url:
        server = connect_redis(url)
        if _flush_allowed(request.config):
            # Opted in: each test starts from an empty database, as with a server of its own.
            server.call("FLUSHDB")
        else:
            # Someone else's server is never emptied without consent, nor written into when
            # it holds keys: a workload's SETs could overwrite them.
            keys = server.call("DBSIZE")
            if keys:
                server.stop()
                pytest.fail(
                    f"redis_server: the database of {server.host}:{server.port} "
                    f"(--respload-url / RESPLOAD_URL) holds {keys} keys, and the fixture never "
                    "empties a server it did not start unless --respload-allow-flush (or "
                    "RESPLOAD_ALLOW_FLUSH=1) is given: give it to empty that database (FLUSHDB) "
                    "before each test, or point the URL at an empty database (/DB)",
                    pytrace=False,
                )
    else:
        try:
            server = start_redis()
        except RedisNotFoundError as e:
            raise RedisNotFoundError(
                f"{e}; or run the tests against a server already running: "
                "pytest --respload-url redis://HOST:PORT (or set RESPLOAD_URL)"
            ) from None
    try:
        yield server
    finally:
        server.stop()


@pytest.fixture(name="redis_url")
def redis_url_fixture(redis_server: RedisServer) -> str:
    """The URL of this test's ``redis_server``."""
    return redis_server.url


@pytest.fixture(name="redis_tls_server")
def redis_tls_server_fixture() -> Iterator[RedisServer]:
    """A fresh TLS-only ``redis-server`` (``tls=True``) for this test."""
    server = start_redis(tls=True)
    try:
        yield server
    finally:
        server.stop()


@pytest.fixture(name="redis_cluster")
def redis_cluster_fixture(_respload_cluster_holder: _ClusterHolder) -> RedisCluster:
    """The session's Redis Cluster (3 primaries, 1 replica each), emptied for this test."""
    cluster = _respload_cluster_holder.get()
    for node in cluster.primaries():
        node.call("FLUSHALL")
    return cluster
