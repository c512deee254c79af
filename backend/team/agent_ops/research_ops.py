"""The Academic's remaining ops, from the local library and the codebase (no web, no model).

* ``academic.research.compare``: a table of criteria x options, each cell a finding with
  its sources (a fragment URI and the sentence that names the option; ``file:line`` where
  the codebase uses it).
* ``academic.source.ingest``: a markdown or text file of the workspace becomes library
  fragments (one per section), written under ``<data_dir>/library/<category>/`` and
  searchable at once. The path is confined to the workspace; binary files, files over
  the library's size cap and other suffixes are refused with typed errors.
* ``academic.design.proposal``: a structured outline for a request (context from the
  codebase through the Librarian's index, guidance from the library, options, open
  questions, sources). Written offline; drafting the prose with a model is not built.
"""

from __future__ import annotations

import asyncio
import re
from pathlib import Path
from typing import Any

from backend.agents.knowledge_desk import KnowledgeDesk
from backend.knowledge.code.evidence import Evidence
from backend.knowledge.fragments.fragment import estimate_tokens
from backend.knowledge.fragments.library import MAX_FILE_BYTES, FragmentLibrary
from backend.knowledge.fragments.models import MatchInfo
from backend.skills.builtin.academic import CompareParams, IngestParams, ProposalParams
from backend.skills.envelopes import ErrorCode, SkillError
from backend.skills.gateway.gateway import Gateway
from backend.skills.models import SkillContext
from backend.team.wiring import install_handler
from backend.workspace.files import Workspace

SUFFIXES = frozenset({".md", ".markdown", ".txt", ".rst"})
MAX_SECTIONS = 50
_HEADING = re.compile(r"^(#{1,3})\s+(.+?)\s*#*\s*$", re.MULTILINE)
_SLUG = re.compile(r"[^a-z0-9]+")
DEFAULT_CRITERIA = ("guidance in the library", "use in this codebase")


def _slug(text: str, limit: int = 40) -> str:
    return _SLUG.sub("-", text.lower()).strip("-")[:limit].strip("-") or "part"


def _sentence_with(body: str, word: str) -> str | None:
    for sentence in re.split(r"(?<=[.!?])\s+|\n+", body):
        if word.lower() in sentence.lower() and len(sentence.strip()) > 3:
            return " ".join(sentence.split())[:300]
    return None


def _code_sources(evidence: Evidence, limit: int = 5) -> list[str]:
    found = [f"{d.path}:{d.line}" for d in evidence.definitions]
    found += [f"{s.path}:{s.line}" for s in evidence.snippets]
    return list(dict.fromkeys(found))[:limit]


class AcademicResearch:
    """The three ops' handlers over the library, the code index and a folder to ingest to."""

    def __init__(self, library: FragmentLibrary, desk: KnowledgeDesk, ingest_dir: Path) -> None:
        self.library = library
        self.desk = desk
        self.ingest_dir = ingest_dir
        if ingest_dir not in library.extra_paths:
            # Ingested sources are read like the user's folders (reloaded after each ingest).
            library.extra_paths.append(ingest_dir)
            if ingest_dir.is_dir():
                library.reload()

    async def _library(self, query: str, limit: int = 5) -> list[MatchInfo]:
        answer = await asyncio.to_thread(
            self.library.query, query, mode="catalog", max_results=limit
        )
        return answer.matches

    async def _guidance(self, option: str, criterion: str) -> dict[str, Any]:
        for match in await self._library(f"{option} {criterion}"):
            body = (await asyncio.to_thread(self.library.get, match.uri)).body
            said = _sentence_with(body, option)
            if said:
                return {"finding": said, "sources": [match.uri]}
        return {"finding": "the library says nothing about it", "sources": []}

    async def _in_code(self, workspace: Path, option: str) -> dict[str, Any]:
        knowledge = await self.desk.knowledge(workspace)
        evidence = await knowledge.general(option)
        hits = [s for s in _code_sources(evidence) if s]
        if not hits:
            return {"finding": "not used in this codebase", "sources": []}
        return {"finding": f"used here ({len(evidence.files)} file(s))", "sources": hits}

    async def compare(self, ctx: SkillContext, p: CompareParams) -> dict[str, Any]:
        options = list(dict.fromkeys(o.strip() for o in p.options if o.strip()))
        if len(options) < 2:
            raise SkillError(ErrorCode.VALIDATION_ERROR, "give two or more different options")
        criteria = list(dict.fromkeys(p.criteria)) or list(DEFAULT_CRITERIA)
        rows: list[dict[str, Any]] = []
        for criterion in criteria:
            cells: dict[str, dict[str, Any]] = {}
            for option in options:
                if criterion == "use in this codebase":
                    cells[option] = await self._in_code(ctx.workspace, option)
                else:
                    cells[option] = await self._guidance(option, criterion)
            rows.append({"criterion": criterion, "cells": cells})
        head = "| criterion | " + " | ".join(options) + " |"
        lines = [head, "|" + " --- |" * (len(options) + 1)]
        for row in rows:
            shown = [
                f"{c['finding']} [{', '.join(c['sources'])}]" if c["sources"] else c["finding"]
                for c in row["cells"].values()
            ]
            lines.append(f"| {row['criterion']} | " + " | ".join(shown) + " |")
        return {"options": options, "criteria": criteria, "rows": rows,
                "table": "\n".join(lines),
                "source": "the local fragment library and this codebase's index "
                          "(no web research or model used)"}  # fmt: skip

    async def ingest(self, ctx: SkillContext, p: IngestParams) -> dict[str, Any]:
        workspace = Workspace(ctx.workspace, protected=ctx.confinement.protected)
        real = workspace.resolve(p.path)  # outside the workspace: ACCESS_DENIED
        if real.suffix.lower() not in SUFFIXES:
            raise SkillError(
                ErrorCode.VALIDATION_ERROR,
                f"{p.path!r} is not a markdown or text file ({', '.join(sorted(SUFFIXES))})",
                details={"reason": "unsupported_type"},
            )
        # BinaryFileError and FileTooLargeError are typed: the caller sees which.
        text = await asyncio.to_thread(
            workspace.read_text, p.path, limit=MAX_FILE_BYTES, strict=True
        )
        rel = workspace.relative(real)
        sections = _sections(text, fallback=real.stem)
        if not sections:
            raise SkillError(ErrorCode.VALIDATION_ERROR, f"{p.path!r} has no text to ingest")
        folder = self.ingest_dir / p.category
        written = await asyncio.to_thread(
            lambda: _write_fragments(
                folder, _slug(real.stem, 24), sections, category=p.category, tags=p.tags,
                source=rel,
            )
        )  # fmt: skip
        await asyncio.to_thread(self.library.reload)
        uris = [f"sylk://library/{p.category}/{name}" for name in written]
        missing = [u for u in uris if u not in {f.uri for f in self.library.fragments()}]
        return {"source": rel, "fragments": uris, "count": len(uris),
                "skipped": missing, "folder": str(folder)}  # fmt: skip

    async def proposal(self, ctx: SkillContext, p: ProposalParams) -> dict[str, Any]:
        knowledge = await self.desk.knowledge(ctx.workspace)
        evidence = await knowledge.general(p.topic)
        code = _code_sources(evidence, limit=8)
        matches = await self._library(p.topic, limit=5)
        out = [f"# Design proposal: {p.topic}", "", "## Request", p.topic]
        if p.constraints:
            out += ["", "## Constraints", *[f"- {c}" for c in p.constraints]]
        out += ["", "## Context in this codebase"]
        out += [f"- {s}" for s in code] or ["- nothing in the index matches the request"]
        out += ["", "## Guidance from the library"]
        out += [f"- {m.title}: {m.summary} ({m.uri})" for m in matches] or ["- none found"]
        out += ["", "## Options to weigh"]
        out += [f"- follow {m.title}" for m in matches[:3]] or ["- (none suggested)"]
        out += ["", "## Open questions",
                "- Which of the options fits the constraints above best?",
                "- What must stay compatible (APIs, data, configuration)?",
                "- How will the change be tested?"]  # fmt: skip
        sources = {"code": code, "library": [m.uri for m in matches]}
        return {"proposal": "\n".join(out), "sources": sources,
                "model": "not used: an offline outline from the library and the code"}  # fmt: skip


def _sections(text: str, *, fallback: str) -> list[tuple[str, str]]:
    """(title, body) per heading (a text before the first heading is a section too)."""
    found: list[tuple[str, str]] = []
    marks = list(_HEADING.finditer(text))
    lead = text[: marks[0].start()] if marks else text
    if lead.strip():
        found.append((fallback, lead.strip()))
    for i, mark in enumerate(marks):
        end = marks[i + 1].start() if i + 1 < len(marks) else len(text)
        body = text[mark.end() : end].strip()
        if body:
            found.append((mark.group(2).strip(), body))
    return found[:MAX_SECTIONS]


def _write_fragments(
    folder: Path, stem: str, sections: list[tuple[str, str]], *, category: str,
    tags: list[str], source: str,
) -> list[str]:  # fmt: skip
    folder.mkdir(parents=True, exist_ok=True, mode=0o700)
    names = []
    for n, (title, body) in enumerate(sections, start=1):
        name = f"{stem}-{n}-{_slug(title, 30)}"[:64].strip("-")
        words = [w for w in re.findall(r"[a-z][a-z0-9-]{2,}", title.lower())][:6]
        meta = {"id": name, "category": category, "title": title[:120],
                "tags": list(dict.fromkeys([*tags, *words])) or ["ingested"],
                "capabilities": [title[:120]], "useWhen": [f"working on {title[:100]}"],
                "estimatedTokens": estimate_tokens(body), "summary": f"from {source}"}  # fmt: skip
        import yaml  # loads with the first ingested source, not with the engine

        front = yaml.safe_dump(meta, sort_keys=False, allow_unicode=True)
        (folder / f"{name}.md").write_text(f"---\n{front}---\n# {title}\n\n{body}\n")
        names.append(name)
    return names


def install_academic_research(
    gateway: Gateway, library: FragmentLibrary, desk: KnowledgeDesk, data_dir: Path
) -> None:
    ops = AcademicResearch(library, desk, data_dir / "library")
    install_handler(gateway, "academic.research.compare", ops.compare)
    install_handler(gateway, "academic.source.ingest", ops.ingest)
    install_handler(gateway, "academic.design.proposal", ops.proposal)
