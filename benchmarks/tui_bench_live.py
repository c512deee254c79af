"""In-process figures for ``tui_bench.py``: the app headless (``run_test``, 120x40) on a
real engine and a real SQLite archive, driven by real key presses and engine events.

- switching: keypress to the first frame composed after the transcript painted the
  target's newest message (``tui_switch_bench.SwitchProbe``), ``alt+down`` through
  sessions; RSS before and after, and the full (generation 2) garbage collections that
  ran meanwhile with their durations.
- streaming: 20 sessions' answers streamed as ``text_delta`` steps at a total rate of
  lines per second, the app showing one of them; the time Textual spends on each frame
  (``Screen._on_timer_update``, layout, paint and write) and how late a 10 ms timer on
  the event loop fires (what a keypress would wait).
- memory: RSS after a session's transcript grows by N lines (committed messages
  published as the engine publishes them), against the RSS before.
"""

from __future__ import annotations

import asyncio
import gc
import os
import statistics
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

from tui_switch_bench import SIZE, SwitchProbe, _instrument, _settle, _summary

PAGE = os.sysconf("SC_PAGE_SIZE")


def rss_mib() -> float:
    return int(Path("/proc/self/statm").read_text().split()[1]) * PAGE / 2**20


class FullCollections:
    """Generation-2 collections while it is installed, and how long each took (ms)."""

    def __init__(self) -> None:
        self.durations: list[float] = []
        self._started = 0.0

    def __call__(self, phase: str, info: dict[str, Any]) -> None:
        if info.get("generation") != 2:
            return
        if phase == "start":
            self._started = time.perf_counter()
        else:
            self.durations.append((time.perf_counter() - self._started) * 1000)

    def __enter__(self) -> FullCollections:
        gc.callbacks.append(self)
        return self

    def __exit__(self, *_: object) -> None:
        gc.callbacks.remove(self)


async def _heap_settled(pilot: Any, within_s: float = 5.0) -> None:
    """Wait for the app to freeze its start-up heap (a tree that does not: ``within_s``)."""
    until = time.perf_counter() + within_s
    while not gc.get_freeze_count() and time.perf_counter() < until:  # noqa: ASYNC110
        await asyncio.sleep(0.05)  # gc offers nothing to wait on
    await pilot.pause()


async def measure_switching(data_dir: Path, workspace: Path, switches: int) -> dict[str, Any]:
    from backend.engine import Engine, EngineConfig
    from sylk_tui.app import SylkApp

    engine = Engine(EngineConfig(data_dir=data_dir, workspace=workspace))
    order = [s.id for s in engine.list_sessions()]
    newest = {sid: (await engine.transcript(sid, limit=1))[-1].id for sid in order}
    await engine.aclose()
    # As `sylk` starts it: the app builds its engine after the first frame.
    app = SylkApp(lambda: Engine(EngineConfig(data_dir=data_dir, workspace=workspace)))
    probe = SwitchProbe(newest)
    samples: list[float] = []
    async with app.run_test(size=SIZE) as pilot:
        _instrument(app, probe)
        await _settle(pilot)
        await _heap_settled(pilot)
        frozen = gc.get_freeze_count()
        rss_start = rss_mib()
        with FullCollections() as collections:
            for _ in range(switches):
                current = app.state.viewed_id or order[0]
                target = order[(order.index(current) + 1) % len(order)]
                probe.reset(target)
                started = time.perf_counter()
                await pilot.press("alt+down")
                while probe.rendered_at is None:
                    if time.perf_counter() > started + 10:
                        raise RuntimeError(f"switch to {target} never rendered")
                    await asyncio.sleep(0.0005)
                samples.append((probe.rendered_at - started) * 1000)
                await _settle(pilot)
        rss_end = rss_mib()
        await pilot.press("ctrl+q")
    return {
        "switch_ms": _summary(samples),
        "rss_start_mib": round(rss_start, 1),
        "rss_end_mib": round(rss_end, 1),
        "rss_ratio": round(rss_end / rss_start, 3),
        "full_collections": len(collections.durations),
        "full_collection_ms_max": round(max(collections.durations, default=0.0), 1),
        "frozen_at_start": frozen,
    }


class FrameTimer:
    """Times every screen update (layout, paint, write) while installed."""

    def __init__(self) -> None:
        self.frames: list[float] = []

    def install(self) -> Callable[[], None]:
        from textual.screen import Screen

        plain = Screen._on_timer_update
        frames = self.frames

        def timed(screen: Screen[Any]) -> None:
            started = time.perf_counter()
            plain(screen)
            frames.append((time.perf_counter() - started) * 1000)

        Screen._on_timer_update = timed  # type: ignore[method-assign,assignment]

        def uninstall() -> None:
            Screen._on_timer_update = plain  # type: ignore[method-assign]

        return uninstall


async def _loop_lag(stop: asyncio.Event, lags: list[float], every_s: float = 0.01) -> None:
    while not stop.is_set():
        started = time.perf_counter()
        await asyncio.sleep(every_s)
        lags.append((time.perf_counter() - started - every_s) * 1000)


def _step(session_id: str, turn: str, step: int, kind: str, text: str = "") -> Any:
    from backend.events import AgentStep, AgentStepEvent

    data = {"text": text} if text else {}
    body = AgentStep(
        turn_id=turn, session_id=session_id, role="engineer", step=step, kind=kind, data=data
    )
    return AgentStepEvent(session_id=session_id, step=body)


async def measure_streaming(
    data_dir: Path, workspace: Path, sessions: int, lines_per_s: int, seconds: float
) -> dict[str, Any]:
    from backend.engine import Engine, EngineConfig
    from sylk_tui.app import SylkApp

    engine = Engine(EngineConfig(data_dir=data_dir, workspace=workspace))
    streams = [
        (await engine.create_session(f"stream {n}", activate=n == 0)).id for n in range(sessions)
    ]
    timer, stop = FrameTimer(), asyncio.Event()
    lags: list[float] = []
    uninstall = timer.install()  # before the screen binds its update timer
    app = SylkApp(engine)
    async with app.run_test(size=SIZE) as pilot:
        await _settle(pilot)
        for sid in streams:
            engine.events.publish(_step(sid, f"turn-{sid}", 0, "model_call"))
        await pilot.pause()
        timer.frames.clear()
        lagging = asyncio.create_task(_loop_lag(stop, lags))
        sent, started = 0, time.perf_counter()
        try:
            while (elapsed := time.perf_counter() - started) < seconds:
                due = int(elapsed * lines_per_s)
                while sent < due:
                    sid = streams[sent % sessions]
                    line = f"line {sent}: the tester reran the flaky module and it passed\n"
                    engine.events.publish(_step(sid, f"turn-{sid}", 1, "text_delta", line))
                    sent += 1
                await asyncio.sleep(0.002)
        finally:
            stop.set()
            await lagging
            uninstall()
        elapsed = time.perf_counter() - started
        await pilot.press("ctrl+q")
    return {
        "sessions": sessions,
        "lines_per_s_asked": lines_per_s,
        "lines_per_s_sent": round(sent / elapsed, 1),
        "frames_per_s": round(len(timer.frames) / elapsed, 1),
        "frame_ms": _summary(timer.frames) if timer.frames else {},
        "loop_lag_ms": _summary(lags) if lags else {},
    }


async def measure_memory(data_dir: Path, workspace: Path, lines: int) -> dict[str, Any]:
    from backend.engine import Engine, EngineConfig
    from backend.events import MessageAppended
    from backend.messages import Message, MessageType
    from sylk_tui.app import SylkApp

    engine = Engine(EngineConfig(data_dir=data_dir, workspace=workspace))
    session = await engine.create_session("memory", activate=True)
    app = SylkApp(engine)
    per_message = 10
    async with app.run_test(size=SIZE) as pilot:
        await _settle(pilot)
        gc.collect()
        before = rss_mib()
        for n in range(lines // per_message):
            said = (
                f"{n}.{k} the archive holds every line the agent wrote" for k in range(per_message)
            )
            text = "\n".join(said)
            message = Message[dict[str, Any]](
                session_id=session.id,
                source="architect",
                type=MessageType.AGENT_REPLY,
                payload={"text": text},
            )
            engine.events.publish(MessageAppended(session_id=session.id, message=message))
            if n % 200 == 0:
                await pilot.pause()
        await _settle(pilot)
        gc.collect()
        after = rss_mib()
        await pilot.press("ctrl+q")
    return {
        "lines": lines,
        "rss_before_mib": round(before, 1),
        "rss_after_mib": round(after, 1),
        "rss_growth_mib": round(after - before, 1),
        "ratio": round(after / before, 3),
    }


def median(values: list[float]) -> float:
    return round(statistics.median(values) * 1000, 1)
