"""Shared fixtures: a throwaway redis-server per test, from ``respload.testing`` (the servers
the package gives its users), so the tests and the users' fixtures start servers one way."""

from __future__ import annotations

from collections.abc import Iterator

import pytest

from respload.testing import RedisServer, free_port, redis_server


@pytest.fixture
def redis() -> Iterator[RedisServer]:
    with redis_server() as server:
        yield server


@pytest.fixture
def redis_with_password() -> Iterator[RedisServer]:
    with redis_server(password="hunter2") as server:
        yield server


@pytest.fixture
def closed_port() -> int:
    """A loopback port nothing listens on."""
    return free_port()
