"""The Librarian's ops answered from the code index (real files, real index, real watcher)."""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator
from pathlib import Path
from typing import Any

import pytest

from backend.knowledge.code.hub import CodeKnowledgeHub
from backend.skills.builtin.catalog import KnowledgeWiring, agent_context, build_gateway
from backend.skills.envelopes import Envelope, ErrorCode
from backend.skills.gateway.gateway import Gateway
from tests.integration.skills.test_skills_workspace import FILES
from tests.support.polling import until

MORE = {
    "web/main.ts": "import { handleLogin } from './app';\nhandleLogin('x');\n",
    "pkg/errors.py": "class RouteError(Exception):\n    pass\n\n\n"
    "def check():\n    try:\n        pass\n    except RouteError:\n        raise\n",
    "tests/test_core.py": "def test_route():\n    assert True\n",
    "svc/main.go": "package main\n\nfunc handleRequest() {}\n",
}


@pytest.fixture
def ws(workspace: Path) -> Path:
    for rel, text in {**FILES, **MORE}.items():
        (workspace / rel).parent.mkdir(parents=True, exist_ok=True)
        (workspace / rel).write_text(text)
    return workspace.resolve()


@pytest.fixture
async def hub(tmp_path: Path) -> AsyncIterator[CodeKnowledgeHub]:
    hub = CodeKnowledgeHub(tmp_path / "data")
    yield hub
    await hub.aclose()


@pytest.fixture
async def gateway(hub: CodeKnowledgeHub, ws: Path) -> Gateway:
    knowledge = await hub.get(ws)
    await asyncio.wait_for(knowledge.wait_ready(), 20)
    return build_gateway(knowledge=KnowledgeWiring(code=hub))


async def run(gw: Gateway, ws: Path, op: str, **kw: Any) -> Envelope:
    return await gw.execute(agent_context("librarian", "s1", ws), op, kw)


async def test_search_gives_definitions_and_ranked_hits(gateway: Gateway, ws: Path) -> None:
    found = await run(gateway, ws, "librarian.code.search", query="Router")
    assert found.ok and found.result["source"] == "code index"
    assert [(d["path"], d["line"], d["kind"]) for d in found.result["definitions"]][:1] == [
        ("pkg/core.py", 4, "class")
    ]
    assert {h["path"] for h in found.result["hits"]} >= {"pkg/core.py", "pkg/cli.py"}
    assert not any(h["path"].startswith(("build/", "node_modules/")) for h in found.result["hits"])
    only_types = await run(gateway, ws, "librarian.code.search", query="rout", symbol_type="type")
    assert {d["name"] for d in only_types.result["definitions"]} == {"Router", "RouteError"}
    assert only_types.result["hits"] == []
    go = await run(gateway, ws, "librarian.code.search", query="handle", file_glob="*.go")
    assert [d["name"] for d in go.result["definitions"]] == ["handleRequest"]
    assert found.guidance[0].op == "librarian.file.read"
    # A piece of a word is not in the word index: the plain scan still finds it.
    inner = await run(gateway, ws, "librarian.code.search", query="ser: str")
    assert inner.result["hits"][0]["path"] == "web/app.ts"
    part = await run(gateway, ws, "librarian.code.search", query="ndleLog")
    assert [d["name"] for d in part.result["definitions"]] == ["handleLogin"]


async def test_context_dependencies_structure_and_patterns(gateway: Gateway, ws: Path) -> None:
    ctx = await run(gateway, ws, "librarian.code.context", symbol="Router")
    assert ctx.result["definitions"][0]["code"].startswith("class Router:\n    def route")
    deps = await run(gateway, ws, "librarian.code.dependencies", path="web/app.ts")
    assert deps.ok and deps.result["imported_by"] == ["web/main.ts"]  # TypeScript, both ways
    py = await run(gateway, ws, "librarian.code.dependencies", path="pkg/core.py")
    assert py.result["imported_by"] == ["pkg/cli.py"]
    outline = await run(gateway, ws, "librarian.code.structure", path="pkg", depth=1)
    core = next(o for o in outline.result["outline"] if o["path"] == "pkg/core.py")
    assert "4: class Router" in core["symbols"] and core["imports"] == ["os"]
    patterns = await run(gateway, ws, "librarian.code.patterns", topic="error handling")
    report = patterns.result
    assert report["naming"]["python"]["types"] == {"PascalCase": 2}
    assert {"name": "RouteError", "count": 1} in report["error_types"]
    assert report["tests"]["file_naming"] == {"test_*.py": 1}
    assert any(e["path"] == "pkg/errors.py" for e in report["examples"])


async def test_bad_paths_are_refused(gateway: Gateway, ws: Path, tmp_path: Path) -> None:
    outside = await run(gateway, ws, "librarian.code.dependencies", path="../../etc/passwd")
    assert not outside.ok and outside.error is not None
    assert outside.error.code in (ErrorCode.ACCESS_DENIED, ErrorCode.VALIDATION_ERROR)
    (ws / "escape").symlink_to(tmp_path)
    linked = await run(gateway, ws, "librarian.code.patterns", path="escape")
    assert not linked.ok and linked.error is not None
    assert linked.error.code in (ErrorCode.ACCESS_DENIED, ErrorCode.VALIDATION_ERROR)
    missing = await run(gateway, ws, "librarian.code.dependencies", path="nope.py")
    assert missing.error is not None and missing.error.code is ErrorCode.NOT_FOUND


async def test_an_edit_shows_in_the_next_search(gateway: Gateway, ws: Path) -> None:
    (ws / "pkg" / "core.py").write_text("\n\nclass Router:\n    pass\n")

    async def router_on_line_3() -> bool:
        found = await run(gateway, ws, "librarian.code.search", query="Router", symbol_type="type")
        lines = [d["line"] for d in found.result["definitions"] if d["path"] == "pkg/core.py"]
        return lines == [3]

    await until(router_on_line_3, what="the search to show Router on its new line")
