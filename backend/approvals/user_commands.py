"""What ``/approval``, ``/network`` and ``/status`` say about a session's approvals.

``/approval`` alone shows the mode and where it comes from; ``/approval MODE`` sets
the session's mode (kept with the session). ``/network`` shows the switch;
``/network on|off`` sets it. Where no sandbox confines commands, each of these says
so: every command then needs approval, whatever the mode.
"""

from __future__ import annotations

from backend.approvals.gate import ApprovalGate
from backend.config.approvals import MODE_NAMES, ApprovalMode
from backend.errors import CommandError

MODE_MEANING = {
    ApprovalMode.READ_ONLY: "edits and commands are refused",
    ApprovalMode.ASK: "edits and commands ask first",
    ApprovalMode.AUTO_EDIT: "edits inside the workspace go ahead, commands ask",
    ApprovalMode.AUTO: "edits and sandboxed commands go ahead",
}
APPROVAL_USAGE = "/approval [" + "|".join(MODE_NAMES) + "]"
NETWORK_USAGE = "/network [on|off]"
UNCONFINED_LINE = "commands run unconfined: every command needs approval"


def parse_mode(text: str) -> ApprovalMode:
    try:
        return ApprovalMode(text.strip().lower())
    except ValueError:
        raise CommandError(
            f"unknown approval mode {text!r}", help_hint=f"modes: {', '.join(MODE_NAMES)}"
        ) from None


class ApprovalCommands:
    def __init__(self, gate: ApprovalGate) -> None:
        self.gate = gate
        self.book = gate.book

    def _source(self, session_id: str) -> str:
        if self.book.run_mode is not None:
            return "for this run (--approval)"
        if self.book.of(session_id).mode is not None:
            return "set for this session"
        return "the default ([approvals] mode)"

    def mode_line(self, session_id: str) -> str:
        mode = self.book.mode(session_id)
        line = f"approval mode {mode.value} ({self._source(session_id)}): {MODE_MEANING[mode]}"
        if self.book.assume_yes:
            line += "; --yes approves every question"
        return line

    def network_line(self, session_id: str) -> str:
        state = "on" if self.book.network(session_id) else "off"
        return f"network for commands: {state}"

    def status_lines(self, session_id: str) -> list[str]:
        """The Approvals section of /status."""
        lines = [f"  {self.mode_line(session_id)}", f"  {self.network_line(session_id)}"]
        if not self.gate.sandboxed():
            lines.append(f"  {UNCONFINED_LINE}")
        elif self.gate.sandbox_words():
            lines.append(f"  sandbox: {self.gate.sandbox_words()}")
        mine = self.book.of(session_id)
        kept = [*mine.allow, *(f"edits to {path}" for path in mine.files)]
        if kept:
            lines.append(f"  allowed for this session: {', '.join(kept)}")
        settings = self.book.settings
        if settings.allow or settings.deny:
            allow, deny = ", ".join(settings.allow) or "-", ", ".join(settings.deny) or "-"
            lines.append(f"  config rules: allow {allow} · deny {deny}")
        return lines

    async def approval(self, session_id: str, mode: str | None) -> str:
        if mode is None:
            return "\n".join(line.strip() for line in self.status_lines(session_id))
        chosen = parse_mode(mode)
        await self.book.set_mode(session_id, chosen)
        answer = f"approval mode for this session: {chosen.value} ({MODE_MEANING[chosen]})"
        if self.book.run_mode is not None and self.book.run_mode is not chosen:
            answer += f"; this run keeps {self.book.run_mode.value} (--approval)"
        if chosen is ApprovalMode.AUTO and not self.gate.sandboxed():
            answer += f"; {UNCONFINED_LINE}"
        return answer

    async def network(self, session_id: str, state: str | None) -> str:
        if state is None:
            return self.network_line(session_id)
        word = state.strip().lower()
        if word not in ("on", "off"):
            raise CommandError(f"/network takes on or off, not {state!r}", help_hint=NETWORK_USAGE)
        await self.book.set_network(session_id, word == "on")
        answer = f"network for this session's commands: {word}"
        if word == "on" and not self.gate.sandboxed():
            answer += " (no sandbox here: commands reach the network either way)"
        return answer


__all__ = [
    "APPROVAL_USAGE",
    "MODE_MEANING",
    "NETWORK_USAGE",
    "UNCONFINED_LINE",
    "ApprovalCommands",
    "parse_mode",
]
