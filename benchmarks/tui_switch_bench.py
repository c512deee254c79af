"""Benchmark: session switching in the Sylk TUI.

Switching: a temporary archive of 200 sessions x 500 messages; a headless app
(``run_test``, 120x40) is driven with real key presses. The latency of one
switch runs from just before the key is posted to the first frame composed
after the transcript widget has painted a line while holding the new
session's newest message (``App._display`` of that frame). The engine's own
switch (a committed SQLite write) is not on that path: it finishes before the
next key is pressed. Three kinds: "next" (alt+down through sessions never
shown; the app reads one ahead), "cold" (Enter in the list on a session
neither shown nor read ahead) and "warm" (back and forth between two sessions
just shown).

Start-up (spawn to first frame and to the sessions on screen, against a minimal
Textual app) is ``benchmarks/startup_bench.py``'s.

With ``--tool-calls N`` each agent reply carries N tool blocks (a folded read, an
edit with a 30-line diff, a command with a 20-line output tail, in turn).

Usage: python benchmarks/tui_switch_bench.py [--sessions 200] [--messages 500]
       [--switches 40] [--tool-calls 0]. Prints one JSON object.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import random
import statistics
import sys
import tempfile
import time
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

import machine_info  # benchmarks/machine_info.py, beside this script

ROOT = Path(__file__).resolve().parents[1]
if str(ROOT) not in sys.path:
    sys.path.insert(0, str(ROOT))

PROVIDER_ENV = ("ANTHROPIC_API_KEY", "OPENAI_API_KEY", "OPENAI_BASE_URL", "SYLK_PROVIDER")
SIZE = (120, 40)
WORDS = [
    "the",
    "session",
    "agent",
    "engine",
    "archive",
    "test",
    "flaky",
    "refactor",
    "module",
    "function",
    "returns",
    "value",
    "error",
    "retry",
    "patch",
    "branch",
    "commit",
    "review",
    "inspector",
    "tester",
    "plan",
    "step",
    "file",
    "path",
    "config",
    "cache",
    "index",
    "query",
    "result",
    "because",
    "when",
    "then",
    "which",
    "while",
]


def _sentence(rng: random.Random, low: int, high: int) -> str:
    words = [rng.choice(WORDS) for _ in range(rng.randint(low, high))]
    return " ".join(words).capitalize() + "."


def _actions(rng: random.Random, count: int, text: str) -> list[dict[str, Any]]:
    """``count`` tool calls as an agent turn stores them: a read (folded), an edit with
    a 30-line diff and a command with a 20-line output tail (unfolded), in turn."""
    made: list[dict[str, Any]] = []
    for n in range(count):
        path = f"src/{rng.choice(WORDS)}_{n}.py"
        base = {"id": f"call_{n}", "tool": "execute", "status": "ok", "at": len(text) // 2}
        if n % 3 == 0:
            made.append({**base, "op": "engineer.file.read", "title": path, "kind": "other",
                         "summary": "120 lines"})  # fmt: skip
        elif n % 3 == 1:
            hunk = [f"-{_sentence(rng, 3, 8)}\n+{_sentence(rng, 3, 8)}" for _ in range(14)]
            diff = f"--- a/{path}\n+++ b/{path}\n@@ -1,14 +1,14 @@\n" + "\n".join(hunk)
            made.append({**base, "op": "engineer.file.edit", "title": path, "kind": "edit",
                         "diff": diff, "summary": "1 replacement(s)"})  # fmt: skip
        else:
            output = "\n".join(_sentence(rng, 4, 12) for _ in range(20))
            made.append({**base, "op": "engineer.shell.run", "title": "pytest -q",
                         "kind": "command", "exit_code": 1, "output": output,
                         "duration_ms": 2400.0})  # fmt: skip
    return made


def _payload(rng: random.Random, kind: str, tool_calls: int = 0) -> dict[str, Any]:
    if kind == "user":
        return {"text": " ".join(_sentence(rng, 4, 18) for _ in range(rng.randint(1, 3)))}
    if kind == "agent":
        paragraphs = [
            " ".join(_sentence(rng, 6, 20) for _ in range(rng.randint(1, 4)))
            for _ in range(rng.randint(1, 3))
        ]
        text = "\n\n".join(paragraphs)
        if tool_calls:
            return {"text": text, "actions": _actions(rng, tool_calls, text)}
        return {"text": text}
    if rng.random() < 0.2:
        rows = [f"  {n:>2}  {rng.getrandbits(32):08x}  suspended  bench" for n in range(8)]
        return {"text": "\n".join(rows), "preformatted": True}
    return {"text": _sentence(rng, 8, 30)}


async def build_archive(
    data_dir: Path, workspace: Path, sessions: int, messages: int, tool_calls: int = 0
) -> None:
    from backend.engine import Engine, EngineConfig
    from backend.engine.build import build
    from backend.messages import Message, MessageType

    rng = random.Random(1729)
    parts = build(EngineConfig(data_dir=data_dir, workspace=workspace))
    engine = Engine.from_parts(parts)
    try:
        made = [
            await engine.create_session(f"bench {n:03d}", activate=False)
            for n in range(1, sessions + 1)
        ]
        start = datetime.now(UTC) - timedelta(days=3)
        kinds = {"user": MessageType.USER_INPUT, "agent": MessageType.AGENT_REPLY}
        for session in made:
            batch = []
            for n in range(messages):
                kind = ("user", "agent", "notice")[n % 3]
                batch.append(
                    Message[dict[str, Any]](
                        session_id=session.id,
                        source={"user": "user", "agent": "architect"}.get(kind, "sylk"),
                        type=kinds.get(kind, MessageType.SYSTEM_NOTICE),
                        payload=_payload(rng, kind, tool_calls),
                        timestamp=start + timedelta(minutes=n * 8),
                    )
                )
            await asyncio.to_thread(parts.archive.append_messages, batch)
        await engine.switch_session(made[0].id)
    finally:
        await engine.aclose()


def _summary(samples: list[float]) -> dict[str, Any]:
    ordered = sorted(samples)
    p95 = ordered[min(len(ordered) - 1, round(0.95 * (len(ordered) - 1)))]
    return {
        "n": len(ordered),
        "p50": round(statistics.median(ordered), 2),
        "p95": round(p95, 2),
        "min": round(ordered[0], 2),
        "max": round(ordered[-1], 2),
    }


async def _settle(pilot: Any) -> None:
    app = pilot.app
    for _ in range(100):
        await pilot.pause()
        if all(worker.is_finished for worker in app.workers):
            await pilot.pause()
            return
        await app.workers.wait_for_complete()
    raise RuntimeError("workers never settled")


class SwitchProbe:
    """Notes when the transcript paints the target's newest message, and the frame after."""

    def __init__(self, newest: dict[str, str]) -> None:
        self.newest = newest
        self.target: str | None = None
        self.painted = False
        self.rendered_at: float | None = None

    def reset(self, target: str) -> None:
        self.target, self.painted, self.rendered_at = target, False, None

    def on_paint(self, session_id: str | None, last_id: str | None) -> None:
        if self.target is not None and session_id == self.target:
            self.painted = self.painted or last_id == self.newest[self.target]

    def on_frame(self) -> None:
        if self.painted and self.rendered_at is None:
            self.rendered_at = time.perf_counter()


def _instrument(app: Any, probe: SwitchProbe) -> None:
    from widgets.transcript import Transcript

    plain_render_line = Transcript.render_line

    def render_line(self: Transcript, y: int) -> Any:
        shown = self.messages
        probe.on_paint(self.session_id, shown[-1].id if shown else None)
        return plain_render_line(self, y)

    Transcript.render_line = render_line  # type: ignore[method-assign]
    plain_display = app._display

    def display(screen: Any, renderable: Any) -> None:
        plain_display(screen, renderable)
        if renderable is not None:
            probe.on_frame()

    app._display = display


async def measure_switching(data_dir: Path, workspace: Path, switches: int) -> dict[str, Any]:
    from backend.engine import Engine, EngineConfig
    from sylk_tui.app import SylkApp
    from widgets.session_list import SessionList

    engine = Engine(EngineConfig(data_dir=data_dir, workspace=workspace))
    order = [s.id for s in engine.list_sessions()]
    newest = {sid: (await engine.transcript(sid, limit=1))[-1].id for sid in order}
    loads = []
    for sid in order[-30:]:
        started = time.perf_counter()
        await engine.transcript(sid, limit=200)
        loads.append((time.perf_counter() - started) * 1000)

    app = SylkApp(engine)
    probe = SwitchProbe(newest)
    samples: dict[str, list[float]] = {"next": [], "cold": [], "warm": []}
    async with app.run_test(size=SIZE) as pilot:
        _instrument(app, probe)
        await _settle(pilot)

        async def switch(kind: str, key: str, target: str) -> None:
            probe.reset(target)
            started = time.perf_counter()
            await pilot.press(key)
            while probe.rendered_at is None:
                if time.perf_counter() > started + 10:
                    raise RuntimeError(f"switch to {target} never rendered")
                await asyncio.sleep(0.0005)
            samples[kind].append((probe.rendered_at - started) * 1000)
            await _settle(pilot)
            active = engine.active_session()
            assert active is not None and active.id == target, (kind, key)

        def neighbour(step: int) -> str:
            return order[(order.index(app.state.viewed_id or order[0]) + step) % len(order)]

        # next: alt+down through sessions never shown (the app reads one ahead).
        for _ in range(switches):
            await switch("next", "alt+down", neighbour(1))
        # cold: from the end of the list, 3 rows up at a time, press Enter: each
        # lands on a session neither shown before nor read ahead.
        session_list = app.screen.query_one(SessionList)
        session_list.focus()
        await pilot.press("end")
        for _ in range(switches):
            await pilot.press("up", "up", "up")
            await switch("cold", "enter", session_list.sessions[session_list.cursor].id)
        # warm: back and forth between two sessions just shown.
        app.screen.query_one("#composer").focus()
        await pilot.pause()
        for n in range(switches):
            key, step = ("alt+up", -1) if n % 2 == 0 else ("alt+down", 1)
            await switch("warm", key, neighbour(step))
        await pilot.press("ctrl+q")
    return {
        "switch_next_ms": _summary(samples["next"]),
        "switch_cold_ms": _summary(samples["cold"]),
        "switch_warm_ms": _summary(samples["warm"]),
        "archive_read_200_messages_ms": _summary(loads),
    }


def machine() -> dict[str, Any]:
    import textual

    return machine_info.machine(textual=textual.__version__)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--sessions", type=int, default=200, help="sessions in the archive")
    parser.add_argument("--messages", type=int, default=500, help="messages per session")
    parser.add_argument("--switches", type=int, default=40, help="switches of each kind")
    parser.add_argument(
        "--tool-calls", type=int, default=0, help="tool blocks in each agent reply (0: none)"
    )
    args = parser.parse_args()
    if args.sessions < 4 * args.switches + 2:
        parser.error("need --sessions >= 4 * --switches + 2 (cold jumps must not meet)")
    for name in PROVIDER_ENV:
        os.environ.pop(name, None)
    from sylk_tui.app import TRANSCRIPT_LIMIT

    with tempfile.TemporaryDirectory(prefix="sylk-tui-bench-") as tmp:
        data_dir, workspace = Path(tmp, "data"), Path(tmp, "workspace")
        workspace.mkdir()
        started = time.perf_counter()
        asyncio.run(
            build_archive(data_dir, workspace, args.sessions, args.messages, args.tool_calls)
        )
        build_s = time.perf_counter() - started
        switching = asyncio.run(measure_switching(data_dir, workspace, args.switches))
    print(
        json.dumps(
            {
                "benchmark": "tui_switch",
                "machine": machine(),
                "data": {
                    "sessions": args.sessions,
                    "messages_per_session": args.messages,
                    "tool_calls_per_reply": args.tool_calls,
                    "transcript_limit": TRANSCRIPT_LIMIT,
                    "terminal": list(SIZE),
                    "build_seconds": round(build_s, 1),
                },
                **switching,
            },
            indent=2,
        )
    )


if __name__ == "__main__":
    main()
