"""Fragment files: the shipped set is sound, bad files are refused clearly, seed scoring."""

from __future__ import annotations

import math
from pathlib import Path

import pytest

from backend.knowledge.fragments.fragment import (
    Fragment,
    FragmentError,
    parse_fragment,
    read_fragment,
)
from backend.knowledge.fragments.library import BUILTIN_DIR, FragmentLibrary
from backend.knowledge.fragments.match import (
    Scored,
    keywords,
    normalise_query,
    rank,
    score,
    select_within_budget,
    word_match,
)

GOOD = """---
id: async-patterns
category: patterns
tags: [typescript, async, patterns, promises]
capabilities:
  - Async/await error handling
  - Promise composition patterns
useWhen:
  - Building async TypeScript applications
  - Need error handling for promises
estimatedTokens: 800
---

# Async patterns

Await every promise you create.
"""


def parse(text: str, name: str = "frag.md", category: str = "general") -> Fragment:
    return parse_fragment(text, Path("/lib") / name, default_category=category)


# -- the built-in set ----------------------------------------------------------------


def builtin() -> list[Fragment]:
    return FragmentLibrary(watch=False).fragments()


def test_the_builtin_set_is_large_varied_and_loads_without_warnings() -> None:
    library = FragmentLibrary(watch=False)
    frags = library.fragments()
    assert library.warnings == []
    assert len(frags) >= 24
    assert {f.category for f in frags} >= {
        "toolchains",
        "testing",
        "errors",
        "security",
        "performance",
    }
    assert len({f.id for f in frags}) == len(frags)
    for topic in ("python", "typescript", "go", "rust"):
        assert any(f.category == "toolchains" and topic in f.tags for f in frags), topic


@pytest.mark.parametrize("frag", builtin(), ids=lambda f: f.key)
def test_each_builtin_fragment_is_real_guidance_with_honest_metadata(frag: Fragment) -> None:
    words = len(frag.body.split())
    assert 150 <= words <= 600, words
    assert frag.tags and len(frag.capabilities) >= 2 and len(frag.use_when) >= 2
    assert frag.path.parent.name == frag.category and frag.path.stem == frag.id
    assert frag.builtin and frag.uri == f"sylk://library/{frag.category}/{frag.id}"
    real = math.ceil(len(frag.body) / 4)
    assert abs(frag.estimated_tokens - real) <= real * 0.25, (frag.estimated_tokens, real)
    assert frag.summary and not frag.summary.startswith("#")


def test_builtin_fragments_live_inside_the_package() -> None:
    assert BUILTIN_DIR.is_dir()
    assert BUILTIN_DIR.parent.name == "fragments"


# -- parsing -------------------------------------------------------------------------


def test_a_good_fragment_keeps_its_metadata() -> None:
    frag = parse(GOOD)
    assert (frag.id, frag.category, frag.title) == ("async-patterns", "patterns", "Async patterns")
    assert frag.tags == ("typescript", "async", "patterns", "promises")
    assert frag.use_when[1] == "Need error handling for promises"
    assert frag.estimated_tokens == 800
    assert frag.summary == "Await every promise you create."
    assert frag.body.startswith("# Async patterns")


def test_missing_metadata_falls_back_to_file_folder_heading_and_sections() -> None:
    text = """---
{}
---

# Connection Pooling Basics

Reuse connections.

## Capabilities

- Sizing a pool
- Detecting leaks

## When to use

- The database refuses connections
"""
    frag = parse(text, name="Pooling.md", category="databases")
    assert (frag.id, frag.category) == ("pooling", "databases")
    assert frag.tags == ("connection", "pooling", "basics")
    assert frag.capabilities == ("Sizing a pool", "Detecting leaks")
    assert frag.use_when == ("The database refuses connections",)
    assert frag.estimated_tokens == math.ceil(len(frag.body) / 4)


@pytest.mark.parametrize(
    ("text", "problem"),
    [
        ("# just markdown\n", "no YAML frontmatter"),
        ("---\nid: x\n# never closed\n", "not closed"),
        ("---\nid: [unclosed\n---\nbody\n", "invalid YAML in the frontmatter at line"),
        ("---\n- a\n- b\n---\nbody\n", "must be a YAML mapping"),
        ("---\ntags: {a: 1}\n---\nbody\n", "'tags' must be a list of strings"),
        ("---\nestimatedTokens: -5\n---\nbody\n", "'estimatedTokens' must be a positive integer"),
        ("---\nestimatedTokens: many\n---\nbody\n", "'estimatedTokens' must be a positive"),
        ("---\nestimatedTokens: true\n---\nbody\n", "'estimatedTokens' must be a positive"),
        ("---\nid: Bad Id!\n---\nbody\n", "'id' must be lowercase"),
        ("---\ncategory: ../etc\n---\nbody\n", "'category' must be lowercase"),
        ("---\nusewhen: [x]\n---\nbody\n", "unknown field(s) usewhen"),
        ("---\nid: x\n---\n\n   \n", "no content after the frontmatter"),
        ("---\ntitle: [1]\n---\nbody\n", "'title' must be a string"),
    ],
)
def test_a_malformed_fragment_is_refused_naming_the_file_and_problem(
    text: str, problem: str
) -> None:
    with pytest.raises(FragmentError) as info:
        parse(text, name="broken.md")
    assert problem in str(info.value)
    assert "/lib/broken.md" in str(info.value)


def test_unreadable_bytes_are_a_fragment_error(tmp_path: Path) -> None:
    path = tmp_path / "latin.md"
    path.write_bytes(b"---\nid: x\n---\ncaf\xe9\n")
    with pytest.raises(FragmentError, match="is not UTF-8"):
        read_fragment(path, default_category="general")
    with pytest.raises(FragmentError, match="cannot be read"):
        read_fragment(tmp_path / "missing.md", default_category="general")


# -- scoring -------------------------------------------------------------------------


def test_keywords_drop_stop_words_and_expand_aliases() -> None:
    assert keywords("What's the best practice for TS retries in py?") == [
        "typescript",
        "retries",
        "python",
    ]
    assert normalise_query("Python  RETRIES") == normalise_query("retries for python?")


def test_word_matching_is_by_stemmed_word_prefix_not_substring() -> None:
    assert word_match("go", "goroutines and channels")
    assert not word_match("go", "django views")
    assert word_match("retries", "how fast to retry")
    assert word_match("testing", "unit tests")


def test_scores_use_the_seed_weights() -> None:
    frag = parse(GOOD)
    # tags: typescript +10, async +10; capabilities: async +8, error +8;
    # useWhen: typescript +5, async +5, error +5; under 1000 tokens +5.
    assert score(frag, ["typescript", "async", "error"]) == 56
    assert score(frag, ["typescript"], category="patterns") == 15 + 10 + 5 + 5
    assert score(frag, ["typescript"], required_tags=["rust"]) == 0
    big = parse(GOOD.replace("estimatedTokens: 800", "estimatedTokens: 1000"))
    assert score(big, ["typescript"]) == 15


def test_rank_filters_by_min_score_and_category() -> None:
    frags = builtin()
    ranked = rank(frags, "sql injection")
    assert ranked[0].fragment.id == "sql-injection"
    assert all(s.score >= 10 for s in ranked)
    only = rank(frags, "python", category="security")
    assert only and {s.fragment.category for s in only} == {"security"}
    assert rank(frags, "the and of") == []


def _scored(*tokens: int) -> list[Scored]:
    base = parse(GOOD)
    return [
        Scored(
            Fragment(**{**base.__dict__, "id": f"f{i}", "estimated_tokens": t}),
            100 - i,
        )
        for i, t in enumerate(tokens)
    ]


def test_selection_keeps_the_top_three_even_over_budget() -> None:
    chosen = select_within_budget(_scored(900, 900, 900, 10), max_tokens=1000)
    assert [s.fragment.id for s in chosen] == ["f0", "f1", "f2"]


def test_selection_adds_what_fits_after_the_top_three_and_stops_at_80_percent() -> None:
    chosen = select_within_budget(_scored(100, 100, 100, 500, 50, 300, 10), max_tokens=1000)
    # 300 after three; +500 = 800 (fits, not over 80%); +50 = 850 > 800: stop.
    assert [s.fragment.id for s in chosen] == ["f0", "f1", "f2", "f3", "f4"]
