"""Briefings and session summaries, built from a session's chronicle and file records.

A briefing tells an agent (or the user coming back) where a session stands.
Three tiers, each bounded in size so it fits a prompt:

* ``micro`` (≤ 600 characters): the current task, counts of files changed and
  open threads, the latest unresolved failure. One short paragraph.
* ``standard`` (≤ 4,000): the current task, open threads, recent decisions,
  failures (unresolved first), hypotheses, what the user said, files changed,
  the latest checkpoint, and knowledge promoted from other sessions.
* ``full`` (≤ 16,000): every category of the session, the timeline in order,
  every file record, and promoted knowledge.

Sections come in a fixed order of usefulness; within one, newest first (the
timeline reads oldest first). When the budget runs out the briefing says how
much was left out.
"""

from __future__ import annotations

from collections import Counter
from dataclasses import dataclass, field
from datetime import datetime, tzinfo
from typing import TYPE_CHECKING, Any, Literal

from backend.knowledge.chronicle.models import (
    CHECKPOINT_CATEGORIES,
    MAX_LIMIT,
    Category,
    ChronicleQuery,
    Entry,
    FileOp,
)
from backend.knowledge.chronicle.text import clip

if TYPE_CHECKING:
    from backend.knowledge.chronicle.chronicle import Chronicle

Tier = Literal["micro", "standard", "full"]
BUDGET: dict[str, int] = {"micro": 600, "standard": 4_000, "full": 16_000}
# (section title, categories, items at standard, items at full)
_SECTIONS: tuple[tuple[str, tuple[Category, ...], int, int], ...] = (
    ("Open threads", (Category.OPEN_THREAD,), 5, 50),
    ("Decisions", (Category.DECISION,), 5, 50),
    ("Failures", (Category.FAILURE,), 3, 50),
    ("Hypotheses", (Category.HYPOTHESIS,), 3, 30),
    ("What the user said", (Category.USER_VOICE,), 3, 30),
    ("Insights", (Category.INSIGHT,), 0, 30),
    ("Patterns", (Category.PATTERN,), 0, 30),
    ("Checkpoints", tuple(sorted(CHECKPOINT_CATEGORIES)), 1, 20),
    ("Notes", (Category.GENERAL,), 0, 30),
)
PROMOTED_ITEMS = {"standard": 5, "full": 20}
FILE_ITEMS = {"standard": 15, "full": 200}
TIMELINE_ITEMS = 50


@dataclass
class Briefing:
    session_id: str
    tier: str
    text: str
    truncated: bool
    counts: dict[str, int]
    files: dict[str, int]
    sections: dict[str, list[dict[str, Any]]] = field(default_factory=dict)

    def as_dict(self) -> dict[str, Any]:
        return {
            "session_id": self.session_id,
            "tier": self.tier,
            "text": self.text,
            "truncated": self.truncated,
            "counts": self.counts,
            "files": self.files,
            "sections": self.sections,
        }


def when(value: datetime, tz: tzinfo) -> str:
    return value.astimezone(tz).strftime("%Y-%m-%d %H:%M")


def entry_line(entry: Entry, tz: tzinfo, *, width: int = 240) -> str:
    head = f"**{clip(entry.title, 80)}**: " if entry.title else ""
    body = clip(entry.content, width)
    if entry.title and entry.content.startswith(entry.title):
        head = ""
    mark = " (promoted)" if entry.promoted else ""
    return f"- {when(entry.created_at, tz)} · {entry.category.value}{mark} — {head}{body}"


def _latest_files(files: list[FileOp]) -> list[FileOp]:
    """One record per path: the newest, changes before reads."""
    seen: dict[str, FileOp] = {}
    for op in files:  # newest first
        seen.setdefault(op.path, op)
    ranked = sorted(seen.values(), key=lambda f: (f.operation == "read", -f.at.timestamp()))
    return ranked


class _Budget:
    def __init__(self, limit: int) -> None:
        self.limit = limit
        self.lines: list[str] = []
        self.used = 0
        self.left_out = 0

    def add(self, line: str) -> bool:
        if self.used + len(line) + 1 > self.limit:
            self.left_out += 1
            return False
        self.lines.append(line)
        self.used += len(line) + 1
        return True


async def build_briefing(chronicle: Chronicle, session_id: str, tier: Tier) -> Briefing:
    own = await chronicle.query(session_id, ChronicleQuery(current_only=True, limit=MAX_LIMIT))
    files = await chronicle.files([session_id], limit=FILE_ITEMS["full"])
    names = await chronicle.session_names([session_id])
    tz = chronicle.tz
    by_cat: dict[Category, list[Entry]] = {}
    for entry in own:
        by_cat.setdefault(entry.category, []).append(entry)
    counts = {c.value: len(v) for c, v in by_cat.items()}
    file_counts = dict(Counter(f.operation for f in _latest_files(files)))
    label = f"{names[session_id]} ({session_id[:8]})" if session_id in names else session_id
    budget = _Budget(BUDGET[tier])
    sections: dict[str, list[dict[str, Any]]] = {}
    task = by_cat.get(Category.TASK_STATE, [])
    if tier == "micro":
        budget.add(_micro(label, task, by_cat, file_counts))
        return Briefing(session_id, tier, "\n".join(budget.lines), False, counts, file_counts)

    # A session is often named "session 3": don't say "session" twice.
    title = label if label.lower().startswith("session") else f"session {label}"
    budget.add(f"## Briefing: {title}")
    if not own and not files:
        budget.add("Nothing has been recorded in this session yet: no task, decision or file.")
    if task:
        budget.add(
            f"**Current task** ({when(task[0].created_at, tz)}): {clip(task[0].content, 400)}"
        )
        sections["task_state"] = [task[0].as_dict()]
    for title, cats, at_standard, at_full in _SECTIONS:
        wanted = at_full if tier == "full" else at_standard
        items = sorted(
            (e for c in cats for e in by_cat.get(c, [])), key=lambda e: e.created_at, reverse=True
        )
        if title == "Failures":  # what still hurts comes first
            items.sort(key=lambda e: bool(e.data.get("resolved")))
        if not items or not wanted:
            continue
        budget.add(f"### {title} ({len(items)})")
        sections[title.lower().replace(" ", "_")] = [e.as_dict() for e in items[:wanted]]
        for entry in items[:wanted]:
            budget.add(entry_line(entry, tz))
        budget.left_out += max(0, len(items) - wanted)
    _add_files(budget, files, tier, tz, sections)
    if tier == "full":
        _add_timeline(budget, by_cat.get(Category.TIMELINE, []), tz, sections)
    await _add_promoted(chronicle, budget, session_id, tier, sections)
    truncated = budget.left_out > 0
    if truncated:
        more = "" if tier == "full" else "; ask for the full briefing"
        budget.lines.append(f"_… {budget.left_out} more item(s) left out{more}._")
    return Briefing(
        session_id, tier, "\n".join(budget.lines), truncated, counts, file_counts, sections
    )


def _micro(
    label: str, task: list[Entry], by_cat: dict[Category, list[Entry]], files: dict[str, int]
) -> str:
    parts = [f"Session {label}:"]
    parts.append(f"task: {clip(task[0].content, 160)}." if task else "no task recorded.")
    changed = [f"{files[k]} {k}" for k in ("modified", "created") if files.get(k)]
    if changed:
        parts.append(f"Files: {', '.join(changed)}.")
    if threads := by_cat.get(Category.OPEN_THREAD):
        parts.append(f"{len(threads)} open thread(s), latest: {clip(threads[0].content, 80)}.")
    unresolved = [f for f in by_cat.get(Category.FAILURE, []) if not f.data.get("resolved")]
    if unresolved:
        parts.append(
            f"Unresolved failure: {clip(unresolved[0].title or unresolved[0].content, 80)}."
        )
    return clip(" ".join(parts), BUDGET["micro"])


def _add_files(
    budget: _Budget,
    files: list[FileOp],
    tier: str,
    tz: tzinfo,
    sections: dict[str, list[dict[str, Any]]],
) -> None:
    latest = _latest_files(files)
    if not latest:
        return
    wanted = FILE_ITEMS[tier]
    budget.add(f"### Files ({len(latest)})")
    sections["files"] = [f.as_dict() for f in latest[:wanted]]
    for op in latest[:wanted]:
        note = f": {clip(op.summary, 120)}" if op.summary else ""
        budget.add(f"- {op.operation} `{op.path}` ({when(op.at, tz)}){note}")
    budget.left_out += max(0, len(latest) - wanted)


def _add_timeline(
    budget: _Budget, timeline: list[Entry], tz: tzinfo, sections: dict[str, list[dict[str, Any]]]
) -> None:
    if not timeline:
        return
    recent = list(reversed(timeline[:TIMELINE_ITEMS]))  # oldest first reads as a story
    budget.add(f"### Timeline ({len(timeline)})")
    sections["timeline"] = [e.as_dict() for e in recent]
    for entry in recent:
        budget.add(f"- {when(entry.created_at, tz)} {clip(entry.content, 200)}")
    budget.left_out += max(0, len(timeline) - TIMELINE_ITEMS)


async def _add_promoted(
    chronicle: Chronicle,
    budget: _Budget,
    session_id: str,
    tier: str,
    sections: dict[str, list[dict[str, Any]]],
) -> None:
    wanted = PROMOTED_ITEMS[tier]
    shared = await chronicle.query(
        session_id,
        ChronicleQuery(promoted_only=True, exclude_sessions=[session_id], limit=wanted),
    )
    if not shared:
        return
    budget.add(f"### Shared knowledge from other sessions ({len(shared)})")
    sections["promoted"] = [e.as_dict() for e in shared]
    for entry in shared:
        who = entry.session_name or entry.session_id[:8]
        budget.add(f"{entry_line(entry, chronicle.tz, width=160)} [session {who}]")


async def build_summary(chronicle: Chronicle, session_id: str, tier: Tier) -> dict[str, Any]:
    """What a session did: counts, time span, and a briefing of the chosen size."""
    briefing = await build_briefing(chronicle, session_id, "standard" if tier == "micro" else tier)
    own = await chronicle.query(session_id, ChronicleQuery(current_only=True, limit=MAX_LIMIT))
    files = await chronicle.files([session_id], limit=FILE_ITEMS["full"])
    stamps = [e.created_at for e in own] + [f.at for f in files]
    names = await chronicle.session_names([session_id])
    return {
        "session_id": session_id,
        "session_name": names.get(session_id),
        "entries": len(own),
        "counts": briefing.counts,
        "files": briefing.files,
        "first_at": min(stamps).isoformat() if stamps else None,
        "last_at": max(stamps).isoformat() if stamps else None,
        "promoted": sum(1 for e in own if e.promoted),
        "text": briefing.text,
        "truncated": briefing.truncated,
    }
