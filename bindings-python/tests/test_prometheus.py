"""The Prometheus endpoint scraped during a run with prometheus_client's own parser: the
finished phase's counters and histogram equal its report, the running one's grow."""

from __future__ import annotations

import urllib.request

from prometheus_client.parser import text_string_to_metric_families

import respload
from respload.testing import RedisServer, free_port


def scrape(port: int) -> dict[tuple[str, tuple[tuple[str, str], ...]], float]:
    with urllib.request.urlopen(f"http://127.0.0.1:{port}/metrics", timeout=5) as r:
        text = r.read().decode()
    return {
        (s.name, tuple(sorted(s.labels.items()))): s.value
        for family in text_string_to_metric_families(text)
        for s in family.samples
    }


def test_scraped_counts_match_the_report(redis: RedisServer) -> None:
    port = free_port()
    scrapes = []

    def on_progress(snapshot: respload.Snapshot) -> None:
        # The rows of seconds 1 and 2 of the 3 s phase: the run (and the endpoint) goes on.
        if snapshot.phase == "soak" and snapshot.t < 2.5:
            scrapes.append(scrape(port))

    report = respload.run(
        {
            "target": redis.target(),
            "observe": {"info": False, "prometheus": f"127.0.0.1:{port}"},
            "phases": [
                {"name": "warm", "load": {"requests": 2000}},
                {"name": "soak", "load": {"duration": "3s", "rate": 1000}},
            ],
        },
        on_progress=on_progress,
    )
    assert len(scrapes) >= 2
    warm = report.phase("warm")
    for label, stats in warm.commands.items():
        labels = (("command", label), ("measured", "true"), ("phase", "warm"))
        for s in scrapes:
            assert s[("respload_requests_total", labels)] == stats.ops
            assert s[("respload_errors_total", labels)] == stats.errors
            assert s[("respload_latency_seconds_count", labels)] == stats.ops
            inf = tuple(sorted((*labels, ("le", "+Inf"))))
            assert s[("respload_latency_seconds_bucket", inf)] == stats.ops
    soak = (("command", "GET"), ("measured", "true"), ("phase", "soak"))
    seen = [s[("respload_requests_total", soak)] for s in scrapes]
    assert seen == sorted(seen)
    assert seen[0] < seen[-1]
    assert seen[-1] <= report.phase("soak").commands["GET"].ops
