"""What a session did, in numbers: the model of ``/session stats`` and its text.

The numbers come from the archive (``backend.archive.session_stats``, one query per
table) and the session itself (its files, its ``dags`` record). Active time is the
time between the session's messages, a gap longer than :data:`IDLE_GAP_S` counting as
that much at most: time the user was away is not time the session worked.
"""

from __future__ import annotations

from collections.abc import Iterable
from datetime import datetime

from pydantic import BaseModel, ConfigDict, Field

IDLE_GAP_S = 300.0


class SessionStats(BaseModel):
    model_config = ConfigDict(extra="forbid")

    session_id: str
    name: str
    state: str
    turns: int = 0
    messages: int = 0
    input_tokens: int = 0
    output_tokens: int = 0
    cost_usd: float | None = None  # None: no call was priced
    tool_calls: int = 0
    files_changed: int = 0
    dags: dict[str, int] = Field(default_factory=dict)  # outcome -> how many
    active_s: float = 0.0
    failure: str | None = None

    @property
    def tokens(self) -> int:
        return self.input_tokens + self.output_tokens


def active_seconds(times: Iterable[datetime], gap_s: float = IDLE_GAP_S) -> float:
    """Seconds between consecutive moments, each gap counted at most ``gap_s``."""
    total, last = 0.0, None
    for at in sorted(times):
        if last is not None:
            total += min((at - last).total_seconds(), gap_s)
        last = at
    return total


def _duration(seconds: float) -> str:
    minutes, secs = divmod(int(seconds), 60)
    hours, minutes = divmod(minutes, 60)
    return f"{hours}h{minutes:02d}m" if hours else f"{minutes}m{secs:02d}s"


def stats_text(stats: SessionStats) -> str:
    """``/session stats``: one line per figure."""
    cost = f"${stats.cost_usd:.4f}" if stats.cost_usd is not None else "not priced"
    dags = ", ".join(f"{n} {outcome}" for outcome, n in sorted(stats.dags.items())) or "none"
    lines = [
        f"Session {stats.name!r} ({stats.session_id[:8]}), {stats.state}",
        f"  turns        {stats.turns}",
        f"  messages     {stats.messages}",
        f"  tokens       {stats.tokens} ({stats.input_tokens} in, {stats.output_tokens} out)",
        f"  cost         {cost}",
        f"  tool calls   {stats.tool_calls}",
        f"  files        {stats.files_changed} changed",
        f"  DAGs         {dags}",
        f"  active time  {_duration(stats.active_s)}",
    ]
    if stats.failure:
        lines.append(f"  failed       {stats.failure}")
    return "\n".join(lines)
