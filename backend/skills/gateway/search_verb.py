"""``search`` behind the gateway: ranking, filters, pages and the per-domain grouping.

Ranking. The flat ``hits`` list is the index's ranking of what the caller is
offered (see :meth:`Gateway.offered`), narrowed by ``domain`` and ``tags`` (an
op or resource must carry every tag given, case-insensitively). ``per_domain``
keeps at most that many hits of each domain, so one crowded domain cannot push
the others off the page.

Domains. As in Ernesto's ``ask``, a result says which domains it touched, with
each domain's description, and always offers each such domain's entry points
(ops flagged ``entry_point`` that the caller may run), whether or not they
scored, so a model always sees the way into a domain it touched. Every token of
a result is read by a model, so nothing is said twice: an op's name carries its
domain (``librarian.code.search``), ``domains`` maps each touched domain to its
description in order of first hit, and an entry point is described in ``hits``
if it scored, else in ``entry_points``. Only domains with a hit (or the
``domain`` asked for) count: every builtin op is searchable, so listing every
entry point of every domain would undo the point of searching.

Pages. A result with more hits than ``limit`` carries ``next_cursor``; passing
it back as ``cursor`` returns the next page of the same search. The cursor is
opaque, bound to the query, domain, tags and ``per_domain`` it came from, and
notes the registry version so a page read after the registry changed says so.
Entry points are listed on the first page only.
"""

from __future__ import annotations

import base64
import binascii
import hashlib
import json
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from typing import Any

from backend.errors import SylkError
from backend.skills.envelopes import SearchHit
from backend.skills.gateway.help import usage
from backend.skills.gateway.verbs import MAX_LIMIT
from backend.skills.models import OpKind, SkillContext
from backend.skills.registry import Registry
from backend.skills.search.skill_index import SkillIndex


class CursorError(SylkError):
    """A ``cursor`` that this gateway did not issue, or issued for another search."""

    def __init__(self, reason: str) -> None:
        super().__init__(
            f"invalid cursor: {reason}",
            help_hint="pass back next_cursor from the previous page of the same search",
        )
        self.reason = reason


@dataclass(frozen=True)
class SearchRequest:
    query: str
    domain: str | None = None
    limit: int = 10
    tags: tuple[str, ...] = ()
    per_domain: int | None = None
    cursor: str | None = None

    def fingerprint(self) -> str:
        shown = [self.query.strip(), self.domain, sorted(_norm(self.tags)), self.per_domain]
        return hashlib.sha256(json.dumps(shown).encode()).hexdigest()[:12]


@dataclass
class SearchPage:
    hits: list[dict[str, Any]]  # as the model reads them: SearchHit's fields, defaults left out
    domains: dict[str, str]  # touched domain -> its description, in order of first hit
    next_cursor: str | None = None
    warnings: list[str] = field(default_factory=list)
    entry_points: list[dict[str, Any]] = field(default_factory=list)  # did not score


def _norm(tags: Sequence[str]) -> set[str]:
    return {t.strip().lower() for t in tags if t.strip()}


def encode_cursor(offset: int, request: SearchRequest, version: str) -> str:
    raw = json.dumps({"o": offset, "f": request.fingerprint(), "v": version}).encode()
    return base64.urlsafe_b64encode(raw).decode().rstrip("=")


def decode_cursor(cursor: str, request: SearchRequest) -> tuple[int, str]:
    """``(offset, registry version)`` from a cursor issued for ``request``'s search."""
    try:
        padded = cursor + "=" * (-len(cursor) % 4)
        data = json.loads(base64.urlsafe_b64decode(padded.encode()))
        offset, fingerprint, version = int(data["o"]), str(data["f"]), str(data["v"])
    except (binascii.Error, ValueError, KeyError, TypeError) as exc:
        raise CursorError("it is not a cursor this search returned") from exc
    if fingerprint != request.fingerprint():
        raise CursorError("it belongs to a different search (query, domain, tags or per_domain)")
    if offset < 0:
        raise CursorError("it points before the first hit")
    return offset, version


class GatewaySearch:
    """Runs one caller's search over ``index``; ``offered`` is the gateway's visibility rule
    and ``described`` the ops the caller's session has read help for."""

    def __init__(
        self,
        registry: Registry,
        index: SkillIndex,
        offered: Callable[[str, SkillContext], bool],
        described: Callable[[str], frozenset[str]],
    ) -> None:
        self.registry = registry
        self.index = index
        self._offered = offered
        self._described = described
        # key -> its hit without score and usage, split around "score" so fields keep
        # SearchHit's order; built through SearchHit once per registry version, because
        # validating and dumping a model per hit cost more than ranking did.
        self._templates: dict[str, tuple[dict[str, Any], dict[str, Any]] | None] = {}
        self._templates_version = ""

    def page(self, ctx: SkillContext, request: SearchRequest) -> SearchPage:
        """Raises :class:`CursorError` for a cursor of another search."""
        offset, warnings = 0, []
        if request.cursor:
            offset, version = decode_cursor(request.cursor, request)
            if version != self.registry.version:
                warnings.append("ops changed since this cursor; hits may repeat or be skipped")
        limit = max(1, min(request.limit, MAX_LIMIT))
        tags = _norm(request.tags)

        def include(key: str) -> bool:
            return self._offered(key, ctx) and (not tags or tags <= self._tags_of(key))

        ranked = self._ranked(request, offset + limit + 1, include)
        shown = ranked[offset : offset + limit]
        described = self._described(ctx.session_id)
        hits = [h for h in (self._hit(k, s, described) for k, s in shown) if h is not None]
        next_cursor = None
        if len(ranked) > offset + limit:
            next_cursor = encode_cursor(offset + limit, request, self.registry.version)
        entries = offset == 0
        domains, unscored = self._domains(
            ctx, request, hits, described=described, tags=tags, entries=entries
        )
        return SearchPage(hits, domains, next_cursor, warnings, unscored)

    # -- ranking ------------------------------------------------------------------------
    def _ranked(
        self, request: SearchRequest, want: int, include: Callable[[str], bool]
    ) -> list[tuple[str, float]]:
        """The first ``want`` hits (after the per-domain cap), best first."""
        search = self.index.search
        if request.per_domain is None:
            return search(request.query, domain=request.domain, limit=want, include=include)
        cap = max(1, request.per_domain)
        window = want
        while True:
            ranked = search(request.query, domain=request.domain, limit=window, include=include)
            counts: dict[str, int] = {}
            kept = []
            for key, score in ranked:
                domain = self._domain_of(key)
                if counts.get(domain, 0) < cap:
                    counts[domain] = counts.get(domain, 0) + 1
                    kept.append((key, score))
            # Capping drops hits, so a wider window may be needed to fill the page.
            if len(kept) >= want or len(ranked) < window:
                return kept[:want]
            window *= 4

    def _domain_of(self, key: str) -> str:
        resource = self.registry.resource(key)
        return resource.domain if resource else key.split(".", 1)[0]

    def _tags_of(self, key: str) -> set[str]:
        skill = self.registry.get(key)
        if skill is not None:
            return _norm(skill.tags)
        resource = self.registry.resource(key)
        return _norm(resource.tags) if resource else set()

    # -- hits and groups ----------------------------------------------------------------
    def _hit(self, key: str, score: float, described: frozenset[str]) -> dict[str, Any] | None:
        """The hit a model reads for ``key``, or None for a key no longer registered."""
        version = self.registry.version
        if version != self._templates_version:
            self._templates.clear()
            self._templates_version = version
        if key not in self._templates:
            self._templates[key] = self._template(key)
        template = self._templates[key]
        if template is None:
            return None
        head, tail = template
        hit = {**head, "score": round(score, 4), **tail}
        if key in described:
            # A session that has read the op's help gets the call shape back, so it can
            # execute without asking for the same page again.
            skill = self.registry.get(key)
            if skill is not None:
                hit["usage"] = usage(skill)
        return hit

    def _template(self, key: str) -> tuple[dict[str, Any], dict[str, Any]] | None:
        skill = self.registry.get(key)
        if skill is not None:
            model = SearchHit(
                op=skill.op,
                summary=skill.one_line(),
                score=0.0,
                params=list(skill.params.model_fields),
                write=skill.kind is OpKind.WRITE,
                destructive=skill.destructive,
                entry_point=skill.entry_point,
                version=skill.version,
            )
        elif (resource := self.registry.resource(key)) is not None:
            model = SearchHit(
                op=key,
                kind="resource",
                summary=resource.description or resource.name,
                score=0.0,
                execute_with={"op": resource.op, "args": resource.args},
            )
        else:
            return None
        dumped = model.model_dump(exclude_defaults=True)
        keys = list(dumped)
        at = keys.index("score")
        return {k: dumped[k] for k in keys[:at]}, {k: dumped[k] for k in keys[at + 1 :]}

    def _domains(
        self,
        ctx: SkillContext,
        request: SearchRequest,
        hits: list[dict[str, Any]],
        *,
        described: frozenset[str],
        tags: set[str],
        entries: bool,
    ) -> tuple[dict[str, str], list[dict[str, Any]]]:
        """The touched domains with their descriptions, and their entry points that did
        not score (first page only)."""
        touched = list(dict.fromkeys(self._domain_of(h["op"]) for h in hits))
        order = [*touched]
        if request.domain is not None and request.domain not in order:
            order.append(request.domain)
        scored = {h["op"] for h in hits}
        domains: dict[str, str] = {}
        unscored: list[dict[str, Any]] = []
        for name in order:
            doors = []
            if entries:
                doors = [
                    s
                    for s in self.registry.entry_points(name)
                    if self._offered(s.op, ctx) and tags <= _norm(s.tags)
                ]
            for skill in doors:
                if skill.op not in scored:
                    unscored.append(self._hit(skill.op, 0.0, described) or {})
            if doors or name in touched:
                domain = self.registry.domain(name)
                domains[name] = domain.description if domain is not None else ""
        return domains, unscored
