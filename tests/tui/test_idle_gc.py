"""The app's garbage collection policy: an automatic full collection freezes what it
leaves, so the next walks only newer objects; once input is quiet a thorough sweep
collects everything (cyclic garbage that was frozen included) and freezes again;
stopping puts CPython's thresholds and callbacks back."""

from __future__ import annotations

import gc
from collections.abc import Iterator

import pytest

from sylk_tui.engine_link.idle_gc import OLD_GEN_THRESHOLD, QUIET_S, IdleCollector


class Clock:
    def __init__(self) -> None:
        self.now = 100.0

    def __call__(self) -> float:
        return self.now


class Cycle:
    def __init__(self) -> None:
        self.me = self


@pytest.fixture
def collector() -> Iterator[tuple[IdleCollector, Clock]]:
    clock = Clock()
    made = IdleCollector(clock)
    before = gc.get_threshold()
    try:
        yield made, clock
    finally:
        made.stop()
        gc.unfreeze()
        assert gc.get_threshold() == before


def test_a_full_collection_freezes_its_survivors(collector: tuple[IdleCollector, Clock]) -> None:
    made, _clock = collector
    made.start()
    assert gc.get_threshold()[2] >= OLD_GEN_THRESHOLD
    frozen = gc.get_freeze_count()
    kept = [Cycle() for _ in range(100)]
    gc.collect()  # as an automatic full collection would
    assert made.refrozen == 1
    assert gc.get_freeze_count() >= frozen + len(kept)


def test_a_quiet_moment_sweeps_frozen_cyclic_garbage(
    collector: tuple[IdleCollector, Clock],
) -> None:
    made, clock = collector
    made.start()
    garbage = [Cycle() for _ in range(50)]
    gc.collect()  # frozen while alive
    frozen = gc.get_freeze_count()
    del garbage  # cycles: reference counting cannot free them, and they are frozen
    made.input()
    clock.now += QUIET_S / 2
    assert made.check() is False  # the user is typing: nothing runs
    clock.now += QUIET_S
    assert made.check() is True
    assert made.sweeps == 1 and made.refrozen == 0
    assert gc.get_freeze_count() <= frozen - 50  # the cycles were collected
    assert made.check() is False  # nothing new since the sweep


def test_stopping_gives_back_cpythons_settings(collector: tuple[IdleCollector, Clock]) -> None:
    made, _clock = collector
    made.start()
    made.stop()
    gc.collect()
    assert made.refrozen == 0  # no callback left behind
