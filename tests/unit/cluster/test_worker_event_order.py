"""A worker's events reach the session in the order the worker sent them, whatever order
the queue actor ran its puts in: the worker's name first, then each notice naming it."""

from __future__ import annotations

from types import SimpleNamespace
from typing import Any

from backend.cluster.ray_pipelines import RayPipelines
from backend.config.orchestration import OrchestrationSettings
from backend.events import EngineNotice


def test_events_that_arrive_out_of_order_are_published_in_the_order_sent() -> None:
    published: list[Any] = []
    side = SimpleNamespace(events=SimpleNamespace(publish=published.append), ask=None)
    pipelines = RayPipelines(side, OrchestrationSettings(backend="ray"))
    deliver = pipelines._republish("run-1", "s1", "p1", "e1")

    deliver(1, "notice", ("Plan p1, task e1: running (loop 1)", "info", True))
    assert published == []  # held: the worker's name has not come yet
    deliver(2, "notice", ("Plan p1, task e1: completed (loop 1)", "info", True))
    deliver(0, "worker", {"worker": "2e754c790256abcdef", "pid": 2051})

    said = [e.text for e in published if isinstance(e, EngineNotice)]
    assert said == [
        "Plan p1, task e1: on ray worker 2e754c790256 (pid 2051)",
        "Plan p1, task e1: running (loop 1) on ray worker 2e754c790256",
        "Plan p1, task e1: completed (loop 1) on ray worker 2e754c790256",
    ]
