"""What the end-to-end tests share: the demo's example project copied and git-initialised,
its script, and what the plan leaves on disk when it ran once.

The example (``examples/verbose-flag``) is a tiny Python CLI with a real
``pyproject.toml`` configuring ruff and pytest; the script
(``examples/verbose-flag.yaml``) is the Architect's plan (a librarian task, then two
engineer tasks at once) and each task's own thread of turns. The inspector and tester
run the project's real ruff and pytest, which must be on PATH: Sylk's own, first.
"""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
from pathlib import Path

REPO_ROOT = Path(__file__).resolve().parents[3]
EXAMPLE = REPO_ROOT / "examples" / "verbose-flag"
SCRIPT = REPO_ROOT / "examples" / "verbose-flag.yaml"
REQUEST = "add a --verbose flag to the CLI"
PLAN_ID = "verbose-flag"
VENV_BIN = str(Path(sys.executable).parent)

FLAG_LINE = '    parser.add_argument("--verbose", action="store_true", help="say what it does")\n'
README_LINE = "    python -m greet.cli --verbose ada  # also says what it does, on stderr\n"
CLI_AFTER = (
    '''"""The greet command line: ``greet [NAME]`` says hello."""

import argparse
import sys


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(prog="greet", description="Say hello.")
    parser.add_argument("name", nargs="?", default="world", help="who to greet")
'''
    + FLAG_LINE
    + """    return parser


def main(argv: list[str] | None = None) -> int:
    args = build_parser().parse_args(argv)
    if args.verbose:
        print(f"greeting {args.name}", file=sys.stderr)
    print(f"hello, {args.name}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
"""
)

CHANGED = ["README.md", "greet/cli.py"]  # what the plan changes (git's view)
# e1's pipeline: ruff fails loop 1, pytest fails loop 2, loop 3 passes; e2 passes at once.
E1_MOVES = [
    "running (loop 1)", "inspecting (loop 1)",
    "running (loop 2)", "inspecting (loop 2)", "testing (loop 2)",
    "running (loop 3)", "inspecting (loop 3)", "testing (loop 3)", "completed (loop 3)",
]  # fmt: skip
E2_MOVES = ["running (loop 1)", "inspecting (loop 1)", "testing (loop 1)", "completed (loop 1)"]


def tools_path() -> str:
    """PATH with Sylk's own ruff and pytest first: the tools discovery finds."""
    return os.pathsep.join([VENV_BIN, os.environ.get("PATH", os.defpath)])


def git(repo: Path, *args: str) -> str:
    env = {**os.environ, "GIT_AUTHOR_NAME": "t", "GIT_AUTHOR_EMAIL": "t@example.invalid",
           "GIT_COMMITTER_NAME": "t", "GIT_COMMITTER_EMAIL": "t@example.invalid"}  # fmt: skip
    done = subprocess.run(["git", *args], cwd=repo, env=env, check=True, capture_output=True,
                          text=True)  # fmt: skip
    return done.stdout


def example_repo(into: Path) -> Path:
    """A copy of the example project, a git repository with one commit."""
    repo = into / "verbose-flag"
    shutil.copytree(EXAMPLE, repo, ignore=shutil.ignore_patterns("__pycache__", ".*_cache"))
    git(repo, "init", "-q", "-b", "main")
    git(repo, "add", "-A")
    git(repo, "commit", "-q", "-m", "the example as shipped")
    return repo


def work_tree(repo: Path, data_dir: Path) -> Path:
    """Where the session's edits land: a session in a git repository works in its own
    worktree under the data dir (``backend.worktrees``); the repository is untouched."""
    trees = list((data_dir / "worktrees").glob("*/*"))
    return min(trees, key=lambda tree: tree.stat().st_ctime) if trees else repo


def changed_files(repo: Path) -> list[str]:
    """What git says the plan changed (tracked files), the caches left out."""
    return sorted(line[3:] for line in git(repo, "status", "--porcelain").splitlines()
                  if line.startswith(" M"))  # fmt: skip


def project_checks_pass(repo: Path) -> None:
    """The project's own ruff and pytest pass on what the plan left, run here directly."""
    env = {**os.environ, "PATH": tools_path()}
    for argv in (["ruff", "check", "."], ["ruff", "format", "--check", "."],
                 ["pytest", "-q", "-p", "no:cacheprovider"]):  # fmt: skip
        done = subprocess.run(argv, cwd=repo, env=env, capture_output=True, text=True, check=False)
        assert done.returncode == 0, (argv, done.stdout, done.stderr)


def assert_changed_once(repo: Path) -> None:
    """The plan's two edits are on disk, each exactly once."""
    cli = (repo / "greet" / "cli.py").read_text()
    assert cli == CLI_AFTER
    assert cli.count("--verbose") == 1
    readme = (repo / "README.md").read_text()
    assert readme.count(README_LINE) == 1
    assert changed_files(repo) == CHANGED
