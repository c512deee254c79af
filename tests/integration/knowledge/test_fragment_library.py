"""The library with real user folders and a real watcher, and the Academic's skills over it."""

from __future__ import annotations

import logging
import os
from collections.abc import Iterator
from pathlib import Path

import pytest

from backend.knowledge.fragments.library import FragmentLibrary
from backend.knowledge.fragments.models import FragmentNotFoundError
from backend.skills.builtin.catalog import KnowledgeWiring, agent_context, build_gateway
from backend.skills.envelopes import ErrorCode
from backend.skills.gateway.gateway import Gateway
from backend.skills.models import SkillContext
from tests.support.polling import until_sync


def fragment(tags: str, body: str, **meta: str) -> str:
    extra = "".join(f"{k}: {v}\n" for k, v in meta.items())
    return (
        f"---\ntags: [{tags}]\ncapabilities: [Guidance on {tags}]\n"
        f"useWhen: [Working with {tags}]\n{extra}---\n\n# {tags.title()}\n\n{body}\n"
    )


@pytest.fixture
def folder(tmp_path: Path) -> Path:
    path = tmp_path / "team-library"
    (path / "deploy").mkdir(parents=True)
    return path


@pytest.fixture
def library(folder: Path) -> Iterator[FragmentLibrary]:
    lib = FragmentLibrary([folder])
    yield lib
    lib.close()


def uris(lib: FragmentLibrary, query: str) -> list[str]:
    return [m.uri for m in lib.query(query, max_results=50).matches]


def test_a_written_fragment_shows_up_changes_and_disappears(
    library: FragmentLibrary, folder: Path
) -> None:
    assert library.watching
    uri = "sylk://library/deploy/canary"
    assert uri not in uris(library, "canary rollout")
    path = folder / "deploy" / "canary.md"
    path.write_text(fragment("canary, rollout", "Shift 1% of traffic first."), encoding="utf-8")
    until_sync(lambda: uri in uris(library, "canary rollout"))
    assert "Shift 1% of traffic first." in library.get(uri).body

    path.write_text(fragment("canary, rollout", "Shift 5% of traffic first."), encoding="utf-8")
    until_sync(lambda: "5%" in library.get(uri).body)

    path.unlink()
    until_sync(lambda: uri not in uris(library, "canary rollout"))
    with pytest.raises(FragmentNotFoundError, match="no fragment"):
        library.get(uri)


def test_a_malformed_fragment_is_skipped_with_a_warning_naming_it(
    library: FragmentLibrary, folder: Path, caplog: pytest.LogCaptureFixture
) -> None:
    bad = folder / "deploy" / "broken.md"
    with caplog.at_level(logging.WARNING, logger="sylk.knowledge.library"):
        bad.write_text("---\ntags: [unclosed\n---\nbody\n", encoding="utf-8")
        until_sync(lambda: any(w.path == bad for w in library.warnings))
    warning = next(w for w in library.warnings if w.path == bad)
    assert "invalid YAML" in warning.problem and str(bad) in str(warning)
    assert any(str(bad) in r.getMessage() for r in caplog.records)
    # The rest of the library still answers.
    assert library.query("sql injection").matches[0].id == "sql-injection"
    bad.write_text(fragment("blue, green", "Switch traffic at once."), encoding="utf-8")
    until_sync(lambda: not library.warnings)
    assert "sylk://library/deploy/broken" in uris(library, "blue green")


def test_a_user_fragment_overrides_the_builtin_with_the_same_uri(tmp_path: Path) -> None:
    (tmp_path / "errors").mkdir()
    (tmp_path / "errors" / "retries-backoff.md").write_text(
        fragment("retries", "Our team retries exactly twice."), encoding="utf-8"
    )
    with FragmentLibrary([tmp_path], watch=False) as lib:
        frag = lib.get("sylk://library/errors/retries-backoff")
        assert "exactly twice" in frag.body and not frag.builtin


def test_links_out_of_the_folder_and_missing_folders_are_warned_about(tmp_path: Path) -> None:
    outside = tmp_path / "outside.md"
    outside.write_text(fragment("secret", "Not yours."), encoding="utf-8")
    folder = tmp_path / "lib"
    folder.mkdir()
    os.symlink(outside, folder / "sneaky.md")
    (folder / "README.md").write_text("# About this folder\n", encoding="utf-8")
    with FragmentLibrary([folder, tmp_path / "nope"], watch=False) as lib:
        problems = {w.path.name: w.problem for w in lib.warnings}
        assert "outside the library folder" in problems["sneaky.md"]
        assert problems["nope"] == "the library folder does not exist"
        assert "README.md" not in problems
        assert all(f.builtin for f in lib.fragments())


def test_changes_are_still_seen_when_the_watcher_is_gone(
    library: FragmentLibrary, folder: Path
) -> None:
    library.close()
    assert not library.watching
    (folder / "deploy" / "late.md").write_text(fragment("dark, launch", "Flag it."), "utf-8")
    assert "sylk://library/deploy/late" in uris(library, "dark launch")


# -- skills --------------------------------------------------------------------------


@pytest.fixture
def gateway(library: FragmentLibrary) -> Gateway:
    return build_gateway(knowledge=KnowledgeWiring(library=library))


def ctx(workspace: Path) -> SkillContext:
    return agent_context("academic", "s1", workspace)


async def test_library_query_and_get_through_the_gateway(gateway: Gateway, workspace: Path) -> None:
    env = await gateway.execute(
        ctx(workspace), "academic.library.query", {"query": "path traversal symlinks"}
    )
    assert env.ok, env.error
    top = env.result["matches"][0]
    assert top["uri"] == "sylk://library/security/path-traversal"
    got = await gateway.execute(ctx(workspace), "academic.library.get", {"ref": top["uri"]})
    assert got.ok and "is_relative_to" in got.result["content"]
    assert got.result["source"] == "built-in"

    full = await gateway.execute(
        ctx(workspace),
        "academic.library.query",
        {"query": "rust errors", "mode": "full", "max_tokens": 500, "category": "errors"},
    )
    assert full.ok and full.result["matches"][0]["id"] == "rust-result"
    assert "thiserror" in full.result["text"]


async def test_library_errors_are_typed(gateway: Gateway, workspace: Path) -> None:
    missing = await gateway.execute(ctx(workspace), "academic.library.get", {"ref": "nope-x"})
    assert missing.code is ErrorCode.NOT_FOUND
    bad = await gateway.execute(
        ctx(workspace), "academic.library.query", {"query": "x", "category": "cooking"}
    )
    assert bad.code is ErrorCode.VALIDATION_ERROR and "cooking" in bad.error.message  # type: ignore[union-attr]
    mode = await gateway.execute(
        ctx(workspace), "academic.library.query", {"query": "x", "mode": "all"}
    )
    assert mode.code is ErrorCode.VALIDATION_ERROR


async def test_best_practices_answer_from_the_library(gateway: Gateway, workspace: Path) -> None:
    env = await gateway.execute(
        ctx(workspace), "academic.research.best_practices", {"topic": "shell injection subprocess"}
    )
    assert env.ok, env.error
    assert env.result["matches"][0]["uri"] == "sylk://library/security/shell-injection"
    assert "shlex.quote" in env.result["text"] and "local fragment library" in env.result["source"]
    none = await gateway.execute(
        ctx(workspace), "academic.research.best_practices", {"topic": "kubernetes helm"}
    )
    assert none.code is ErrorCode.NOT_FOUND
    assert "security" in none.error.details["categories"]  # type: ignore[union-attr]


async def test_research_topic_falls_back_to_the_library_and_says_so(
    gateway: Gateway, workspace: Path
) -> None:
    env = await gateway.execute(
        ctx(workspace), "academic.research.topic", {"topic": "property based testing"}
    )
    assert env.ok, env.error
    assert "local fragment library" in env.result["source"]
    assert any("web research is not available" in w for w in env.meta.warnings)
    nothing = await gateway.execute(ctx(workspace), "academic.research.topic", {"topic": "CRDTs"})
    assert nothing.code is ErrorCode.INTERNAL
    assert nothing.error.details["reason"] == "not_available"  # type: ignore[union-attr]
    compare = await gateway.execute(
        ctx(workspace), "academic.research.compare", {"options": ["a", "b"]}
    )
    assert compare.error.details["reason"] == "not_available"  # type: ignore[union-attr]


async def test_without_a_library_the_ops_are_declared_but_not_available(workspace: Path) -> None:
    gateway = build_gateway()
    for op, args in (
        ("academic.library.query", {"query": "retries"}),
        ("academic.library.get", {"ref": "retries-backoff"}),
        ("academic.research.best_practices", {"topic": "retries"}),
        ("academic.research.topic", {"topic": "retries"}),
    ):
        env = await gateway.execute(ctx(workspace), op, args)
        assert env.error is not None and env.error.details["reason"] == "not_available", op
