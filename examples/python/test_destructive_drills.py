"""The replay runners refuse a drill that would stop a server on another machine for good.

    pytest examples/python/test_destructive_drills.py

managed-cache-guide's failover phase with ``failover_mode = "kill"`` shuts its primary down
(``SHUTDOWN NOSAVE``). Against a server that is not on this machine the runner refuses before
any traffic unless ``allow_destructive`` is given. The remote host here is ``cache.invalid``
(a name that never resolves, RFC 6761): were the refusal to fail, nothing could be reached.
"""

from __future__ import annotations

import pytest

import respload
from replays import DestructiveDrillError, run_scenario, spec_path
from replays.common import destructive_drills, is_loopback

REMOTE = "redis://cache.invalid:10000"


def endpoints(url: str, mode: str) -> dict[str, object]:
    """managed-cache-guide's variables with every endpoint at ``url``."""
    return {
        "url": url,
        "tls_url": url.replace("redis://", "rediss://"),
        "cluster_url": url,
        "enterprise_url": url,
        "failover_mode": mode,
    }


def guide(url: str, mode: str) -> respload.Workload:
    return respload.Workload.from_file(
        spec_path("managed-cache-guide"), scale="ci", vars=endpoints(url, mode)
    )


def test_a_kill_failover_on_another_machine_is_refused_before_any_traffic() -> None:
    with pytest.raises(DestructiveDrillError) as refused:
        run_scenario("managed-cache-guide", variables=endpoints(REMOTE, "kill"))
    message = str(refused.value)
    assert "refusing to stop a server that is not on this machine" in message, message
    assert "phase failover: failover kill on redis://cache.invalid:10000" in message, message
    assert "--allow-destructive" in message, message


def test_only_a_kill_on_another_machine_counts_as_destructive() -> None:
    assert destructive_drills(guide(REMOTE, "kill")) == [
        "phase failover: failover kill on redis://cache.invalid:10000"
    ]
    # The coordinated failover stops no server; this machine's own servers may be stopped.
    assert destructive_drills(guide(REMOTE, "cluster-failover")) == []
    assert destructive_drills(guide("redis://127.0.0.1:10000", "kill")) == []
    assert destructive_drills(guide("redis://[::1]:10000", "kill")) == []


@pytest.mark.parametrize(
    ("url", "here"),
    [
        ("redis://127.0.0.1:6379", True),
        ("redis://127.8.9.10:6379", True),
        ("redis://localhost:6379", True),
        ("redis://[::1]:6379", True),
        ("rediss://:secret@127.0.0.1:6380", True),
        ("redis://10.0.0.1:6379", False),
        ("redis://cache.invalid:6379", False),
        ("redis://[2001:db8::1]:6379", False),
        ("redis://localhost.example.com:6379", False),
    ],
)
def test_this_machine_is_a_loopback_address_or_localhost(url: str, here: bool) -> None:
    assert is_loopback(url) is here
