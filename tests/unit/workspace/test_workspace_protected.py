"""Sylk's own data inside a workspace is never read, listed, searched or written by an agent.

The engine protects its data dir (the archive, the log) and its config file; here
both lie inside the workspace, as when a user keeps Sylk's data in the project.
Every op is refused with ACCESS_DENIED (reason ``sylk_private``), through links
and after a rename too; listings, walks and searches of a parent leave them out.
"""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from backend.engine.config import EngineConfig
from backend.skills.builtin.catalog import agent_context, build_gateway
from backend.skills.envelopes import ErrorCode
from backend.skills.gateway.gateway import Gateway
from backend.skills.models import SkillContext
from backend.workspace.files import ProtectedPathError, Workspace

SECRET = "sk-ant-SECRET-KEY-0123"


@pytest.fixture
def root(tmp_path: Path) -> Path:
    ws = tmp_path / "project"
    (ws / "sylk-data").mkdir(parents=True)
    (ws / "sylk-data" / "sylk.log").write_text(f"provider key {SECRET}\n")
    (ws / "sylk-data" / "notes.txt").write_text(f"{SECRET}\n")
    (ws / "sylk.toml").write_text(f'[provider]\napi_key = "{SECRET}"\n')
    (ws / "src").mkdir()
    (ws / "src" / "app.py").write_text("def main():\n    return 1\n")
    (ws / "log-link").symlink_to("sylk-data/sylk.log")
    (ws / "data-link").symlink_to("sylk-data")
    return ws.resolve()


@pytest.fixture
def protected(root: Path) -> tuple[Path, ...]:
    config = EngineConfig(
        data_dir=root / "sylk-data", workspace=root, config_file=root / "sylk.toml"
    )
    return config.confinement(root).protected


@pytest.fixture
def ws(root: Path, protected: tuple[Path, ...]) -> Iterator[Workspace]:
    with Workspace(root, protected=protected) as workspace:
        yield workspace


PRIVATE = ["sylk-data/sylk.log", "sylk.toml", "log-link", "data-link/notes.txt", "sylk-data"]


@pytest.mark.parametrize("path", PRIVATE)
def test_every_file_op_refuses_sylk_data(ws: Workspace, path: str) -> None:
    for op in (ws.resolve, ws.read_text, ws.read_bytes, ws.stat, ws.resolve_for_write):
        with pytest.raises(ProtectedPathError, match="Sylk's own data") as caught:
            op(path)
        assert caught.value.failure_word() == "sylk_private"
    with pytest.raises(ProtectedPathError):
        ws.write_text(path, "pwned")
    with pytest.raises(ProtectedPathError):
        ws.write_text(f"{path}/new/dir/file.txt", "pwned")


def test_listings_and_walks_leave_sylk_data_out(ws: Workspace, root: Path) -> None:
    assert ws.list_dir(".") == ["data-link", "log-link", "src/"]
    with pytest.raises(ProtectedPathError):
        ws.list_dir("sylk-data")
    with pytest.raises(ProtectedPathError):
        ws.list_dir("data-link")
    assert list(ws.walk_files(".")) == ["src/app.py"]  # the links lead into it: left out
    assert sorted(p.name for p in (root / "sylk-data").iterdir()) == ["notes.txt", "sylk.log"]


def test_a_renamed_data_dir_is_still_refused_by_its_identity(
    root: Path, protected: tuple[Path, ...]
) -> None:
    with Workspace(root, protected=protected) as ws:
        (root / "sylk-data").rename(root / "innocent")  # a command renames it meanwhile
        with pytest.raises(ProtectedPathError):
            ws.read_text("innocent/notes.txt")
        with pytest.raises(ProtectedPathError):
            ws.write_text("innocent/planted.txt", "x")
        assert "innocent/" not in ws.list_dir(".")
    assert not (root / "innocent" / "planted.txt").exists()


@pytest.fixture
def gateway() -> Gateway:
    return build_gateway()


def context(root: Path, protected: tuple[Path, ...], agent: str) -> SkillContext:
    from backend.workspace.confinement import Confinement

    return agent_context(agent, "s1", root, confinement=Confinement(protected=protected))


async def test_every_op_refuses_or_omits_sylk_data(
    gateway: Gateway, root: Path, protected: tuple[Path, ...]
) -> None:
    reader = context(root, protected, "librarian")
    writer = context(root, protected, "engineer")
    refusals = 0

    async def refused(ctx: SkillContext, op: str, **args: Any) -> None:
        nonlocal refusals
        env = await gateway.execute(ctx, op, args, dry_run=args.pop("dry_run", None))
        assert env.code is ErrorCode.ACCESS_DENIED and env.error, (op, args, env)
        assert env.error.details["reason"] == "sylk_private", env.error
        assert SECRET not in env.model_dump_json()
        refusals += 1

    for path in PRIVATE:
        await refused(reader, "librarian.file.read", path=path)
        await refused(reader, "librarian.code.dependencies", path=path)
        await refused(reader, "librarian.code.context", symbol="x", path=path)
        await refused(reader, "librarian.file.list", path=path)
        for dry_run in (True, False):
            await refused(writer, "engineer.file.write", path=path, content="x", dry_run=dry_run)
            await refused(writer, "engineer.file.edit", path=path, old_content="key",
                          new_content="x", dry_run=dry_run)  # fmt: skip
    assert refusals == len(PRIVATE) * 8

    async def result(op: str, **args: Any) -> dict[str, Any]:
        env = await gateway.execute(reader, op, args)
        assert env.ok, env.error
        assert SECRET not in env.model_dump_json()
        return dict(env.result)

    assert (await result("librarian.file.list"))["files"] == ["src/app.py"]
    searched = await result("librarian.code.search", query="SECRET", regex=True)
    assert searched["hits"] == [] and searched["files_scanned"] == 1
    tree = (await result("librarian.code.structure", depth=3))["tree"]
    assert not any("sylk" in line or "link" in line for line in tree)
    assert (await result("librarian.code.context", symbol="main"))["definitions"]
    assert (root / "sylk.toml").read_text() == f'[provider]\napi_key = "{SECRET}"\n'
