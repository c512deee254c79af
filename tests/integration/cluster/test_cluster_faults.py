"""What goes wrong around the Ray backend, each a typed error and nothing half done, shown
without a Ray head: Ray not installed (a ConfigError naming the extra, not a traceback),
a cluster that does not answer (the node fails within the connect limit, the process
ends, the session goes on), a worker's result that no longer applies (the files named,
the working tree untouched), and a session in a linked worktree (``.git`` a file)."""

from __future__ import annotations

import json
import os
import socket
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

from backend.cluster.errors import ApplyConflictError, NotARepositoryError
from backend.cluster.git_handoff import (
    apply_result,
    commit_and_push,
    fetch_checkout,
    session_repository,
    snapshot_base,
)
from backend.errors import ErrorKind

ROOT = Path(__file__).resolve().parents[3]
PYTHON = sys.executable


def git(repo: Path, *args: str) -> str:
    done = subprocess.run(["git", "-c", "user.name=t", "-c", "user.email=t@t", *args],
                          cwd=repo, check=True, capture_output=True, text=True)  # fmt: skip
    return done.stdout


def committed(repo: Path, files: dict[str, str]) -> Path:
    repo.mkdir(parents=True, exist_ok=True)
    git(repo, "init", "-q", "-b", "main")
    for name, text in files.items():
        (repo / name).write_text(text)
    git(repo, "add", "-A")
    git(repo, "commit", "-q", "-m", "start")
    return repo


def closed_port() -> int:
    with socket.socket() as probe:  # bound, never listened on, then closed: refused
        probe.bind(("127.0.0.1", 0))
        port: int = probe.getsockname()[1]
    return port


def sylk_env(tmp_path: Path, config: str) -> dict[str, str]:
    config_dir = tmp_path / "config"
    config_dir.mkdir()
    (config_dir / "config.toml").write_text(config)
    env = {k: v for k, v in os.environ.items() if not k.startswith("SYLK_")}
    return env | {"SYLK_CONFIG_DIR": str(config_dir), "SYLK_DATA_DIR": str(tmp_path / "data"),
                  "SYLK_SEMANTIC": "off", "PYTHONPATH": str(ROOT)}  # fmt: skip


def test_ray_not_installed_is_a_config_error_naming_the_extra(
    tmp_path: Path, workspace: Path
) -> None:
    block = "import sys; sys.modules['ray'] = None; sys.argv = ['sylk', 'run', 'hello']; "
    done = subprocess.run(
        [PYTHON, "-c", block + "from sylk_tui.cli import main; sys.exit(main())"],
        cwd=workspace, env=sylk_env(tmp_path, '[orchestration]\nbackend = "ray"\n'),
        capture_output=True, text=True, timeout=120, check=False,
    )  # fmt: skip
    assert done.returncode != 0, done.stderr
    assert "pip install 'sylk-tui[ray]'" in done.stderr, done.stderr
    assert "Traceback" not in done.stderr, done.stderr


async def _unreachable_run(data_dir: Path, workspace: Path, address: str) -> dict[str, Any]:
    """In a process of its own: Ray Client's connect cannot be stopped once started and
    leaves client mode behind, which no later test of this process should inherit."""
    from backend.config.orchestration import OrchestrationSettings
    from backend.config.settings import load_config
    from backend.engine import Engine, EngineConfig
    from backend.engine.build import build
    from tests.integration.plans.conftest import say

    base = load_config(None)
    settings = base.model_copy(update={
        "orchestration": OrchestrationSettings(backend="ray", address=address,
                                               connect_timeout_s=1.0),
        "sessions": base.sessions.model_copy(update={"git_isolation": False}),
    })  # fmt: skip
    config = EngineConfig(data_dir=data_dir, workspace=workspace, provider="scripted",
                          watch_files=False, run_approved_plans=True)  # fmt: skip
    engine = Engine.from_parts(build(config, settings))
    try:
        sid = (await engine.ensure_session()).id
        await engine.approval_command(sid, "auto-edit")
        await say(engine, sid, "@architect add a --verbose flag")
        await say(engine, sid, "/plan approve p1")
        outcome = await engine.wait_dag(sid, "p1")
        assert outcome is not None
        after = await say(engine, sid, "are you still there?")
        record = outcome.records["e1"]
        return {"status": outcome.status.value, "error": record.error,
                "attempts": record.attempts, "after": after}  # fmt: skip
    finally:
        await engine.aclose()


def test_an_unreachable_cluster_fails_the_node_in_time_and_the_session_goes_on(
    tmp_path: Path, workspace: Path, data_dir: Path
) -> None:
    from tests.integration.orchestration.plan_runs import architect_proposes, node, plan

    committed(workspace, {"a.txt": "one\n"})
    doc = {
        "turns": [*architect_proposes(plan(node("e1", "engineer"))), {"text": "Noted."}],
        "threads": {"after": {"match": "still there", "turns": [{"text": "Still here."}] * 2}},
    }
    (tmp_path / "s.json").write_text(json.dumps(doc))
    address = f"ray://127.0.0.1:{closed_port()}"
    code = ("import asyncio, json, sys; from pathlib import Path; "
            "from tests.integration.cluster.test_cluster_faults import _unreachable_run; "
            "print(json.dumps(asyncio.run(_unreachable_run(*map(Path, sys.argv[1:3]), "
            "sys.argv[3]))))")  # fmt: skip
    env = sylk_env(tmp_path, "") | {"SYLK_SCRIPT": str(tmp_path / "s.json")}
    # It ends by itself (the timeout only keeps a regression from holding the run).
    done = subprocess.run([PYTHON, "-c", code, str(data_dir), str(workspace), address],
                          cwd=ROOT, env=env, capture_output=True, text=True, check=False,
                          timeout=240)  # fmt: skip
    assert done.returncode == 0, done.stderr[-3000:]
    ran = json.loads(done.stdout.strip().splitlines()[-1])
    assert ran["status"] == "failed", ran
    assert f"the Ray cluster at '{address}' could not be reached" in ran["error"], ran
    assert "no answer within 1 s" in ran["error"], ran
    assert ran["after"]["text"] == "Still here.", ran  # the session answers as before
    assert (workspace / "a.txt").read_text() == "one\n"


async def test_a_result_that_no_longer_applies_names_the_files_and_changes_nothing(
    tmp_path: Path,
) -> None:
    repo = session_repository(committed(tmp_path / "repo", {"a.txt": "one\n", "b.txt": "two\n"}))
    base = await snapshot_base(repo, "refs/sylk/base/p1/e1")
    checkout = tmp_path / "worker"
    await fetch_checkout(repo.root, "refs/sylk/base/p1/e1", checkout)
    (checkout / "a.txt").write_text("one, by the worker\n")  # applies cleanly alone
    (checkout / "b.txt").write_text("two, by the worker\n")  # meets the user's edit
    result = await commit_and_push(checkout, "done", repo.root, "refs/sylk/results/p1/e1/1")
    (repo.root / "b.txt").write_text("two, by the user meanwhile\n")

    with pytest.raises(ApplyConflictError) as raised:
        await apply_result(repo, base, result, "refs/sylk/applied/p1/e1-k")
    error = raised.value
    assert error.error_kind is ErrorKind.CONFLICT
    assert error.files == ["a.txt", "b.txt"]
    assert "a.txt, b.txt" in error.message and "nothing was applied" in error.message
    assert (repo.root / "a.txt").read_text() == "one\n"  # all or nothing: not half applied
    assert (repo.root / "b.txt").read_text() == "two, by the user meanwhile\n"
    assert git(repo.root, "for-each-ref", "refs/sylk/applied/") == ""  # not recorded as done


async def test_a_session_in_a_linked_worktree_hands_off_through_its_repository(
    tmp_path: Path,
) -> None:
    main = committed(tmp_path / "main", {"a.txt": "one\n"})
    tree = tmp_path / "tree"
    git(main, "worktree", "add", "-q", "-b", "sylk/s1", str(tree))
    (tree / "sub").mkdir()
    (tree / "sub" / "new.txt").write_text("untracked in the worktree\n")
    repo = session_repository(tree / "sub")
    assert (repo.root, repo.subdir) == (tree, "sub")

    base = await snapshot_base(repo, "refs/sylk/base/p1/e1")
    checkout = tmp_path / "worker"
    await fetch_checkout(repo.root, "refs/sylk/base/p1/e1", checkout)
    assert (checkout / "sub" / "new.txt").read_text() == "untracked in the worktree\n"
    (checkout / "a.txt").write_text("one\nfrom the worker\n")
    result = await commit_and_push(checkout, "done", repo.root, "refs/sylk/results/p1/e1/1")
    await apply_result(repo, base, result, "refs/sylk/applied/p1/e1-k")

    assert (tree / "a.txt").read_text() == "one\nfrom the worker\n"
    assert (main / "a.txt").read_text() == "one\n"  # the main checkout is another tree
    assert git(main, "rev-parse", "refs/sylk/applied/p1/e1-k").strip() == result  # shared refs
    assert git(tree, "status", "--porcelain") == " M a.txt\n?? sub/\n"  # HEAD, index kept


LEFT = ("pkg/__pycache__/m.cpython-311.pyc", "__pycache__/conftest.cpython-311.pyc",
        ".pytest_cache/v/cache/lastfailed", ".ruff_cache/0.1/x", ".coverage",
        "pkg/m.pyo")  # fmt: skip


def leave_leftovers(tree: Path, tag: str) -> None:
    for name in LEFT:
        (tree / name).parent.mkdir(parents=True, exist_ok=True)
        (tree / name).write_bytes(f"{tag}\0".encode())


def committed_names(repo: Path, sha: str) -> set[str]:
    return set(git(repo, "ls-tree", "-r", "--name-only", sha).split())


async def test_build_leftovers_stay_out_of_the_base_and_of_every_result(tmp_path: Path) -> None:
    """No .gitignore: bytecode and caches the checks leave on both sides never travel,
    so two workers that ran the same tests both apply; the user's config is untouched."""
    (tmp_path / "repo" / "pkg" / "__pycache__").mkdir(parents=True)
    old = "pkg/__pycache__/old.pyc"  # committed by the user once: theirs, never rewritten
    root = committed(tmp_path / "repo", {"pkg/m.py": "V = 1\n", "pkg/n.py": "W = 1\n", old: "c"})
    sources = {"pkg/m.py", "pkg/n.py", old}
    config = (root / ".git" / "config").read_text()
    leave_leftovers(root, "user")  # the user's own test run, never committed
    (root / old).write_text("user")  # rewritten by the user's run: not a change to carry
    repo = session_repository(root)
    results: list[tuple[str, str]] = []
    for i, name in enumerate(("m", "n")):
        base = await snapshot_base(repo, f"refs/sylk/base/p1/e{i}")
        assert committed_names(root, base) == sources
        assert git(root, "show", f"{base}:{old}") == "c"
        checkout = tmp_path / f"worker{i}"
        await fetch_checkout(root, f"refs/sylk/base/p1/e{i}", checkout)
        (checkout / "pkg" / f"{name}.py").write_text(f"{name.upper()} = 2\n")
        leave_leftovers(checkout, f"worker{i}")  # each tester ran pytest on the package
        (checkout / old).write_text(f"worker{i}")
        assert git(checkout, "status", "--porcelain") == f" M {old}\n M pkg/{name}.py\n"
        sha = await commit_and_push(checkout, "done", root, f"refs/sylk/results/p1/e{i}/1")
        assert committed_names(root, sha) == sources
        assert git(root, "show", f"{sha}:{old}") == "c"
        results.append((base, sha))
    for i, (base, sha) in enumerate(results):
        await apply_result(repo, base, sha, f"refs/sylk/applied/p1/e{i}-k")
    assert (root / "pkg" / "m.py").read_text() == "M = 2\n"
    assert (root / "pkg" / "n.py").read_text() == "N = 2\n"
    assert (root / ".coverage").read_bytes() == b"user\0"  # the user's leftovers: theirs
    assert not (root / ".gitignore").exists()
    assert (root / ".git" / "config").read_text() == config
    assert (
        not (root / ".git" / "info" / "exclude").exists()
        or "pycache" not in (root / ".git" / "info" / "exclude").read_text()
    )


def test_a_workspace_outside_any_repository_is_a_typed_refusal(tmp_path: Path) -> None:
    (tmp_path / "plain").mkdir()
    with pytest.raises(NotARepositoryError) as raised:
        session_repository(tmp_path / "plain")
    assert "not in a git repository" in raised.value.message
