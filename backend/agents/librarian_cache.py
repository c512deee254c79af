"""The Librarian model's answers, cached like the index's own and dropped as exactly.

A question the index cannot answer alone (PATTERN, EXPLAIN, GENERAL, a LOCATE
of a name it does not define) costs a model turn. Its final answer is kept in
the workspace's intent cache under the key the index's answer to the same
question uses, so the seed's per-intent rules (TTL, and PATTERN's structural
change) apply as they are. It depends on:

* the files the turn drew on: paths its tool calls read, and paths in their
  results (search hits, definitions, outlines, import edges);
* the directories it listed (a file added below one changes the listing);
* the names it looked up and the words it searched for;
* the index's own evidence for the question (its files, names and words),
  computed when the answer is cached.

The watcher's change batches then drop it through the cache's one invalidation
rule set. The index's generation is noted before the turn: an answer whose
turn overlapped a change batch is not cached. Before a cached answer is reused,
the files it drew on are hashed again, so an edit the watcher has not reported
yet (it debounces) is a miss, never a stale answer.

One entry serves one question: subject keys are coarse ("explain the ledger"
and "how does the ledger close its books" share EXPLAIN:ledger), so an entry
answers only a question about the same things, in other words. A question that
refers to the conversation ("how does it work") is neither looked up nor
cached: its answer depends on more than the workspace. Nor is a turn that ran
anything but reading ops (its answer may depend on what no watcher follows),
nor one that ended other than with a final answer.
"""

from __future__ import annotations

import asyncio
import json
import re
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any

from sqlalchemy import Connection, select

from backend.agents.knowledge_desk import Question
from backend.archive.schema import STEPS
from backend.archive.store import Archive
from backend.clock import utc_now
from backend.knowledge.code.answers import render_cached_answer
from backend.knowledge.code.evidence import Lookup, ModelAnswer, lookup_for
from backend.knowledge.code.index_queries import search_words
from backend.knowledge.code.intent_cache import Change, Intent, entity_key, focus_words, similarity
from backend.knowledge.code.patterns import concept_terms
from backend.knowledge.watch.hashes import hash_file

if TYPE_CHECKING:
    from backend.knowledge.code.hub import CodeKnowledgeHub
    from backend.knowledge.code.live import CodeKnowledge

LIBRARIAN = "librarian"
# GENERAL keys are matched by similarity (the seed's 0.80 threshold): a model's
# answer to a merely related question would be a wrong answer, not a rough one.
MODEL_SIMILARITY = 0.8
SAME_QUESTION = 0.8  # focus words alike at least this much (Jaccard)
_REFERS_WORDS = "it its this that these those they them their theirs above previous former latter"
_REFERS = frozenset(_REFERS_WORDS.split())
# Ops whose answers depend only on the workspace's files; a turn that ran any
# other op (a write, a shell, another agent's store) is not cached.
READING_OPS = frozenset({
    "librarian.code.search",
    "librarian.code.context",
    "librarian.code.structure",
    "librarian.code.dependencies",
    "librarian.code.patterns",
    "librarian.file.read",
    "librarian.file.list",
    "engineer.file.read",
})  # fmt: skip
_HARMLESS_VERBS = frozenset({"search", "describe"})  # the skill registry, not the workspace
_LISTING_OPS = frozenset({"librarian.file.list", "librarian.code.structure"})
_NOT_READ = frozenset({"guidance", "meta", "error", "execute_with"})  # suggestions, not reads
_steps = STEPS


@dataclass
class TurnSources:
    """What a Librarian turn drew on, from its tool calls and their results."""

    files: set[str] = field(default_factory=set)  # workspace-relative
    listed: set[str] = field(default_factory=set)  # directories ("" is the root)
    names: set[str] = field(default_factory=set)  # entity keys looked up
    terms: set[str] = field(default_factory=set)  # words searched for
    everywhere: bool = False  # it surveyed whole directories' contents
    cacheable: bool = True  # False once it ran an op outside READING_OPS


@dataclass(frozen=True)
class CachedReply:
    """A cached model answer that still holds: the text to show, labelled."""

    text: str
    answer: ModelAnswer

    @property
    def meta(self) -> dict[str, Any]:
        return {
            "answered_from": "cache",
            "model": self.answer.model,
            "cached_at": self.answer.answered_at.isoformat(),
        }


@dataclass(frozen=True)
class Pending:
    """A question that went to the model, and the index generation it started at."""

    knowledge: CodeKnowledge
    lookup: Lookup
    question: Question
    generation: int


def question_lookup(q: Question) -> Lookup | None:
    """The cache key for a question the way the desk answers it without a model; None
    for a question that names nothing or points back at the conversation."""
    words = set(re.findall(r"[a-z]+", q.text.lower()))
    if words & _REFERS or not focus_words(q.text):
        return None
    intent = (q.intent or "GENERAL").upper()
    if intent == "LOCATE" and q.subject:
        return lookup_for(Intent.LOCATE, q.subject)
    if intent in ("PATTERN", "EXPLAIN"):
        return lookup_for(Intent(intent), q.subject or q.text)
    return lookup_for(Intent.GENERAL, q.text, q.text)


class LibrarianAnswers:
    """Looks a Librarian question up before its model turn and caches the answer after."""

    def __init__(self, code: CodeKnowledgeHub, archive: Archive) -> None:
        self._code = code
        self._archive = archive

    async def lookup(
        self, role: str, question: Question, *, offline: bool
    ) -> CachedReply | Pending | None:
        """A cached answer, or what :meth:`remember` needs after the turn; None when the
        question is not the Librarian's, no model answers it, or it cannot be cached."""
        if role != LIBRARIAN or offline:
            return None
        lookup = question_lookup(question)
        if lookup is None:
            return None
        knowledge = await self._code.get(question.workspace)
        generation = knowledge.generation  # before anything is read for this question
        answer = knowledge.cached_answer(lookup, similarity=MODEL_SIMILARITY, count=False)
        hit = (
            answer is not None
            and _same_question(answer.question, question.text)
            and await _unchanged(knowledge, answer)
            # and still cached: a change batch applied while it was hashed may have dropped it
            and knowledge.cached_answer(lookup, similarity=MODEL_SIMILARITY, count=False) is answer
        )
        # A LOCATE question reached here after the desk's locate() counted this entry.
        if lookup.intent is not Intent.LOCATE and knowledge.ready:
            knowledge.cache.note(lookup.intent, hit=hit)
        if hit and answer is not None:
            return CachedReply(render_cached_answer(answer), answer)
        return Pending(knowledge, lookup, question, generation)

    async def remember(self, pending: Pending, reply: Mapping[str, Any]) -> bool:
        """Cache the turn's answer (its reply payload) if it may be; True if it was."""
        text = str(reply.get("text") or "").strip()
        if reply.get("stop") != "final" or reply.get("error") or not text:
            return False  # errors, interruptions and cancellations are never cached
        if reply.get("agent") != LIBRARIAN or not reply.get("turn_id"):
            return False
        knowledge = pending.knowledge
        if knowledge.generation != pending.generation:
            return False  # a change batch overlapped the turn
        steps = await self._turn_steps(str(reply["turn_id"]))
        sources = await asyncio.to_thread(turn_sources, steps, knowledge.root)
        if not sources.cacheable:
            return False
        evidence = await knowledge.fresh_evidence(pending.lookup)
        files = sources.files | evidence.files
        # Copied here, on the loop: the watcher updates its digests on the loop too.
        known = knowledge.watcher.known_hashes if knowledge.watcher is not None else {}
        digests = await asyncio.to_thread(_digests_now, knowledge.root, files, known)
        answer = ModelAnswer(
            text=text,
            question=pending.question.text,
            model=str(reply.get("model") or "unknown"),
            answered_at=utc_now(),
            evidence=evidence,
            digests=digests,
        )
        return knowledge.store_answer(
            pending.lookup,
            answer,
            pending.generation,  # checked again on the loop, right before the put
            files=files,
            names=sources.names,
            terms=sources.terms,
            listed=sources.listed,
            everywhere=sources.everywhere,
        )

    async def _turn_steps(self, turn_id: str) -> list[tuple[str, dict[str, Any]]]:
        """The turn's tool calls and results, as the archive committed them."""
        query = (
            select(_steps.c.kind, _steps.c.data)
            .where(
                _steps.c.turn_id == turn_id,
                _steps.c.role == LIBRARIAN,
                _steps.c.kind.in_(("tool_call", "tool_result")),
            )
            .order_by(_steps.c.seq)
        )

        def read(conn: Connection) -> list[tuple[str, str]]:
            return [(str(kind), str(data)) for kind, data in conn.execute(query)]

        rows = await self._archive.aread(read)
        return [(kind, json.loads(data).get("data") or {}) for kind, data in rows]


# -- what a turn drew on ----------------------------------------------------------------


def turn_sources(steps: Iterable[tuple[str, Mapping[str, Any]]], root: Path) -> TurnSources:
    """Files, directories, names and words a turn's tool calls and results touched."""
    sources = TurnSources()
    for kind, data in steps:
        if kind == "tool_call":
            for op, args in _calls(str(data.get("name", "")), data.get("arguments") or {}):
                _note_call(sources, op, args, root)
        elif kind == "tool_result" and not data.get("is_error"):
            try:
                envelope = json.loads(str(data.get("content", "")))
            except ValueError:
                sources.cacheable = False  # what it drew on cannot be told
                continue
            for raw in _result_paths(envelope):
                _note_path(sources, raw, root, listing=False)
    return sources


def _calls(name: str, arguments: Mapping[str, Any]) -> list[tuple[str | None, dict[str, Any]]]:
    """(op, args) for each op a tool call runs; op None when it cannot be told."""
    if name in _HARMLESS_VERBS:
        return []
    if name == "execute":
        return [(_op_name(arguments.get("op")), _dict(arguments.get("args")))]
    if name == "batch":
        found: list[tuple[str | None, dict[str, Any]]] = []
        for raw in arguments.get("calls") or []:
            item = _dict(raw)
            if item.get("verb", "execute") not in _HARMLESS_VERBS:
                found.append((_op_name(item.get("op")), _dict(item.get("args"))))
        return found
    return [(name.replace("__", "."), dict(arguments))]  # an op offered as a direct tool


def _op_name(value: object) -> str | None:
    return value.split("@", 1)[0] if isinstance(value, str) else None


def _dict(value: object) -> dict[str, Any]:
    return dict(value) if isinstance(value, Mapping) else {}


def _note_call(sources: TurnSources, op: str | None, args: Mapping[str, Any], root: Path) -> None:
    if op not in READING_OPS:
        sources.cacheable = False
        return
    path = args.get("path")
    if isinstance(path, str) and path.strip():
        _note_path(sources, path, root, listing=op in _LISTING_OPS)
    elif op in _LISTING_OPS:
        sources.listed.add("")  # they list the workspace root by default
    if op == "librarian.code.patterns":
        sources.everywhere = True  # conventions over every file below its path
        topic = args.get("topic")
        if isinstance(topic, str):
            sources.terms.update(*(search_words(t) for t in concept_terms(topic)))
    for key in ("query", "symbol"):
        value = args.get(key)
        if isinstance(value, str) and value.strip() and not args.get("regex"):
            sources.terms.update(search_words(value))
            sources.names.add(entity_key(value))  # searches find definitions by name too


def _result_paths(value: Any) -> Iterable[str]:
    """Paths in a tool result: under ``path``/``file`` keys and ``imported_by`` lists;
    not in guidance (what to read next was not read) nor in failed envelopes."""
    if isinstance(value, list):
        for item in value:
            yield from _result_paths(item)
        return
    if not isinstance(value, dict):
        return
    if value.get("ok") is False:
        return
    for key, item in value.items():
        if key in _NOT_READ:
            continue
        if key in ("path", "file") and isinstance(item, str):
            yield item
        elif key == "imported_by" and isinstance(item, list):
            yield from (p for p in item if isinstance(p, str))
        else:
            yield from _result_paths(item)


def _note_path(sources: TurnSources, raw: str, root: Path, *, listing: bool) -> None:
    candidate = Path(raw)
    try:
        full = (candidate if candidate.is_absolute() else root / candidate).resolve()
        rel = full.relative_to(root).as_posix()
    except (OSError, ValueError):
        return  # outside the workspace: the gateway refused it anyway
    rel = "" if rel == "." else rel
    if not rel or full.is_dir():
        sources.listed.add(rel)
        if not listing:
            sources.everywhere = True  # a directory's contents, read some other way
    else:
        sources.files.add(rel)  # a missing file too: its creation changes the answer


# -- reuse -------------------------------------------------------------------------------


def _same_question(cached: str, asked: str) -> bool:
    left, right = focus_words(cached), focus_words(asked)
    return similarity(" ".join(sorted(left)), " ".join(sorted(right))) >= SAME_QUESTION


def _digests_now(
    root: Path, files: Iterable[str], known: Mapping[str, str]
) -> dict[str, str | None]:
    """Each file's digest as the index knows it (the watcher's), else as it is on disk:
    an edit the watcher holds back then already differs from the cached digest."""
    return {f: known.get(f) or hash_file(root / f) for f in files}


async def _unchanged(knowledge: CodeKnowledge, answer: ModelAnswer) -> bool:
    """True if every file the answer drew on still has its digest; otherwise the cache
    drops whatever depends on the changed files, as a change batch would."""

    def changed() -> set[str]:
        root = knowledge.root
        return {f for f, d in answer.digests.items() if hash_file(root / f) != d}

    stale = await asyncio.to_thread(changed)
    if stale:
        knowledge.cache.apply(Change(frozenset(stale)))
    return not stale
