"""The Archivalist's analysis ops: facts pulled out of text, and conflicting decisions.

``archivalist.analysis.extract_facts`` reads a text, chronicle entries or a range of the
session's transcript and finds, by patterns (no model, so the same input always gives the
same facts), decisions, constraints, file mentions and commands, each with where it was
found; asked to, it stores the decisions and constraints as chronicle entries.

``archivalist.concurrency.resolve_conflict`` finds decisions on one subject (the same
title) that say different things, which happens when sessions or agents decide apart. It
never picks a winner itself: without ``keep_entry_id`` it lists the conflicts; with it, it
records a resolution (a new decision naming the entries it settles and the caller's
reason), so the history keeps both the disagreement and how it ended.
"""

from __future__ import annotations

import re
from dataclasses import asdict, dataclass
from typing import Any, Literal

from backend.knowledge.chronicle.chronicle import Chronicle
from backend.knowledge.chronicle.models import Category, ChronicleQuery, Entry
from backend.skills.builtin.archivalist import ExtractFactsParams, ResolveConflictParams
from backend.skills.envelopes import ErrorCode, SkillError
from backend.skills.gateway.gateway import Gateway
from backend.skills.models import SkillContext
from backend.team.wiring import install_handler

FactKind = Literal["decision", "constraint", "file", "command"]
MAX_FACTS = 200
MAX_TEXT = 200_000
_DECISION = re.compile(
    r"\b(decided|decide to|decision:|we chose|chose to|we will use|we'll use|going with|"
    r"settled on|agreed to|agreed on|opted for|instead of)\b",
    re.IGNORECASE,
)
_CONSTRAINT = re.compile(
    r"\b(must not|must|never|always|should not|shouldn't|cannot|can't|may not|"
    r"is required|are required|no more than|at most|at least|only if)\b",
    re.IGNORECASE,
)
_FILE = re.compile(
    r"(?<![\w/.-])((?:[\w-]+/)*[\w-]+\.(?:py|pyi|ts|tsx|js|jsx|go|rs|java|kt|rb|c|h|cpp|hpp|"
    r"md|rst|toml|json|ya?ml|ini|cfg|txt|sh|sql|lock|html|css))(?![\w])"
)
_COMMAND = re.compile(r"(?:^\s*\$\s+(.+)$|`((?:[\w./-]+)(?: [^`\n]+)?)`)", re.MULTILINE)
_COMMANDS = frozenset({
    "pytest", "python", "python3", "pip", "uv", "ruff", "mypy", "make", "npm", "npx", "yarn",
    "pnpm", "node", "go", "cargo", "git", "docker", "sylk", "tox", "nox", "poetry", "just",
    "eslint", "tsc", "jest", "vitest", "bash", "sh",
})  # fmt: skip
_SENTENCE = re.compile(r"(?<=[.!?])\s+|\n+")


@dataclass(frozen=True)
class Fact:
    kind: FactKind
    text: str
    source: str  # "text", an entry id, or "message:<index>"
    line: int


def extract_facts(text: str, source: str) -> list[Fact]:
    """Every fact in ``text``, in order of appearance; each sentence counts once per kind."""
    facts: list[Fact] = []
    seen: set[tuple[str, str]] = set()

    def add(kind: FactKind, found: str, line: int) -> None:
        found = " ".join(found.split()).strip(" -*")
        if found and (kind, found) not in seen:
            seen.add((kind, found))
            facts.append(Fact(kind, found[:400], source, line))

    for number, line in enumerate(text.splitlines(), start=1):
        for sentence in _SENTENCE.split(line):
            if _DECISION.search(sentence):
                add("decision", sentence, number)
            elif _CONSTRAINT.search(sentence):
                add("constraint", sentence, number)
        for match in _FILE.finditer(line):
            add("file", match.group(1), number)
    for match in _COMMAND.finditer(text):
        command = (match.group(1) or match.group(2) or "").strip()
        if command.split(" ", 1)[0] in _COMMANDS:
            add("command", command, text.count("\n", 0, match.start()) + 1)
    return facts


class ArchivalistAnalysis:
    """The two ops' handlers over the chronicle (and the archive behind it)."""

    def __init__(self, chronicle: Chronicle) -> None:
        self.chronicle = chronicle

    async def _sources(self, sid: str, p: ExtractFactsParams) -> list[tuple[str, str]]:
        sources: list[tuple[str, str]] = []
        if p.text:
            sources.append(("text", p.text[:MAX_TEXT]))
        for entry_id in p.entry_ids:
            entry = await self.chronicle.get(entry_id)  # EntryNotFoundError: NOT_FOUND
            if entry.session_id != sid and not entry.promoted:
                raise SkillError(ErrorCode.NOT_FOUND, f"no entry {entry_id!r} in this session")
            sources.append((entry.id, f"{entry.title or ''}\n{entry.content}"))
        if p.transcript_from is not None or p.transcript_to is not None:
            messages = await self.chronicle.archive.aload_transcript(sid)
            first = p.transcript_from or 0
            last = len(messages) - 1 if p.transcript_to is None else p.transcript_to
            for index in range(first, min(last, len(messages) - 1) + 1):
                said = messages[index].payload.get("text")
                if isinstance(said, str) and said:
                    sources.append((f"message:{index}", said[:MAX_TEXT]))
        if not sources and not (p.text or p.entry_ids):
            raise SkillError(
                ErrorCode.VALIDATION_ERROR,
                "give a text, entry_ids or a transcript range (transcript_from/transcript_to)",
                help_path="archivalist.analysis.extract_facts",
            )
        return sources

    async def extract(self, ctx: SkillContext, p: ExtractFactsParams) -> dict[str, Any]:
        sid = p.session_id or ctx.session_id
        facts: list[Fact] = []
        for source, text in await self._sources(sid, p):
            facts.extend(extract_facts(text, source))
        facts = facts[:MAX_FACTS]
        stored: list[str] = []
        if p.store:
            for fact in facts:
                if fact.kind in ("decision", "constraint"):
                    category = Category.DECISION if fact.kind == "decision" else Category.INSIGHT
                    entry = await self.chronicle.store(
                        sid, category, fact.text, title=f"{fact.kind} (extracted)",
                        agent=ctx.agent, data={"extracted_from": fact.source, "kind": fact.kind},
                    )  # fmt: skip
                    stored.append(entry.id)
        counts = {k: sum(f.kind == k for f in facts) for k in ("decision", "constraint",
                                                              "file", "command")}  # fmt: skip
        return {"facts": [asdict(f) for f in facts], "counts": counts, "stored": stored,
                "method": "patterns (deterministic; no model)"}  # fmt: skip

    async def _decisions(self, sid: str) -> list[Entry]:
        query = ChronicleQuery(categories=[Category.DECISION], limit=500)
        return await self.chronicle.query(sid, query)

    async def conflicts(self, sid: str, subject: str | None) -> dict[str, list[Entry]]:
        """Open conflicts by subject: decisions with one title and differing content."""
        decisions = await self._decisions(sid)
        settled = {i for e in decisions for i in e.data.get("resolves", [])}
        groups: dict[str, list[Entry]] = {}
        for entry in decisions:
            if entry.id in settled or not entry.title:
                continue
            key = " ".join(entry.title.lower().split())
            if subject is None or key == " ".join(subject.lower().split()):
                groups.setdefault(key, []).append(entry)
        return {
            key: sorted(group, key=lambda e: e.created_at)
            for key, group in groups.items()
            if len({" ".join(e.content.lower().split()) for e in group}) > 1
        }

    async def resolve(self, ctx: SkillContext, p: ResolveConflictParams) -> dict[str, Any]:
        sid = p.session_id or ctx.session_id
        found = await self.conflicts(sid, p.subject)
        listed = {k: [e.as_dict() for e in group] for k, group in found.items()}
        if p.keep_entry_id is None:
            return {"conflicts": listed, "count": len(found), "resolved": None,
                    "how": "call again with keep_entry_id (and a reason) to record which "
                           "decision stands"}  # fmt: skip
        group = next((g for g in found.values() if any(e.id == p.keep_entry_id for e in g)), None)
        if group is None:
            raise SkillError(
                ErrorCode.CONFLICT,
                f"{p.keep_entry_id!r} is not one of the conflicting decisions"
                + (f" on {p.subject!r}" if p.subject else ""),
                details={"reason": "not_in_conflict", "conflicts": listed},
            )
        kept = next(e for e in group if e.id == p.keep_entry_id)
        why = p.reason or "no reason given"
        entry = await self.chronicle.store(
            sid, Category.DECISION, f"{kept.content} (resolution: {why})", title=kept.title,
            agent=ctx.agent,
            data={"resolves": [e.id for e in group], "kept": kept.id, "reason": why},
        )  # fmt: skip
        return {"conflicts": listed, "count": len(found), "resolved": entry.as_dict()}


def install_archivalist_analysis(gateway: Gateway, chronicle: Chronicle) -> None:
    ops = ArchivalistAnalysis(chronicle)
    install_handler(gateway, "archivalist.analysis.extract_facts", ops.extract)
    install_handler(gateway, "archivalist.concurrency.resolve_conflict", ops.resolve)
