"""Helpers for the Pilot and snapshot tests of the Sylk app (the fixtures are in conftest)."""

from __future__ import annotations

from collections.abc import Callable
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

from textual.notifications import SeverityLevel
from textual.pilot import Pilot

from backend.archive.store import Archive
from backend.messages import Message, MessageType
from backend.sessions.models import Session, SessionState
from backend.sessions.phases import SessionPhase
from screens.main_screen import MainScreen
from sylk_tui.app import SylkApp
from tests.support.polling import until

FROZEN_NOW = datetime(2026, 3, 14, 15, 0, tzinfo=UTC)
"""The wall clock of the snapshot tests."""


async def settle(pilot: Pilot[Any]) -> None:
    """Wait until no worker runs and every message they posted is handled."""
    app = pilot.app
    for _ in range(50):
        await pilot.pause()
        if not any(worker.is_running or not worker.is_finished for worker in app.workers):
            await pilot.pause()
            return
        await app.workers.wait_for_complete()
    raise AssertionError("workers never settled")


async def wait_for(pilot: Pilot[Any], predicate: Callable[[], object], what: str) -> None:
    """Let the app run until ``predicate`` holds: startup work may not have begun yet,
    and an answer streams in real time. Each poll first lets pending messages through."""

    async def holds() -> bool:
        await pilot.pause()
        return bool(predicate())

    await until(holds, what=what)


class RecordingApp(SylkApp):
    """SylkApp that also keeps every notification it shows, for assertions."""

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        self.notices: list[tuple[str, str]] = []

    def notify(
        self,
        message: str,
        *,
        title: str = "",
        severity: SeverityLevel = "information",
        timeout: float | None = None,
        markup: bool = True,
    ) -> None:
        self.notices.append((severity, message))
        super().notify(message, title=title, severity=severity, timeout=timeout, markup=markup)


async def send_line(pilot: Pilot[Any], text: str) -> None:
    """Put ``text`` in the composer and press Enter (typing it key by key costs ~70 ms a key)."""
    composer = main_screen(pilot.app).composer  # type: ignore[arg-type]
    composer.focus()
    composer.value = text  # the cursor goes to its end
    await pilot.press("enter")
    await settle(pilot)


def main_screen(app: SylkApp) -> MainScreen:
    screen = app.screen
    assert isinstance(screen, MainScreen), f"expected the main screen, got {screen!r}"
    return screen


def transcript_texts(app: SylkApp) -> list[str]:
    return [str(m.payload.get("text", "")) for m in main_screen(app).transcript.messages]


def seed_archive(data_dir: Path, workspace: Path) -> list[Session]:
    """Four sessions and a short conversation, every timestamp fixed."""
    base = FROZEN_NOW - timedelta(hours=3)
    specs = [
        ("api-refactor", SessionState.SUSPENDED, SessionPhase.EXECUTION, timedelta(hours=2)),
        ("docs sweep", SessionState.COMPLETED, SessionPhase.COMPLETE, timedelta(days=2)),
        ("flaky tests", SessionState.ACTIVE, SessionPhase.PLANNING, timedelta(minutes=4)),
        ("release 1.2", SessionState.CREATED, SessionPhase.IDLE, timedelta(minutes=40)),
    ]
    sessions = [
        Session(
            id=f"{n:02d}" + "a" * 30,
            name=name,
            state=state,
            phase=phase,
            workspace=str(workspace),
            created_at=base + timedelta(minutes=n),
            last_active_at=FROZEN_NOW - idle,
        )
        for n, (name, state, phase, idle) in enumerate(specs, 1)
    ]
    active = sessions[2]
    lines: list[tuple[MessageType, str, dict[str, Any]]] = [
        (
            MessageType.USER_INPUT,
            "/session list",
            {"route": {"target": "session_manager", "tier": "dsl", "confidence": 1.0}},
        ),
        (
            MessageType.SYSTEM_NOTICE,
            "  1  01aaaaaa  suspended  api-refactor\n"
            "  2  02aaaaaa  completed  docs sweep\n"
            "* 3  03aaaaaa  active     flaky tests\n"
            "  4  04aaaaaa  created    release 1.2",
            {"preformatted": True},
        ),
        (
            MessageType.USER_INPUT,
            "why does test_sync fail one run in ten?",
            {
                "route": {
                    "target": "tester",
                    "tier": "pattern",
                    "intent": None,
                    "subject": "test_sync",
                    "confidence": 0.82,
                }
            },
        ),
        (
            MessageType.SYSTEM_NOTICE,
            "No language model is configured, so no agent can act on this yet. "
            "Your message is saved in this session's transcript.",
            {"offline": True},
        ),
        (
            MessageType.AGENT_REPLY,
            "The watcher debounces for 50 ms and the test asserts after 20 ms. "
            "Wait for the debounce instead of sleeping.",
            {"agent": "architect"},
        ),
        (MessageType.USER_INPUT, "/session frob", {}),
        (
            MessageType.SYSTEM_NOTICE,
            "unknown /session verb 'frob' (see /help)",
            {"error": "CommandError"},
        ),
    ]
    messages = [
        Message[dict[str, Any]](
            id=f"m{n:03d}",
            session_id=active.id,
            source={MessageType.USER_INPUT: "user", MessageType.AGENT_REPLY: "architect"}.get(
                kind, "sylk"
            ),
            type=kind,
            payload={"text": text, **extra},
            timestamp=FROZEN_NOW - timedelta(minutes=35 - 5 * n),
        )
        for n, (kind, text, extra) in enumerate(lines)
    ]
    archive = Archive(data_dir)
    try:
        archive.save_sessions(sessions)
        archive.append_messages(messages)
    finally:
        archive.close()
    return sessions
