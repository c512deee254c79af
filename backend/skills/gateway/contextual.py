"""Which contextual and specialised skills are loaded for a (session, agent).

Contextual skills load while one of their trigger regexes matches the
conversation and unload after ``window`` observed turns without a match.
Specialised skills never load from triggers: only an explicit request (a
``describe``/``execute`` naming them, or :meth:`ContextTracker.load`) loads
them, and they too unload after ``window`` turns without use. At most
``max_loaded`` are loaded at once (the least recently used goes first).
Loaded skills are shown to the model as individual tools by the executor.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field

from backend.skills.models import SkillTier
from backend.skills.registry import Registry, RegistryChange


@dataclass
class _State:
    turn: int = 0
    last_used: dict[str, int] = field(default_factory=dict)  # op -> turn (insertion = load order)


class ContextTracker:
    def __init__(self, registry: Registry, *, window: int = 3, max_loaded: int = 4) -> None:
        if window < 1 or max_loaded < 0:
            raise ValueError("window must be >= 1 and max_loaded >= 0")
        self.registry = registry
        self.window = window
        self.max_loaded = max_loaded
        self._states: dict[tuple[str, str], _State] = {}
        self._patterns: dict[str, list[re.Pattern[str]]] | None = None
        registry.subscribe(self._on_change)

    def _on_change(self, change: RegistryChange) -> None:
        self._patterns = None
        if change.removed and change.skill is not None:
            for state in self._states.values():
                state.last_used.pop(change.key, None)

    def _triggers(self, agent: str) -> dict[str, list[re.Pattern[str]]]:
        if self._patterns is None:
            self._patterns = {
                s.op: [re.compile(t, re.IGNORECASE) for t in s.triggers]
                for s in self.registry.list(tier=SkillTier.CONTEXTUAL)
                if s.triggers
            }
        return {
            op: pats
            for op, pats in self._patterns.items()
            if (skill := self.registry.get(op)) is not None and skill.agent == agent
        }

    def _state(self, session_id: str, agent: str) -> _State:
        return self._states.setdefault((session_id, agent), _State())

    def observe(self, session_id: str, agent: str, text: str) -> tuple[set[str], set[str]]:
        """Record one conversation turn; returns (newly loaded, unloaded) op names."""
        state = self._state(session_id, agent)
        before = set(state.last_used)
        state.turn += 1
        for op, patterns in self._triggers(agent).items():
            if any(p.search(text) for p in patterns):
                state.last_used.pop(op, None)
                state.last_used[op] = state.turn
        self._expire(state)
        after = set(state.last_used)
        return after - before, before - after

    def load(self, session_id: str, agent: str, op: str) -> bool:
        """Load a contextual or specialised op on explicit request; False for other tiers."""
        skill = self.registry.get(op)
        if skill is None or skill.tier is SkillTier.CORE:
            return False
        state = self._state(session_id, agent)
        state.last_used.pop(op, None)
        state.last_used[op] = state.turn
        self._expire(state)
        return op in state.last_used

    def _expire(self, state: _State) -> None:
        for op, last in list(state.last_used.items()):
            if state.turn - last >= self.window or op not in self.registry:
                del state.last_used[op]
        while len(state.last_used) > self.max_loaded:
            oldest = min(state.last_used, key=lambda o: state.last_used[o])
            del state.last_used[oldest]

    def loaded(self, session_id: str, agent: str) -> list[str]:
        state = self._states.get((session_id, agent))
        return list(state.last_used) if state else []

    def forget(self, session_id: str) -> None:
        for key in [k for k in self._states if k[0] == session_id]:
            del self._states[key]
