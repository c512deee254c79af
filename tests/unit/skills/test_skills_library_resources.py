"""Library fragments as search resources: found by search, read by their execute_with, kept
in step with the library's reloads."""

from __future__ import annotations

import threading
from collections.abc import Iterator
from pathlib import Path

import pytest

from backend.knowledge.fragments.fragment import Fragment
from backend.knowledge.fragments.library import FragmentLibrary
from backend.skills.builtin.catalog import KnowledgeWiring, agent_context, build_gateway
from backend.skills.builtin.library_resources import LibraryResources
from backend.skills.envelopes import ErrorCode
from backend.skills.gateway.gateway import Gateway
from backend.skills.models import SkillContext
from backend.skills.registry import Registry, UnknownOpError

CANARY = "sylk://library/deploy/canary-releases"
ROLLBACK = "sylk://library/deploy/rollbacks"


def write_fragment(folder: Path, name: str, title: str, tags: str, body: str) -> None:
    (folder / "deploy").mkdir(parents=True, exist_ok=True)
    (folder / "deploy" / f"{name}.md").write_text(
        f"---\ntags: [{tags}]\ncapabilities: [Guidance on {tags}]\n"
        f"useWhen: [Working with {tags}]\n---\n\n# {title}\n\n{body}\n"
    )


@pytest.fixture
def folder(tmp_path: Path) -> Path:
    path = tmp_path / "team-library"
    write_fragment(path, "canary-releases", "Canary releases", "canary, deploy",
                   "Ship to one percent of traffic first and watch the error rate.")  # fmt: skip
    return path


@pytest.fixture
def library(folder: Path) -> Iterator[FragmentLibrary]:
    lib = FragmentLibrary([folder], include_builtin=False, watch=False)
    yield lib
    lib.close()


def ctx() -> SkillContext:
    return agent_context("engineer", "s1", Path("."))


def resource_hits(gateway: Gateway, query: str) -> list[str]:
    hits = gateway.search(ctx(), query).result["hits"]
    return [h["op"] for h in hits if h.get("kind") == "resource"]


async def test_a_best_practice_search_returns_the_fragment_and_reads_it() -> None:
    gateway = build_gateway(knowledge=KnowledgeWiring(library=FragmentLibrary(watch=False)))
    env = gateway.search(ctx(), "retry with exponential backoff and jitter", limit=5)
    hit = next(h for h in env.result["hits"] if h.get("kind") == "resource")
    assert hit["op"] == "sylk://library/errors/retries-backoff"
    assert hit["execute_with"] == {"op": "academic.library.get", "args": {"ref": hit["op"]}}
    assert "academic" in env.result["domains"]
    described = [*env.result["hits"], *env.result.get("entry_points", [])]
    doors = [h["op"] for h in described if h.get("entry_point")]
    assert "academic.library.query" in doors  # the domain's entry point is always offered
    read = await gateway.execute(ctx(), **hit["execute_with"])
    assert read.ok and read.result["uri"] == hit["op"]
    assert "backoff" in read.result["content"].lower()
    described = gateway.describe(ctx(), hit["op"]).result
    assert described["read_with"] == hit["execute_with"]


def test_resources_follow_the_library_as_it_reloads(library: FragmentLibrary, folder: Path) -> None:
    gateway = build_gateway(knowledge=KnowledgeWiring(library=library))
    assert resource_hits(gateway, "canary release traffic") == [CANARY]
    body = "Keep the previous build ready and roll back on a failed health check."
    write_fragment(folder, "rollbacks", "Rollbacks", "rollback, deploy", body)
    library.reload()
    assert resource_hits(gateway, "roll back a failed deploy")[0] == ROLLBACK
    (folder / "deploy" / "canary-releases.md").unlink()
    library.reload()
    assert CANARY not in resource_hits(gateway, "canary release traffic")
    assert gateway.describe(ctx(), CANARY).code is ErrorCode.NOT_FOUND


def test_a_reload_on_another_thread_lands_on_the_gateways_next_search(
    library: FragmentLibrary, folder: Path
) -> None:
    gateway = build_gateway(knowledge=KnowledgeWiring(library=library))
    write_fragment(folder, "rollbacks", "Rollbacks", "rollback, deploy", "Roll back quickly.")
    worker = threading.Thread(target=library.reload)
    worker.start()
    worker.join()
    # The registry is the gateway's: a reload elsewhere waits for the gateway to apply it.
    assert gateway.registry.resource(ROLLBACK) is None
    assert ROLLBACK in resource_hits(gateway, "rollback")
    assert gateway.registry.resource(ROLLBACK) is not None


def test_library_listeners_hear_each_reload_until_they_unsubscribe(
    library: FragmentLibrary, folder: Path
) -> None:
    heard: list[list[str]] = []

    def listen(fragments: list[Fragment]) -> None:
        heard.append([f.uri for f in fragments])

    unsubscribe = library.subscribe(listen)
    library.reload()
    write_fragment(folder, "rollbacks", "Rollbacks", "rollback", "Roll back quickly.")
    library.reload()
    unsubscribe()
    library.reload()
    assert heard == [[CANARY], [CANARY, ROLLBACK]]


def test_closing_takes_the_fragments_back_out(library: FragmentLibrary) -> None:
    gateway = build_gateway()  # no library wired: the read op answers not-available
    mirror = LibraryResources(gateway.registry, library)
    assert mirror.uris == [CANARY] and gateway.registry.resource(CANARY) is not None
    mirror.close()
    assert gateway.registry.resources() == []
    library.reload()  # no longer followed
    assert gateway.registry.resources() == []


def test_the_read_op_must_exist(library: FragmentLibrary) -> None:
    with pytest.raises(UnknownOpError, match=r"academic\.library\.get"):
        LibraryResources(Registry(), library)
