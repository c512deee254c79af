"""The real app in tmux, driven with keys as a user drives it, read off the screen.

``python -m sylk_tui`` runs in a tmux pane of 120x40 with its own data and config
dirs and the scripted model. The user creates two sessions, asks the Architect for
a plan in the second and walks away to the first; the plan's approval waits in the
inbox (F2) and is given there (y); the plan runs, its node and the engineer's
pipeline show in the DAG view (ctrl+g, Enter); ``/export md FILE`` writes the
session's transcript. Every wait polls the screen until it shows what is expected,
with a generous hang guard; the tmux server (its own socket) is always killed.
"""

from __future__ import annotations

import json
import os
import shlex
import shutil
import subprocess
import sys
import uuid
from collections.abc import Iterator
from pathlib import Path

import pytest

from tests.support.polling import NeverHappened, until_sync

pytestmark = pytest.mark.skipif(
    shutil.which("tmux") is None, reason="tmux is not installed: the end-to-end test drives it"
)

REPO = Path(__file__).resolve().parents[2]
WIDTH, HEIGHT = 120, 40
WAIT = 20.0
"""Hang guard for one step (the whole test takes a few seconds when healthy)."""

STREAM_DELAY_S = 0.15
"""Between the scripted model's words: the Architect says ~20 before it submits the
plan, so the user has switched away before the plan's approval is asked."""

PLAN = {
    "id": "p1",
    "prompt": "add a note",
    "nodes": [{"id": "e1", "agent": "engineer", "prompt": "Say hello", "depends_on": []}],
}
SCRIPT = {
    "chunk_delay_s": STREAM_DELAY_S,
    "turns": [
        {
            "text": "I will plan it: one engineer task that says hello, nothing more than "
            "that, and nothing to read first, so the plan is short.",
            "tool_calls": [
                {
                    "name": "execute",
                    "arguments": {
                        "op": "architect.plan.create",
                        "dry_run": False,
                        "args": {"plan": PLAN},
                    },
                }
            ],
        },
        {"text": "Stored."},
        {"text": "Hello."},
    ],
}


class Terminal:
    """One tmux server (its own socket) with one 120x40 session running a command."""

    def __init__(self, name: str) -> None:
        self.socket = f"sylk-e2e-{name}"
        self.session = name

    def tmux(self, *args: str) -> str:
        done = subprocess.run(
            ["tmux", "-L", self.socket, *args], capture_output=True, text=True, check=True
        )
        return done.stdout

    def start(self, command: str, cwd: Path) -> None:
        self.tmux(
            "-f", "/dev/null", "new-session", "-d", "-s", self.session,
            "-x", str(WIDTH), "-y", str(HEIGHT), "-c", str(cwd), command,
        )  # fmt: skip

    def keys(self, *keys: str) -> None:
        """Named keys (``C-n``, ``M-2``, ``Enter``, ``F2``), as tmux spells them."""
        self.tmux("send-keys", "-t", self.session, *keys)

    def type(self, text: str) -> None:
        self.tmux("send-keys", "-t", self.session, "-l", text)

    def screen(self) -> str:
        return self.tmux("capture-pane", "-p", "-t", self.session)

    def shows(self, *texts: str) -> str:
        """Wait until the screen shows every one of ``texts``; the screen then."""
        seen = [""]

        def showing() -> bool:
            seen[0] = self.screen()
            return all(text in seen[0] for text in texts)

        try:
            until_sync(showing, timeout=WAIT, interval=0.05, what=f"{texts!r} on screen")
        except NeverHappened as error:
            raise NeverHappened(f"{error}; the screen was:\n{seen[0]}") from None
        return seen[0]

    def hides(self, text: str) -> None:
        """Wait until ``text`` is off the screen (a dialog closed): a key sent before
        that could reach the dialog, or run into its Escape (ESC 3 after ESC)."""
        until_sync(lambda: text not in self.screen(), timeout=WAIT, interval=0.05, what=text)

    def kill(self) -> None:
        """End the server and the app with it; its socket file goes too."""
        subprocess.run(["tmux", "-L", self.socket, "kill-server"], check=False, capture_output=True)
        folder = Path(os.environ.get("TMUX_TMPDIR") or "/tmp") / f"tmux-{os.getuid()}"
        (folder / self.socket).unlink(missing_ok=True)


@pytest.fixture
def terminal() -> Iterator[Terminal]:
    term = Terminal(uuid.uuid4().hex[:12])
    try:
        yield term
    finally:
        term.kill()


def _launcher(tmp_path: Path, workspace: Path) -> str:
    """The command tmux runs: the app, with its environment spelled out (a tmux server
    passes on its own environment, not the test's)."""
    script = tmp_path / "script.json"
    script.write_text(json.dumps(SCRIPT))
    env = {
        "PATH": os.environ.get("PATH", "/usr/bin:/bin"),
        "HOME": str(tmp_path / "home"),
        "TERM": "tmux-256color",
        "SYLK_DATA_DIR": str(tmp_path / "data"),
        "SYLK_CONFIG_DIR": str(tmp_path / "config"),
        "SYLK_PROVIDER": "scripted",
        "SYLK_SCRIPT": str(script),
        "SYLK_SEMANTIC": "off",
        "PYTHONPATH": str(REPO),
    }
    assigned = " ".join(f"{name}={shlex.quote(value)}" for name, value in env.items())
    # On exit the pane stays a moment with the app's last words, for a failing test.
    return f"env -i {assigned} {shlex.quote(sys.executable)} -m sylk_tui; sleep 5"


def test_two_sessions_a_plan_approved_from_the_inbox_its_pipeline_and_an_export(
    terminal: Terminal, tmp_path: Path, workspace: Path
) -> None:
    (tmp_path / "home").mkdir()
    terminal.start(_launcher(tmp_path, workspace), workspace)
    terminal.shows("1 · session 1", "Message session 1")

    for number, name in ((2, "alpha"), (3, "beta")):
        terminal.keys("C-n")
        terminal.shows("New session")
        terminal.type(name)
        terminal.keys("Enter")
        terminal.shows(f"{number} · {name}", f"Message {name}")

    # The request goes out in beta; the user goes to alpha while the Architect writes.
    terminal.type("@architect add a note")
    terminal.keys("Enter")
    terminal.shows("@architect add a note")
    terminal.keys("M-2")
    terminal.shows("2 · alpha", "1 question waits on you")

    terminal.keys("F2")
    terminal.shows("Waiting on you · 1", "beta", "Approve plan p1?")
    terminal.keys("y")
    terminal.shows("Nothing waits on you")
    terminal.keys("Escape")
    terminal.hides("Nothing waits on you")

    terminal.keys("M-3")
    terminal.shows("3 · beta", "Hello.")
    terminal.keys("C-g")
    terminal.shows("beta · Plan p1", "Layer 1", "e1  engineer")
    terminal.keys("Enter")
    # The pane follows the run live: the engineer's words, then the checks passing.
    terminal.shows("Task e1 · engineer · passed", "1. Hello.", "Inspector", "Tester")
    terminal.keys("Escape")  # the pane closes, then the view
    terminal.hides("Task e1 · engineer")
    terminal.keys("Escape")
    terminal.shows("Message beta")

    export = tmp_path / "beta.md"
    terminal.type(f"/export md {export}")
    terminal.keys("Enter")
    until_sync(export.exists, timeout=WAIT, what="the exported file")
    until_sync(lambda: "Hello." in export.read_text(), timeout=WAIT, what="the whole file")
    exported = export.read_text()
    assert "@architect add a note" in exported and "p1" in exported
    terminal.keys("C-q")
