"""Tool discovery runs nothing that lies inside the workspace.

A repository can commit (or an agent can write) a ``.venv/bin/ruff`` or a
``node_modules/.bin/eslint`` that does anything when run. Discovery must still
report those tools, installed, with the version their package metadata states,
and never execute them: not from the project's bin dirs, not through a PATH that
lists them first (an activated virtualenv), a relative PATH entry, or a link on
PATH that leads into the workspace. Only a binary outside is probed, with the
allow-listed environment, stdin closed, ``/`` as working directory and a timeout.
"""

from __future__ import annotations

import json
import os
import sys
from pathlib import Path

import pytest

from backend.knowledge.tool_discovery.discovery import ToolDiscovery
from backend.knowledge.tool_discovery.format import format_discovery
from backend.knowledge.tool_discovery.models import (
    DiscoveredTool,
    ToolCategory,
    ToolDiscoveryRequest,
    ToolDiscoveryResponse,
)

PYPROJECT = "[project]\nname = 'demo'\n[tool.ruff]\nline-length = 100\n[tool.mypy]\nstrict = true\n"
PACKAGE = {"devDependencies": {"eslint": "^9.0.0"}, "scripts": {"lint": "eslint ."}}


def planted(marker: Path, name: str, version: str) -> str:
    """A script that, if anyone runs it, leaves ``marker`` outside and prints a version."""
    return f"#!/bin/sh\necho \"{name} ran: $0 $*\" >> '{marker}'\necho '{name} {version}'\n"


def executable(path: Path, text: str) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(text)
    path.chmod(0o755)


def plant_project(ws: Path, marker: Path) -> None:
    (ws / "pyproject.toml").write_text(PYPROJECT)
    (ws / "package.json").write_text(json.dumps(PACKAGE))
    (ws / "eslint.config.js").write_text("export default [];\n")
    for venv in (".venv", "venv"):
        for tool in ("ruff", "mypy"):
            executable(ws / venv / "bin" / tool, planted(marker, tool, "66.6.6"))
    executable(ws / "node_modules" / ".bin" / "eslint", planted(marker, "eslint", "66.6.6"))
    site = ws / ".venv" / "lib" / "python3.12" / "site-packages"
    (site / "ruff-0.6.9.dist-info").mkdir(parents=True)
    (site / "ruff-0.6.9.dist-info" / "METADATA").write_text(
        "Metadata-Version: 2.3\nName: ruff\nVersion: 0.6.9\nSummary: linter\n\n"
        "Version: 1.0.0 (a line of the README, after the headers)\n"
    )
    (ws / "node_modules" / "eslint").mkdir(parents=True)
    (ws / "node_modules" / "eslint" / "package.json").write_text(
        json.dumps({"name": "eslint", "version": "9.9.0"})
    )


def ask(discovery: ToolDiscovery, ws: Path) -> ToolDiscoveryResponse:
    return discovery.discover(ToolDiscoveryRequest(), ws)


def tool(response: ToolDiscoveryResponse, name: str, category: ToolCategory) -> DiscoveredTool:
    return next(t for t in response.tools if t.name == name and t.category is category)


def test_planted_workspace_binaries_are_never_run_and_versions_come_from_metadata(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    ws, marker = tmp_path / "repo", tmp_path / "ran.log"
    ws.mkdir()
    plant_project(ws, marker)
    # A link on PATH outside the workspace that leads into it, and a whole PATH
    # entry that is a link to the project's bin dir.
    linked = tmp_path / "linked-bin"
    linked.mkdir()
    (linked / "mypy").symlink_to(ws / ".venv" / "bin" / "mypy")
    (tmp_path / "venv-link").symlink_to(ws / "venv" / "bin")
    monkeypatch.chdir(ws)  # the relative PATH entries below would name the project's bins
    path_env = os.pathsep.join(
        [str(ws / ".venv" / "bin"), str(ws / "node_modules" / ".bin"), "node_modules/.bin",
         ".venv/bin", "", str(tmp_path / "venv-link"), str(linked)]
    )  # fmt: skip
    discovery = ToolDiscovery(path_env=path_env, version_timeout_s=5)
    response = ask(discovery, ws)
    ruff = tool(response, "ruff", ToolCategory.LINTER)
    assert (ruff.is_installed, ruff.version, ruff.version_source) == (True, "0.6.9", "metadata")
    eslint = tool(response, "eslint", ToolCategory.LINTER)
    assert (eslint.is_installed, eslint.version, eslint.version_source) == (
        True, "9.9.0", "metadata",
    )  # fmt: skip
    mypy = tool(response, "mypy", ToolCategory.TYPE_CHECKER)
    assert (mypy.is_installed, mypy.version) == (True, "")  # no metadata: no version at all
    assert "ruff 0.6.9 (version from metadata, not executed)" in format_discovery(response)
    assert discovery.stats().version_runs == 0
    assert not marker.exists(), marker.read_text()


def test_a_binary_outside_is_probed_with_a_clean_environment_and_a_timeout(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    ws, seen = tmp_path / "repo", tmp_path / "seen.txt"
    ws.mkdir()
    (ws / "pyproject.toml").write_text(PYPROJECT)
    system = tmp_path / "system-bin"
    # What the probe sees: its working directory, its environment, its stdin.
    probe = "import json, os, sys\n" + (
        f"seen = {{'cwd': os.getcwd(), 'env': dict(os.environ), 'stdin': sys.stdin.read()}}\n"
        f"with open({str(seen)!r}, 'a') as out:\n    out.write(json.dumps(seen) + '\\n')\n"
        "print('ruff 0.7.1')\n"
    )
    executable(system / "ruff", f"#!{sys.executable}\n{probe}")
    # A version only after a long pause: the probe's timeout cuts it off (and kills
    # the whole group, the sleeping child too).
    executable(system / "mypy", f"#!{sys.executable}\nimport time\ntime.sleep(30)\nprint('1.0')\n")
    monkeypatch.setenv("SYLK_TEST_SECRET_TOKEN", "sk-never-to-a-probe")
    discovery = ToolDiscovery(path_env=str(system), version_timeout_s=0.5)
    response = ask(discovery, ws)
    ruff = tool(response, "ruff", ToolCategory.LINTER)
    assert (ruff.is_installed, ruff.version, ruff.version_source) == (True, "0.7.1", "installed")
    mypy = tool(response, "mypy", ToolCategory.TYPE_CHECKER)
    assert (mypy.is_installed, mypy.version) == (True, "")
    runs = [json.loads(line) for line in seen.read_text().splitlines()]
    assert len(runs) == 1  # once per binary, for both of ruff's categories
    assert runs[0]["cwd"] == "/"  # never the workspace: no project config or plugin loaded
    assert "SYLK_TEST_SECRET_TOKEN" not in runs[0]["env"]
    assert runs[0]["env"]["PATH"] == str(system)
    assert runs[0]["stdin"] == ""  # closed
