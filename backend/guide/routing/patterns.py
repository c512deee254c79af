"""The Guide's pattern tier: classify free text without a model.

    classify("where is the auth middleware")
    -> Classification(target=LIBRARIAN, intent="LOCATE", subject="auth_middleware", ...)

Each rule in :mod:`backend.guide.routing.rules` adds its weight to one target
(and one intent). The best-scoring target wins; ``confidence`` grows with its
score and shrinks as the runner-up closes in, so a lone strong frame lands
above :data:`~backend.guide.routing.decision.CONFIDENT` while competing or faint cues
land below it and the model tier is asked. Text that matches nothing goes to
the Architect with low confidence.

Session commands typed as prose ("switch to session 2") go to the Session
Manager with ``intent`` set to the session verb (``new``, ``list``, ``switch``,
``suspend``, ``resume``, ``complete``) and ``subject`` to the session
reference or name, verbatim.

Pure Python, precompiled regexes, no I/O: tens of microseconds per call.
"""

from __future__ import annotations

import math
import re

from backend.guide.routing.decision import (
    ArchivalistIntent,
    Classification,
    LibrarianIntent,
    Target,
)
from backend.guide.routing.rules import ANCHOR, RULES, SESSION_VERBS
from backend.guide.routing.text import Rule, identifiers, normalise, snake, subject_from, time_scope

__all__ = ["SESSION_WEIGHT", "UNMATCHED_CONFIDENCE", "classify", "normalise"]

# Below CONFIDENT (0.75), so an unmatched request is sent to the model tier when there is one.
UNMATCHED_CONFIDENCE = 0.3
SESSION_WEIGHT = 6.0
_MAX_CONFIDENCE = 0.97
_SESSION_WORDS = ("session", "sess_", "close it out", "suspend", "park", "shelve")
_QUOTED = re.compile(r'["\u201c]([^"\u201d]{2,80})["\u201d]')
_INTENT_DEFAULTS: dict[Target, str] = {
    Target.LIBRARIAN: LibrarianIntent.GENERAL.value,
    Target.ARCHIVALIST: ArchivalistIntent.GENERAL.value,
}
# Targets given a best-effort subject; the Librarian and Archivalist key their caches on it.
_SUBJECT_TARGETS = frozenset(
    {
        Target.LIBRARIAN,
        Target.ARCHIVALIST,
        Target.ACADEMIC,
        Target.ARCHITECT,
        Target.INSPECTOR,
        Target.TESTER,
    }
)


def classify(text: str) -> Classification:
    """Classify one user request by its trigger phrases.

    Raises :class:`ValueError` for empty or whitespace-only text.
    """
    if not text or not text.strip():
        raise ValueError("cannot classify empty text: a request needs at least one word")
    bare = normalise(text)
    if not bare:  # punctuation only
        return Classification(target=Target.ARCHITECT, confidence=UNMATCHED_CONFIDENCE)
    norm = " " + bare  # the rules are compiled for one leading space (pattern_text.spaced)
    idents = identifiers(text)
    tally = _tally(norm, anchored=bool(idents) or ANCHOR.search(norm) is not None)
    session = _session_command(norm)
    if session is not None:
        tally.scores[Target.SESSION_MANAGER] = SESSION_WEIGHT
        tally.suppressed.add(Target.ARCHITECT)
    scope, scope_span = time_scope(norm)
    if scope is not None:
        if Target.ARCHIVALIST in tally.scores:
            tally.scores[Target.ARCHIVALIST] += 2.0
        elif scope != "today":  # "fix it today" is not about the past
            tally.scores[Target.ARCHIVALIST] = 1.5
    ranked = tally.ranked()
    if not ranked:
        return Classification(target=Target.ARCHITECT, confidence=UNMATCHED_CONFIDENCE)

    target, top = ranked[0]
    confidence = _confidence(top, ranked[1][1] if len(ranked) > 1 else 0.0)
    intent: str | None = None
    subject: str | None = None
    if target is Target.SESSION_MANAGER and session is not None:
        intent, subject = session
    elif target in _INTENT_DEFAULTS:
        intent, certainty = _pick_intent(tally.intents.get(target, {}), _INTENT_DEFAULTS[target])
        confidence *= certainty
    if target in _SUBJECT_TARGETS:
        # Every occurrence of the winner's frames is cut, not just the first.
        cut = [m.span() for r in tally.matched.get(target, ()) for m in r.regex.finditer(norm)]
        if scope_span is not None:
            cut.append(scope_span)
        subject = _subject(text, idents, norm, cut)
        if intent == ArchivalistIntent.RESUME and subject is None:
            subject = "session"
    return Classification(
        target=target,
        intent=intent,
        subject=subject,
        time_scope=scope if target is Target.ARCHIVALIST else None,
        confidence=round(min(confidence, _MAX_CONFIDENCE), 3),
    )


class _Tally:
    """What the rules said about one text."""

    __slots__ = ("intents", "matched", "scores", "suppressed")

    def __init__(self) -> None:
        self.scores: dict[Target, float] = {}
        self.intents: dict[Target, dict[str, float]] = {}
        self.matched: dict[Target, list[Rule]] = {}
        self.suppressed: set[Target] = set()

    def ranked(self) -> list[tuple[Target, float]]:
        """Targets by score, best first, suppressed ones left out (unless nothing else scored)."""
        kept = {t: s for t, s in self.scores.items() if t not in self.suppressed}
        return sorted((kept or self.scores).items(), key=lambda kv: kv[1], reverse=True)


def _tally(norm: str, *, anchored: bool) -> _Tally:
    tally = _Tally()
    for rule in RULES:
        if rule.regex.search(norm) is None:
            continue
        weight = rule.weight if anchored or not rule.needs_anchor else rule.weight / 2
        target = rule.target
        tally.scores[target] = tally.scores.get(target, 0.0) + weight
        tally.matched.setdefault(target, []).append(rule)
        if rule.intent is not None:
            by_intent = tally.intents.setdefault(target, {})
            by_intent[rule.intent] = by_intent.get(rule.intent, 0.0) + weight
        tally.suppressed |= rule.suppresses
    return tally


def _confidence(top: float, second: float) -> float:
    """0.67 for a lone 2-point cue, 0.82 for one 4-point frame, 0.95 for 8 points;
    halved when the runner-up scores as much as the winner."""
    base = 1.0 - 0.6 * math.exp(-top / 3.3)
    return base * (1.0 - 0.5 * math.pow(second / top, 1.5))


def _pick_intent(weights: dict[str, float], default: str) -> tuple[str, float]:
    """The best intent and how sure we are of it (1.0, or less when unsure)."""
    if not weights:
        return default, 0.9
    ranked = sorted(weights.items(), key=lambda kv: kv[1], reverse=True)
    if len(ranked) > 1 and ranked[1][1] >= ranked[0][1]:
        return ranked[0][0], 0.85
    return ranked[0][0], 1.0


def _subject(text: str, idents: list[str], norm: str, cut: list[tuple[int, int]]) -> str | None:
    """A code identifier the user typed, else a quoted phrase, else what the frames leave."""
    for ident in idents:
        name = snake(ident)
        if name:
            return name
    if '"' in text or "\u201c" in text:
        quoted = _QUOTED.search(text)
        if quoted is not None:
            return subject_from(normalise(quoted.group(1)), ())
    return subject_from(norm, cut)


def _session_command(norm: str) -> tuple[str, str | None] | None:
    """(verb, ref or name) of a session command typed as prose, the earliest if several."""
    if not any(word in norm for word in _SESSION_WORDS):
        return None
    best: tuple[int, str, str | None] | None = None
    for verb, pattern in SESSION_VERBS:
        m = pattern.search(norm)
        if m is None or (best is not None and m.start() >= best[0]):
            continue
        groups = m.groupdict()
        ref = groups.get("ref") or groups.get("sess") or groups.get("named")
        best = (m.start(), verb, ref)
    return None if best is None else (best[1], best[2])
