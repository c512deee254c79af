"""The inverted useWhen/keyword index behind ``index`` mode (Orchestr8's fast path).

Built once per library version (at load and after every reload), so a query
only intersects keyword postings instead of scoring every fragment. Each
fragment contributes one *scenario* per ``useWhen`` line and one for its tags;
the keyword index maps stemmed words to scenarios. A lookup scores a scenario
+20 per query word found exactly and +10 per word found as a prefix (the seed's
weights), keeps each fragment's best scenario, and answers in a few lines.
"""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Iterable, Sequence
from dataclasses import dataclass

from backend.knowledge.fragments.fragment import Fragment
from backend.knowledge.fragments.match import keywords, score, stem

EXACT_WEIGHT = 20
PARTIAL_WEIGHT = 10


@dataclass(frozen=True)
class Scenario:
    text: str
    fragment: Fragment
    words: frozenset[str]


@dataclass(frozen=True)
class IndexHit:
    fragment: Fragment
    scenario: str
    score: int


class FragmentIndex:
    """Scenarios and a stemmed-word -> scenario posting list."""

    def __init__(self, fragments: Iterable[Fragment]) -> None:
        self.scenarios: list[Scenario] = []
        postings: dict[str, set[int]] = defaultdict(set)
        for frag in fragments:
            texts = [*frag.use_when, f"{frag.title}: {', '.join(frag.tags)}"]
            for text in texts:
                words = frozenset(stem(w) for w in keywords(text))
                if not words:
                    continue
                number = len(self.scenarios)
                self.scenarios.append(Scenario(text, frag, words))
                for word in words:
                    postings[word].add(number)
        self.postings: dict[str, frozenset[int]] = {k: frozenset(v) for k, v in postings.items()}

    @property
    def keyword_count(self) -> int:
        return len(self.postings)

    def lookup(
        self,
        query: str,
        *,
        category: str | None = None,
        required_tags: Sequence[str] = (),
        limit: int = 5,
    ) -> list[IndexHit]:
        """Best scenario per fragment, best fragments first."""
        words = [stem(w) for w in keywords(query)]
        if not words:
            return []
        # Per scenario and query word: +20 exact, +10 prefix; a fragment scores the best
        # it gets for each word across its scenarios, so two scenarios covering two
        # different words beat one scenario covering one.
        per_word: dict[int, dict[str, int]] = defaultdict(dict)
        for word in words:
            exact = self.postings.get(word, frozenset())
            partial: set[int] = set()
            for key, numbers in self.postings.items():
                if key != word and key.startswith(word):
                    partial.update(numbers)
            for number in exact:
                per_word[number][word] = EXACT_WEIGHT
            for number in partial - exact:
                per_word[number][word] = PARTIAL_WEIGHT
        frag_words: dict[str, dict[str, int]] = defaultdict(dict)
        best_scenario: dict[str, tuple[int, Scenario]] = {}
        for number, found in per_word.items():
            scenario = self.scenarios[number]
            frag = scenario.fragment
            if category and frag.category != category:
                continue
            if required_tags and not all(t.lower() in frag._tags_lc for t in required_tags):
                continue
            mine = frag_words[frag.key]
            for word, value in found.items():
                mine[word] = max(mine.get(word, 0), value)
            value = sum(found.values())
            known = best_scenario.get(frag.key)
            if known is None or value > known[0]:
                best_scenario[frag.key] = (value, scenario)
        best = {
            key: IndexHit(scenario.fragment, scenario.text, sum(frag_words[key].values()))
            for key, (_, scenario) in best_scenario.items()
        }
        # Ties (common: one word each) go to the fragment the full scorer prefers.
        query_words = keywords(query)
        hits = sorted(
            best.values(),
            key=lambda h: (-h.score, -score(h.fragment, query_words), h.fragment.uri),
        )
        return hits[:limit]
