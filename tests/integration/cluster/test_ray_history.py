"""What a Ray pipeline brings back besides its edit: its history, and nothing else.

A repository with no .gitignore whose testers run a real pytest on one package: the
bytecode and caches the checks leave never reach a base or a result, so both nodes land
(four in 200 used to conflict on ``pkg/__pycache__/…pyc``). And the pipeline's
transcript, agent steps and chronicle file records, written on the worker to a data dir
that is then deleted, land in the driver's archive under the user's session: the same
kinds of rows a local run of the same script writes, announced live as its messages
are, found by the chronicle's transcript search, stored once, there after a restart.
"""

from __future__ import annotations

from collections import Counter
from pathlib import Path
from typing import Any

import pytest
from sqlalchemy import select

from backend.archive.schema import CHRONICLE_FILES, STEPS, TRANSCRIPT
from backend.cluster.pipeline_history import harvest, store_write
from backend.events import MessageAppended, PipelineMoved
from backend.orchestration import DagStatus
from tests.integration.cluster.ray_runs import RayRun, appends, git, refs, script

pytest.importorskip("ray")
pytestmark = [pytest.mark.slow, pytest.mark.xdist_group("ray")]
LEFTOVER_MARKS = ("__pycache__", ".pyc", ".pytest_cache", ".ruff_cache", ".mypy_cache")
PYPROJECT = (
    '[project]\nname = "fx"\nversion = "0"\n\n[tool.pytest.ini_options]\npythonpath = ["."]\n'
)


def project(root: Path) -> Path:
    """A package with two modules and a test each, committed; no .gitignore at all."""
    (root / "pkg").mkdir()
    (root / "tests").mkdir()
    (root / "pyproject.toml").write_text(PYPROJECT)
    (root / "pkg" / "__init__.py").write_text("")
    for name in ("m1", "m2"):
        (root / "pkg" / f"{name}.py").write_text("VALUE = 1\n")
        (root / "tests" / f"test_{name}.py").write_text(
            f"from pkg.{name} import VALUE\n\n\ndef test_value() -> None:\n    assert VALUE >= 0\n"
        )
    git(root, "init", "-q", "-b", "main")
    git(root, "add", "-A")
    git(root, "commit", "-q", "-m", "start")
    return root


async def test_a_repository_without_gitignore_lands_both_results_and_no_cache_file(
    ray_head: None, tmp_path: Path, monkeypatch: pytest.MonkeyPatch, data_dir: Path,
    workspace: Path,
) -> None:  # fmt: skip
    root = project(workspace)
    edit = {n: appends(f"pkg/{n}.py", "VALUE = 1\n", "EXTRA = 2\n") for n in ("m1", "m2")}
    script(tmp_path / "s.json", monkeypatch, {"e1": edit["m1"], "e2": edit["m2"]})
    run = RayRun(data_dir, root)
    try:
        sid = await run.approved()
        outcome = await run.engine.wait_dag(sid, "p1")
        assert outcome is not None and outcome.status is DagStatus.PASSED, outcome
        tested = [e.view.get("tester") or [{}] for e in run.events
                  if isinstance(e, PipelineMoved) and e.state == "completed"]  # fmt: skip
        assert len(tested) == 2 and all(t[-1].get("tests_run", 0) > 0 for t in tested), tested
        for name in ("m1", "m2"):
            assert (root / "pkg" / f"{name}.py").read_text() == "VALUE = 1\nEXTRA = 2\n"
        for ref in [*refs(root, "refs/sylk/results/"), *refs(root, "refs/sylk/base/")]:
            names = git(root, "ls-tree", "-r", "--name-only", ref).split()
            assert not [n for n in names if any(m in n for m in LEFTOVER_MARKS)], (ref, names)
        assert len(refs(root, "refs/sylk/applied/")) == 2
        assert not (root / ".gitignore").exists()
    finally:
        await run.engine.aclose()


def kinds(run: RayRun, sid: str) -> dict[str, Counter[tuple[Any, ...]]]:
    """The session's rows by kind: transcript (type, source), steps (role, kind), files."""

    def read(conn: Any) -> dict[str, Counter[tuple[Any, ...]]]:
        def count(*cols: Any) -> Counter[tuple[Any, ...]]:
            table = cols[0].table
            rows = conn.execute(select(*cols).where(table.c.session_id == sid))
            return Counter(tuple(r) for r in rows)

        return {
            "transcript": count(TRANSCRIPT.c.type, TRANSCRIPT.c.source),
            "steps": count(STEPS.c.role, STEPS.c.kind),
            "files": count(CHRONICLE_FILES.c.path, CHRONICLE_FILES.c.operation),
        }

    found: dict[str, Counter[tuple[Any, ...]]] = run.parts.archive.read(read)
    return found


def appended(run: RayRun, sid: str) -> Counter[tuple[str, str]]:
    """The messages announced to front ends (the TUI shows these as they come)."""
    return Counter((e.message.type.value, e.message.source) for e in run.events
                   if isinstance(e, MessageAppended) and e.session_id == sid)  # fmt: skip


async def planned(run: RayRun) -> str:
    sid = await run.approved()
    outcome = await run.engine.wait_dag(sid, "p1")
    assert outcome is not None and outcome.status is DagStatus.PASSED, outcome
    return sid


async def test_a_ray_pipelines_history_lands_in_the_users_session_as_a_local_runs_does(
    ray_head: None, tmp_path: Path, monkeypatch: pytest.MonkeyPatch, repo: Path,
) -> None:  # fmt: skip
    script(tmp_path / "s.json", monkeypatch, {
        "e1": appends("a.txt", "one\n", "from e1\n"), "e2": appends("b.txt", "two\n", "from e2\n"),
    })  # fmt: skip
    local_repo = tmp_path / "local"
    git(tmp_path, "clone", "-q", str(repo), str(local_repo))
    (tmp_path / "local-data").mkdir()
    local = RayRun(tmp_path / "local-data", local_repo, backend="local")
    try:
        local_sid = await planned(local)
        expected = kinds(local, local_sid)
        expected_live = appended(local, local_sid)
    finally:
        await local.engine.aclose()
    (tmp_path / "ray-data").mkdir()
    run = RayRun(tmp_path / "ray-data", repo)
    try:
        sid = await planned(run)
        stored = kinds(run, sid)
        # The engineer's, inspector's and tester's rows: the kinds and counts a local run keeps.
        assert stored == expected, (stored, expected)
        assert any(role == "engineer" for role, _ in stored["steps"])
        assert appended(run, sid) == expected_live  # shown live, as a local run's are
        chronicle = run.parts.knowledge.chronicle
        hits = await chronicle.search_transcript("Appended", session_ids=[sid])
        assert {h.session_id for h in hits} == {sid} and hits, hits
        # The same history delivered again (a duplicate result, a store after a restart).
        twice = await run.parts.archive.aread(lambda conn: harvest(conn, sid))
        assert await run.parts.archive.awrite(store_write(twice, sid)) == 0
        assert kinds(run, sid) == stored
    finally:
        await run.engine.aclose()
    again = RayRun(tmp_path / "ray-data", repo)  # a restart reads them from the archive
    try:
        assert kinds(again, sid) == stored
        texts = [m for m in await again.engine.transcript(sid)]
        assert len(texts) == sum(stored["transcript"].values())
    finally:
        await again.engine.aclose()
