"""Querying the library: the three modes, the shared cache, lookups and the offline answer."""

from __future__ import annotations

from pathlib import Path

import pytest

from backend.knowledge.fragments.answers import OFFLINE_LABEL, answer_best_practice
from backend.knowledge.fragments.fragment import estimate_tokens
from backend.knowledge.fragments.library import FragmentLibrary
from backend.knowledge.fragments.models import (
    AmbiguousFragmentError,
    FragmentNotFoundError,
    LibraryError,
)


@pytest.fixture(scope="module")
def library() -> FragmentLibrary:
    return FragmentLibrary(watch=False)


def fresh() -> FragmentLibrary:
    return FragmentLibrary(watch=False)


def test_catalog_lists_ranked_uris_with_summaries_and_token_estimates(
    library: FragmentLibrary,
) -> None:
    answer = library.query("how should I retry flaky HTTP calls", max_results=4)
    assert answer.mode == "catalog" and len(answer.matches) == 4
    top = answer.matches[0]
    assert top.uri == "sylk://library/errors/retries-backoff"
    assert [m.score for m in answer.matches] == sorted(
        (m.score for m in answer.matches), reverse=True
    )
    assert f"`{top.uri}`" in answer.text and f"~{top.tokens} tokens" in answer.text
    assert top.summary in answer.text
    assert "Full jitter" not in answer.text  # a catalog lists, it does not load bodies
    assert answer.total_tokens < 600


def test_full_mode_assembles_content_within_budget_but_always_the_top_three(
    library: FragmentLibrary,
) -> None:
    small = library.query("python testing", mode="full", max_tokens=200)
    assert len(small.matches) == 3
    assert "over budget: the top three are always included" in small.text
    for match in small.matches:
        assert f"`{match.uri}`" in small.text
    roomy = library.query("python testing", mode="full", max_tokens=5000)
    assert len(roomy.matches) > 3
    assert sum(m.tokens for m in roomy.matches[3:]) <= 5000 - sum(
        m.tokens for m in roomy.matches[:3]
    )
    assert "`tmp_path`" in roomy.text  # the fixtures fragment's body is there


def test_index_mode_answers_in_a_few_lines(library: FragmentLibrary) -> None:
    answer = library.query("sqlite database is locked", mode="index")
    assert not answer.fallback
    assert answer.matches[0].uri == "sylk://library/performance/sqlite-tuning"
    assert answer.matches[0].scenario
    assert len(answer.text.splitlines()) <= 6 and answer.total_tokens < 150


def test_index_mode_falls_back_to_scoring_when_only_tags_fit(library: FragmentLibrary) -> None:
    answer = library.query("jitter", mode="index")
    assert answer.matches and answer.matches[0].id == "retries-backoff"
    nothing = library.query("kubernetes helm", mode="index")
    assert nothing.matches == [] and nothing.fallback


def test_filters_narrow_by_category_and_required_tags(library: FragmentLibrary) -> None:
    security = library.query("python", category="security")
    assert security.matches and {m.category for m in security.matches} == {"security"}
    tagged = library.query("errors", tags=["rust"])
    assert [m.id for m in tagged.matches] == ["rust-result"]
    listed = library.query("", category="testing", max_results=50)
    assert len(listed.matches) >= 5


def test_answers_are_cached_by_normalised_query_until_a_reload() -> None:
    lib = fresh()
    first = lib.query("Python retries", mode="catalog")
    assert not first.cached
    again = lib.query("what are the best practices for retries in python?")
    assert again.cached and again.text == first.text
    lib.query("python retries", mode="full")
    lib.query("python retries", max_tokens=1000)
    stats = lib.cache_stats()
    assert (stats.hits, stats.misses, stats.entries) == (1, 3, 3)
    assert stats.hit_rate == 0.25
    version = lib.version
    lib.reload()
    assert lib.version == version + 1
    after = lib.query("python retries")
    assert not after.cached and after.version == version + 1
    assert lib.cache_stats().entries == 1


def test_get_by_uri_category_slash_id_or_bare_id(library: FragmentLibrary) -> None:
    frag = library.get("sylk://library/security/sql-injection")
    assert library.get("security/sql-injection") is frag
    assert library.get("SQL-Injection") is frag
    assert "parameter" in frag.body


def test_get_refuses_unknown_and_foreign_refs() -> None:
    lib = fresh()
    with pytest.raises(FragmentNotFoundError) as info:
        lib.get("sql-injektion")
    assert info.value.suggestions[0] == "sylk://library/security/sql-injection"
    assert "did you mean" in str(info.value)
    with pytest.raises(LibraryError, match="is not a library URI"):
        lib.get("sylk://elsewhere/x")


def test_a_bare_id_in_two_categories_is_ambiguous(tmp_path: Path) -> None:
    root = tmp_path
    for category in ("alpha", "beta"):
        (root / category).mkdir()
        (root / category / "same.md").write_text(
            f"---\ntags: [{category}]\n---\n# Same\n\nText.\n", encoding="utf-8"
        )
    lib = FragmentLibrary([root], include_builtin=False, watch=False)
    with pytest.raises(AmbiguousFragmentError) as info:
        lib.get("same")
    assert info.value.uris == ["sylk://library/alpha/same", "sylk://library/beta/same"]


@pytest.mark.parametrize(
    ("kwargs", "message"),
    [
        ({"query": "x", "mode": "everything"}, "unknown mode 'everything'"),
        ({"query": "x", "max_tokens": 0}, "must be at least 1"),
        ({"query": "  "}, "give a query, tags or a category"),
        ({"query": "x", "category": "cooking"}, "no category 'cooking'"),
    ],
)
def test_bad_queries_raise_clear_library_errors(kwargs: dict[str, object], message: str) -> None:
    lib = fresh()
    query = str(kwargs.pop("query"))
    with pytest.raises(LibraryError, match=message) as info:
        lib.query(query, **kwargs)  # type: ignore[arg-type]
    if "cooking" in message:
        assert "security" in str(info.value)


def test_the_offline_answer_quotes_the_best_fragment_labelled_and_within_budget(
    library: FragmentLibrary,
) -> None:
    text = answer_best_practice(
        library, "what's the best way to do retries with exponential backoff in python", None
    )
    assert text.startswith(OFFLINE_LABEL)
    assert "no model used" in OFFLINE_LABEL and "built-in library" in OFFLINE_LABEL
    assert "sylk://library/errors/retries-backoff" in text
    assert "jitter" in text and "Retry-After" in text
    assert estimate_tokens(text) < 1500 + 400
    tight = answer_best_practice(
        library, "sql injection in python", "sql injection", max_tokens=200
    )
    assert "sylk://library/security/sql-injection" in tight
    assert estimate_tokens(tight) < 200 + 400
    assert "load the URI for the rest" in tight


def test_the_offline_answer_keeps_to_the_language_asked_about(library: FragmentLibrary) -> None:
    python = answer_best_practice(
        library, "what are best practices for error handling in python", "error_handling"
    )
    assert "sylk://library/errors/python-exceptions" in python
    assert "errors/go-errors" not in python and "errors/rust-result" not in python
    # Nor with Python fragments on other topics, nor with one mentioning errors in passing.
    for noise in ("profiling-python", "python-toolchain", "sqlite-tuning"):
        assert noise not in python, noise
    # Without a language every language's fragment may answer; neutral ones always can.
    anywhere = answer_best_practice(library, "error handling best practices", "error_handling")
    assert "errors/go-errors" in anywhere or "errors/rust-result" in anywhere
    golang = answer_best_practice(library, "how should golang code handle errors", None)
    assert "sylk://library/errors/go-errors" in golang and "python-exceptions" not in golang


def test_the_offline_answer_says_when_the_library_has_nothing(library: FragmentLibrary) -> None:
    text = answer_best_practice(
        library, "how do I tune kubernetes autoscaling", "kubernetes", no_model_hint="HINT"
    )
    assert text.startswith(OFFLINE_LABEL)
    assert "nothing on 'kubernetes'" in text and text.rstrip().endswith("HINT")
    default = answer_best_practice(library, "kubernetes helm charts", None)
    assert "ANTHROPIC_API_KEY" in default
