"""The discovery skills through a real gateway, with choices stored in a real archive."""

from __future__ import annotations

import json
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from backend.archive.store import Archive
from backend.knowledge.tool_discovery.discovery import ToolDiscovery
from backend.knowledge.tool_discovery.models import NoPreferenceStoreError
from backend.skills.builtin.catalog import agent_context
from backend.skills.builtin.discovery import discovery_skills
from backend.skills.envelopes import Envelope, ErrorCode
from backend.skills.gateway.gateway import Gateway
from backend.skills.registry import Registry

TS_PROJECT = {
    "package.json": json.dumps({"devDependencies": {"typescript": "^5.6.0"}}),
    "tsconfig.json": "{}",
    "src/app.ts": "export const x: number = 1;\n",
}


@pytest.fixture
def ws(tmp_path: Path) -> Path:
    root = tmp_path / "project"
    for rel, text in TS_PROJECT.items():
        (root / rel).parent.mkdir(parents=True, exist_ok=True)
        (root / rel).write_text(text)
    return root.resolve()


@pytest.fixture
def archive(tmp_path: Path) -> Iterator[Archive]:
    store = Archive(tmp_path / "data")
    yield store
    store.close()


def gateway(discovery: ToolDiscovery | None) -> Gateway:
    registry = Registry()
    registry.register_all(discovery_skills(discovery))
    return Gateway(registry)


async def call(gw: Gateway, agent: str, ws: Path, op: str, **args: Any) -> Envelope:
    return await gw.execute(agent_context(agent, "s1", ws), op, args, dry_run=False)


async def test_ambiguous_typescript_linting_asks_then_remembers_across_restarts(
    ws: Path, archive: Archive, tmp_path: Path
) -> None:
    gw = gateway(ToolDiscovery(archive, path_env=""))
    asked = await call(gw, "engineer", ws, "librarian.tools.discover", category="linter")
    assert asked.ok, asked.error
    assert asked.result["tier"] == 3 and asked.result["requires_user"] is True
    options = {o["tool"]["name"]: o for o in asked.result["user_options"]}
    assert set(options) == {"eslint", "biome", "oxlint", "tsc"}
    assert options["biome"]["pros"] and options["biome"]["cons"]
    assert "Your choice is needed" in asked.result["summary"]
    assert asked.guidance[0].op == "guide.tools.choose"
    assert asked.guidance[0].args == {"language": "typescript", "category": "linter",
                                      "tool": "eslint"}  # fmt: skip

    chosen = await call(gw, "guide", ws, "guide.tools.choose", language="typescript",
                        category="linter", tool="Biome")  # fmt: skip
    assert chosen.ok, chosen.error
    assert chosen.result["tool"]["source"] == "user_choice"
    assert archive.get_preference("tools.typescript.linter")["tool"] == "biome"

    answered = await call(gw, "tester", ws, "librarian.tools.discover", category="linter")
    assert answered.result["requires_user"] is False
    assert [(t["name"], t["source"]) for t in answered.result["tools"]] == [
        ("biome", "user_choice")
    ]
    archive.close()

    reopened = Archive(tmp_path / "data")  # a new engine: new archive, new discovery
    try:
        fresh = gateway(ToolDiscovery(reopened, path_env=""))
        other = await call(fresh, "inspector", ws, "librarian.tools.discover", category="linter")
        tools = other.result["tools"]
        assert [(t["name"], t["run_command"]) for t in tools] == [
            ("biome", "npx @biomejs/biome lint .")
        ]
        assert other.result["decisions"][0]["tier"] == 3
    finally:
        reopened.close()


async def test_project_config_beats_a_stored_preference(ws: Path, archive: Archive) -> None:
    discovery = ToolDiscovery(archive, path_env="")
    discovery.choose("typescript", "linter", "biome")
    (ws / "eslint.config.js").write_text("export default [];\n")
    response = await call(gateway(discovery), "engineer", ws, "librarian.tools.discover",
                          category="linter")  # fmt: skip
    assert [t["name"] for t in response.result["tools"]] == ["eslint"]
    assert response.result["tier"] == 1


async def test_custom_tool_needs_a_run_command(ws: Path, archive: Archive) -> None:
    gw = gateway(ToolDiscovery(archive, path_env=""))
    refused = await call(gw, "guide", ws, "guide.tools.choose", language="typescript",
                         category="linter", tool="standard")  # fmt: skip
    assert refused.code is ErrorCode.VALIDATION_ERROR
    assert refused.error is not None
    assert refused.error.details["reason"] == "not_an_option"
    assert "eslint" in refused.error.details["options"]
    custom = await call(gw, "guide", ws, "guide.tools.choose", language="ts",
                        category="lint", tool="standard", run_command="npx standard")  # fmt: skip
    assert custom.ok and custom.result["tool"]["run_command"] == "npx standard"
    assert archive.get_preference("tools.typescript.linter")["custom"] is True


async def test_recommend_and_typed_errors(ws: Path, archive: Archive) -> None:
    gw = gateway(ToolDiscovery(archive, path_env=""))
    rec = await call(gw, "academic", ws, "academic.tools.recommend", language="python",
                     category="type_checker")  # fmt: skip
    [item] = rec.result["recommendations"]
    assert item["satisfactory"] is False and item["tool"]["name"] == "mypy"
    assert {o["tool"]["name"] for o in item["options"]} == {"mypy", "pyright"}
    everything = await call(gw, "academic", ws, "academic.tools.recommend", language="go")
    assert len(everything.result["recommendations"]) == 5

    cases = [
        ("academic.tools.recommend", {"language": "cobol"}, "unknown_language"),
        ("academic.tools.recommend", {"language": "go", "category": "bundler"},
         "unknown_category"),
        ("librarian.tools.discover", {"category": "compiler"}, "unknown_category"),
        ("librarian.tools.discover", {"languages": ["klingon"]}, "unknown_language"),
        ("guide.tools.choose", {"language": "cobol", "category": "linter", "tool": "x"},
         "unknown_language"),
    ]  # fmt: skip
    for op, args, reason in cases:
        agent = op.split(".")[0]
        failed = await call(gw, agent, ws, op, **args)
        assert failed.code is ErrorCode.VALIDATION_ERROR, (op, args)
        assert failed.error is not None and failed.error.details["reason"] == reason

    escaped = await call(gw, "engineer", ws, "librarian.tools.discover", path="../..")
    assert escaped.code is ErrorCode.ACCESS_DENIED
    denied = await call(gw, "inspector", ws, "guide.tools.choose", language="go",
                        category="linter", tool="golangci-lint")  # fmt: skip
    assert denied.code is ErrorCode.ACCESS_DENIED  # choosing is a write


async def test_without_a_service_the_ops_are_not_available(ws: Path) -> None:
    gw = gateway(None)
    for op, args in [("librarian.tools.discover", {}),
                     ("academic.tools.recommend", {"language": "go"})]:  # fmt: skip
        failed = await call(gw, op.split(".")[0], ws, op, **args)
        assert failed.code is ErrorCode.INTERNAL
        assert failed.error is not None and failed.error.details["reason"] == "not_available"


async def test_choose_without_an_archive(ws: Path) -> None:
    discovery = ToolDiscovery(None, path_env="")
    with pytest.raises(NoPreferenceStoreError):
        discovery.choose("go", "linter", "golangci-lint")
    failed = await call(gateway(discovery), "guide", ws, "guide.tools.choose", language="go",
                        category="linter", tool="golangci-lint")  # fmt: skip
    assert failed.code is ErrorCode.INTERNAL
    assert failed.error is not None and failed.error.details["reason"] == "not_available"


async def test_tools_command_without_a_dialog_says_how_to_choose(
    data_dir: Path, workspace: Path
) -> None:
    """`sylk run "/tools"` has nobody to ask: the answer names the command that decides."""
    from backend.engine import Engine, EngineConfig

    (workspace / "package.json").write_text('{"devDependencies": {"typescript": "5.4.0"}}')
    (workspace / "index.ts").write_text("export const a = 1;\n")
    engine = Engine(EngineConfig(data_dir=data_dir, workspace=workspace, watch_files=False))
    try:
        session = await engine.ensure_session()
        asked = await engine.submit(session.id, "/tools linter")
        text = str(asked[-1].payload["text"])
        assert "Your choice is needed" in text
        assert "/tools choose typescript linter eslint" in text
        chose = await engine.submit(session.id, "/tools choose typescript linter oxlint")
        assert "Stored your choice: oxlint" in str(chose[-1].payload["text"])
        again = await engine.submit(session.id, "/tools linter")
        assert "oxlint" in str(again[-1].payload["text"])
        assert "Your choice is needed" not in str(again[-1].payload["text"])
        wrong = await engine.submit(session.id, "/tools choose typescript linter notepad")
        assert wrong[-1].payload.get("error")  # a typed error, shown as such
    finally:
        await engine.aclose()
