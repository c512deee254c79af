"""Message-flow log: bounded records, per-kind and per-tier latency percentiles."""

from __future__ import annotations

import pytest

from backend.bus.flow_log import FlowKind, FlowLog, LatencyRing, percentile
from tests.support.clocks import FakeClock
from tests.unit.bus.bus_support import msg


def test_route_stats_per_tier() -> None:
    log = FlowLog()
    for us in range(1, 101):
        log.record_route("dsl", float(us))
    log.record_route("model", 900_000.0)
    stats = log.snapshot().routes
    assert stats["dsl"].count == 100 and stats["dsl"].p50_us == 50 and stats["dsl"].p99_us == 99
    assert stats["model"].count == 1 and stats["model"].p99_us == 900_000


def test_memory_is_bounded_and_counts_stay_exact() -> None:
    log = FlowLog(capacity=10, sample_size=8)
    for n in range(1000):
        log.record(FlowKind.SEND, msg(), float(n))
        log.record_route("cache", float(n))
    snap = log.snapshot()
    assert snap.recorded == 1000 and snap.retained == 10 and snap.flows["send"].count == 1000
    assert snap.routes["cache"].count == 1000
    # Percentiles are over the most recent samples only.
    assert snap.routes["cache"].p50_us is not None and snap.routes["cache"].p50_us >= 992
    ring = LatencyRing(8)
    for n in range(100):
        ring.add(float(n))
    assert len(ring.values()) == 8 and ring.count == 100


def test_recent_filters_by_session_kind_and_correlation() -> None:
    log = FlowLog(clock=FakeClock())
    a, b = msg("s1", correlation_id="c1"), msg("s2")
    log.record(FlowKind.SEND, a, 1.0)
    log.record(FlowKind.DELIVER, a, 2.0)
    log.record(FlowKind.SEND, b, 3.0)
    assert [f.kind for f in log.recent("s1")] == [FlowKind.SEND, FlowKind.DELIVER]
    assert [f.session_id for f in log.recent("s2")] == ["s2"]
    assert [f.latency_us for f in log.recent(kind=FlowKind.SEND)] == [1.0, 3.0]
    assert len(log.recent(correlation_id="c1")) == 2
    assert [f.latency_us for f in log.recent(limit=1)] == [3.0]


def test_empty_stats_and_percentile_edges() -> None:
    snap = FlowLog().snapshot()
    assert snap.flows["respond"].count == 0 and snap.flows["respond"].p50_us is None
    assert percentile([5.0], 99) == 5.0
    assert percentile([1.0, 2.0], 50) == 1.0
    with pytest.raises(ValueError):
        FlowLog(capacity=0)
