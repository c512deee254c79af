"""Tier 1 tool discovery on real project files in temporary workspaces."""

from __future__ import annotations

import json
import os
import shutil
import sys
from pathlib import Path

import pytest

from backend.knowledge.tool_discovery.discovery import ToolDiscovery
from backend.knowledge.tool_discovery.format import format_discovery
from backend.knowledge.tool_discovery.models import (
    ConfidenceLevel,
    DiscoveredTool,
    LanguageDecision,
    ToolCategory,
    ToolDiscoveryRequest,
    ToolDiscoveryResponse,
    UnknownLanguageError,
)
from backend.workspace.files import PathOutsideWorkspaceError

EMPTY_PATH = ""  # no tool on PATH: results do not depend on the machine


def write(root: Path, files: dict[str, str]) -> Path:
    for rel, text in files.items():
        path = root / rel
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(text)
    return root


def ask(
    discovery: ToolDiscovery,
    ws: Path,
    category: ToolCategory | None = None,
    path: str = ".",
    languages: list[str] | None = None,
) -> ToolDiscoveryResponse:
    request = ToolDiscoveryRequest(
        tool_category=category, target_path=path, languages=languages or []
    )
    return discovery.discover(request, ws)


def tool(response: ToolDiscoveryResponse, name: str, category: ToolCategory) -> DiscoveredTool:
    found = [t for t in response.tools if t.name == name and t.category is category]
    assert found, f"{name} {category} not in {[(t.name, t.category.value) for t in response.tools]}"
    return found[0]


@pytest.fixture
def discovery() -> ToolDiscovery:
    return ToolDiscovery(path_env=EMPTY_PATH, probe_versions=False)


PYPROJECT = """\
[project]
name = "demo"
[dependency-groups]
dev = ["pytest>=8,<9", "mypy==1.13.0", "ruff>=0.8"]
[tool.ruff]
line-length = 100
[tool.mypy]
strict = true
[tool.pytest.ini_options]
testpaths = ["tests"]
"""
UV_LOCK = """\
version = 1
[[package]]
name = "ruff"
version = "0.8.4"
[[package]]
name = "pytest"
version = "8.3.3"
"""


def test_python_project_configured_in_pyproject(tmp_path: Path, discovery: ToolDiscovery) -> None:
    ws = write(tmp_path, {
        "pyproject.toml": PYPROJECT, "uv.lock": UV_LOCK,
        "Makefile": "lint:\n\truff check src\n\ntest:\n\tuv run pytest -q\n",
        "src/app.py": "x = 1\n",
    })  # fmt: skip
    response = ask(discovery, ws)
    assert response.languages == ["python"]
    ruff = tool(response, "ruff", ToolCategory.LINTER)
    assert (ruff.confidence, ruff.source.value) == (ConfidenceLevel.HIGH, "config_file")
    assert ruff.config_path == "pyproject.toml"
    assert ruff.run_command == "make lint"  # the project's own target wins
    assert (ruff.version, ruff.version_source) == ("0.8.4", "lock")
    mypy = tool(response, "mypy", ToolCategory.TYPE_CHECKER)
    assert mypy.run_command == "uv run mypy ."  # uv.lock: the project runs tools through uv
    assert mypy.install_cmd == "uv add --dev mypy"
    assert (mypy.version, mypy.version_source) == ("1.13.0", "pin")
    assert not mypy.is_installed
    pytest_ = tool(response, "pytest", ToolCategory.TEST_FRAMEWORK)
    assert pytest_.run_command == "make test"
    linter = next(d for d in response.decisions if d.category is ToolCategory.LINTER)
    assert (linter.tier, linter.confidence) == (1, ConfidenceLevel.HIGH)


def test_setup_cfg_tox_flake8_and_pre_commit(tmp_path: Path, discovery: ToolDiscovery) -> None:
    ws = write(tmp_path, {
        "setup.cfg": "[metadata]\nname = x\n\n[tool:pytest]\naddopts = -q\n\n[mypy]\nstrict = 1\n",
        "tox.ini": "[tox]\nenvlist = py\n\n[testenv:lint]\ncommands = flake8 src\n",
        ".flake8": "[flake8]\nmax-line-length = 100\n",
        ".pre-commit-config.yaml": "repos:\n- repo: https://github.com/psf/black\n"
        "  rev: 24.10.0\n  hooks:\n  - id: black\n",
        ".github/workflows/ci.yml": "jobs:\n  t:\n    steps:\n    - run: pytest -x\n",
    })  # fmt: skip
    response = ask(discovery, ws)
    flake8 = tool(response, "flake8", ToolCategory.LINTER)
    assert flake8.config_path == ".flake8"
    assert flake8.run_command == "tox -e lint"
    black = tool(response, "black", ToolCategory.FORMATTER)
    assert (black.source.value, black.version, black.version_source) == (
        "pre_commit", "24.10.0", "pre_commit",
    )  # fmt: skip
    assert tool(response, "mypy", ToolCategory.TYPE_CHECKER).config_path == "setup.cfg"
    pytest_ = tool(response, "pytest", ToolCategory.TEST_FRAMEWORK)
    assert pytest_.evidence == ["setup.cfg", ".github/workflows/ci.yml"]


def test_node_project_uses_scripts_eslint_config_and_lock(
    tmp_path: Path, discovery: ToolDiscovery
) -> None:
    package = {
        "name": "web",
        "scripts": {"lint": "eslint src", "lint:fix": "eslint src --fix", "test": "vitest run",
                    "format": "prettier --write ."},
        "devDependencies": {"eslint": "^9.1.0", "vitest": "^2.0.0", "prettier": "^3.3.0"},
    }  # fmt: skip
    lock = {"packages": {"node_modules/eslint": {"version": "9.1.1"}}}
    ws = write(tmp_path, {
        "package.json": json.dumps(package), "package-lock.json": json.dumps(lock),
        ".eslintrc.json": "{}", "src/index.js": "export const x = 1;\n",
    })  # fmt: skip
    response = ask(discovery, ws)
    assert response.languages == ["javascript"]
    eslint = tool(response, "eslint", ToolCategory.LINTER)
    assert (eslint.confidence, eslint.config_path) == (ConfidenceLevel.HIGH, ".eslintrc.json")
    assert eslint.run_command == "npm run lint"
    assert (eslint.version, eslint.version_source) == ("9.1.1", "lock")
    vitest = tool(response, "vitest", ToolCategory.TEST_FRAMEWORK)
    assert (vitest.confidence, vitest.run_command) == (ConfidenceLevel.MEDIUM, "npm run test")
    assert (vitest.version, vitest.install_cmd) == ("^2.0.0", "npm install -D vitest")
    decision = next(d for d in response.decisions if d.category is ToolCategory.TEST_FRAMEWORK)
    assert (decision.tier, decision.confidence) == (2, ConfidenceLevel.MEDIUM)


def test_pnpm_monorepo_package_in_subdirectory(tmp_path: Path, discovery: ToolDiscovery) -> None:
    package = {"scripts": {"typecheck": "tsc --noEmit"}, "devDependencies": {"typescript": "5"}}
    ws = write(tmp_path, {
        "pnpm-lock.yaml": "lockfileVersion: 9\n", "web/package.json": json.dumps(package),
        "web/tsconfig.json": "{}", "web/src/app.ts": "export {}\n",
    })  # fmt: skip
    response = ask(discovery, ws, ToolCategory.TYPE_CHECKER, path="web/src/app.ts")
    assert response.target_path == "web/src"
    tsc = tool(response, "tsc", ToolCategory.TYPE_CHECKER)
    assert (tsc.language, tsc.config_path) == ("typescript", "web/tsconfig.json")
    assert tsc.run_command == "cd web && pnpm run typecheck"
    assert tsc.install_cmd == "pnpm add -D typescript"


def test_go_project(tmp_path: Path, discovery: ToolDiscovery) -> None:
    ws = write(tmp_path, {
        "go.mod": "module example.com/x\n\ngo 1.22\n", ".golangci.yml": "linters:\n  enable: []\n",
        "main.go": "package main\n",
    })  # fmt: skip
    response = ask(discovery, ws)
    assert response.languages == ["go"]
    lint = tool(response, "golangci-lint", ToolCategory.LINTER)
    assert (lint.config_path, lint.run_command) == (".golangci.yml", "golangci-lint run ./...")
    gotest = tool(response, "go test", ToolCategory.TEST_FRAMEWORK)
    assert (gotest.source.value, gotest.version) == ("toolchain", "1.22")
    assert gotest.install_cmd == ""  # built in
    lsp = tool(response, "gopls", ToolCategory.LSP)
    assert lsp.source.value == "academic_research"  # nothing configures an LSP: tier 2
    assert response.tier == 2 and not response.requires_user


def test_rust_project(tmp_path: Path, discovery: ToolDiscovery) -> None:
    ws = write(tmp_path, {
        "Cargo.toml": '[package]\nname = "x"\n\n[lints.clippy]\npedantic = "warn"\n',
        "rustfmt.toml": "max_width = 100\n",
        "rust-toolchain.toml": '[toolchain]\nchannel = "1.82"\n',
        "src/main.rs": "fn main() {}\n",
    })  # fmt: skip
    response = ask(discovery, ws)
    assert response.languages == ["rust"]
    clippy = tool(response, "clippy", ToolCategory.LINTER)
    assert (clippy.config_path, clippy.run_command) == ("Cargo.toml", "cargo clippy --all-targets")
    assert clippy.install_cmd == "rustup component add clippy"
    assert tool(response, "rustfmt", ToolCategory.FORMATTER).config_path == "rustfmt.toml"
    assert tool(response, "cargo test", ToolCategory.TEST_FRAMEWORK).version == "1.82"


def test_mixed_repo_settles_each_language_separately(
    tmp_path: Path, discovery: ToolDiscovery
) -> None:
    ws = write(tmp_path, {
        "pyproject.toml": "[tool.ruff]\n", "go.mod": "module m\n\ngo 1.23\n",
        "package.json": json.dumps({"devDependencies": {"typescript": "^5"}}),
        "tsconfig.json": "{}",
    })  # fmt: skip
    response = ask(discovery, ws, ToolCategory.LINTER)
    assert response.languages == ["python", "typescript", "go"]
    by_language = {d.language: d for d in response.decisions}
    assert (by_language["python"].tier, by_language["python"].confidence.value) == (1, "high")
    assert by_language["go"].tier == 2  # golangci-lint is the clear default
    assert by_language["typescript"].requires_user  # eslint / biome / oxlint: ask
    assert response.tier == 3 and response.requires_user
    assert {o.tool.name for o in response.user_options} == {"eslint", "biome", "oxlint", "tsc"}
    assert [o.tool.name for o in response.user_options if o.recommended] == ["eslint"]
    assert {t.name for t in response.tools} == {"ruff", "golangci-lint"}
    text = format_discovery(response)
    assert "### Your choice is needed" in text and "eslint** (recommended)" in text
    assert "`ruff check .`" in text


def test_language_only_detection_is_low_confidence(
    tmp_path: Path, discovery: ToolDiscovery
) -> None:
    files = {f"pkg/m{i}.py": "" for i in range(6)}
    ws = write(tmp_path, {**files, "tool.sh": ""})  # one stray script is not a language
    response = ask(discovery, ws, ToolCategory.TEST_FRAMEWORK)
    assert response.languages == ["python"]
    assert response.confidence is ConfidenceLevel.LOW
    assert tool(response, "pytest", ToolCategory.TEST_FRAMEWORK).source.value == (
        "academic_research"
    )


def test_symlinked_config_outside_the_workspace_is_ignored(
    tmp_path: Path, discovery: ToolDiscovery
) -> None:
    outside = tmp_path / "outside.json"
    outside.write_text("{}")
    ws = write(tmp_path / "ws", {"package.json": "{}"})
    (ws / ".eslintrc.json").symlink_to(outside)
    (ws / "pyproject.toml").symlink_to(tmp_path / "outside.toml")  # dangling and outside
    response = ask(discovery, ws, ToolCategory.LINTER)
    assert not any(t.name == "eslint" for t in response.tools)
    assert any(".eslintrc.json" in w and "outside the workspace" in w for w in response.warnings)
    with pytest.raises(PathOutsideWorkspaceError):
        ask(discovery, ws, path="../outside.json")


def test_unknown_language_in_request_is_a_typed_error(
    tmp_path: Path, discovery: ToolDiscovery
) -> None:
    with pytest.raises(UnknownLanguageError, match="cobol"):
        ask(discovery, tmp_path, languages=["cobol"])
    response = ask(discovery, tmp_path, ToolCategory.LINTER, languages=["TS"])  # alias
    assert response.languages == ["typescript"] and response.requires_user


def test_cache_hits_and_invalidation_on_edit_and_new_file(
    tmp_path: Path, discovery: ToolDiscovery
) -> None:
    ws = write(tmp_path, {"pyproject.toml": "[project]\nname = 'x'\n", "package.json": "{}"})
    first = ask(discovery, ws, ToolCategory.TYPE_CHECKER)
    assert not first.cached and first.requires_user  # python type checker: mypy or pyright
    assert ask(discovery, ws, ToolCategory.TYPE_CHECKER).cached
    assert discovery.stats().hits == 1

    (ws / "pyproject.toml").write_text("[project]\nname = 'x'\n[tool.mypy]\nstrict = true\n")
    edited = ask(discovery, ws, ToolCategory.TYPE_CHECKER)
    assert not edited.cached
    assert tool(edited, "mypy", ToolCategory.TYPE_CHECKER).confidence is ConfidenceLevel.HIGH
    assert discovery.stats().invalidations == 1

    linters = ask(discovery, ws, ToolCategory.LINTER)
    assert not any(t.name == "eslint" for t in linters.tools)
    (ws / ".eslintrc.json").write_text("{}")  # a file no earlier call read
    again = ask(discovery, ws, ToolCategory.LINTER)
    assert not again.cached
    assert tool(again, "eslint", ToolCategory.LINTER).config_path == ".eslintrc.json"
    stats = discovery.stats()
    assert (stats.misses, stats.invalidations, stats.entries) == (4, 2, 2)


def test_invalidate_drops_only_entries_the_paths_affect(
    tmp_path: Path, discovery: ToolDiscovery
) -> None:
    ws = write(tmp_path, {"pyproject.toml": "[tool.ruff]\n", "docs/readme.md": "x"})
    ask(discovery, ws, ToolCategory.LINTER)
    ask(discovery, ws, ToolCategory.FORMATTER)
    assert discovery.invalidate(["docs/readme.md", "src/app.py"], ws) == 0
    assert discovery.invalidate([str(ws / "ruff.toml")]) == 2  # a new config file
    assert discovery.stats().entries == 0
    ask(discovery, ws, ToolCategory.LINTER)
    assert discovery.invalidate(["pyproject.toml"], ws) == 1
    assert discovery.stats().invalidations == 3


def test_real_ruff_version_from_path(tmp_path: Path) -> None:
    # The dev extras install ruff next to the interpreter running the tests.
    ruff_exe = shutil.which("ruff", path=str(Path(sys.executable).parent)) or shutil.which("ruff")
    if ruff_exe is None:
        pytest.skip("ruff is neither next to this interpreter nor on PATH (no dev extras)")
    venv_bin = Path(ruff_exe).parent
    import subprocess

    expected = subprocess.run([ruff_exe, "--version"], capture_output=True, text=True, check=True)
    ws = write(tmp_path, {"ruff.toml": "line-length = 100\n"})
    discovery = ToolDiscovery(path_env=os.pathsep.join([str(venv_bin), os.environ["PATH"]]))
    ruff = tool(ask(discovery, ws, ToolCategory.LINTER), "ruff", ToolCategory.LINTER)
    assert ruff.is_installed and ruff.version_source == "installed"
    assert ruff.version and ruff.version in expected.stdout


def test_version_probe_runs_git_for_real(tmp_path: Path) -> None:
    from backend.knowledge.tool_discovery.probe import VersionProbe

    git = shutil.which("git")
    if git is None:
        pytest.skip("git is not installed")
    probe = VersionProbe(timeout_s=5)
    version = probe.version(("git", "--version"), Path(git), tmp_path, None)
    assert version.count(".") >= 1 and version[0].isdigit()
    assert probe.version(("git", "--version"), Path(git), tmp_path, None) == version
    assert probe.runs == 1  # memoised per binary


EDITORCONFIG = """\
# top-most EditorConfig file
root = true

[*]
charset = utf-8
indent_style = space
indent_size = 2
end_of_line = lf

[*.md]
max_line_length = unset
"""
PRETTIER_BY_SCRIPT = {
    "scripts": {"format": "prettier --write ."},
    "devDependencies": {"prettier": "^3.3.0"},
}


def formatter_decision(response: ToolDiscoveryResponse, language: str) -> LanguageDecision:
    return next(
        d
        for d in response.decisions
        if d.category is ToolCategory.FORMATTER and d.language == language
    )


def test_editorconfig_configures_prettier_found_only_by_its_script(
    tmp_path: Path, discovery: ToolDiscovery
) -> None:
    files = {"package.json": json.dumps(PRETTIER_BY_SCRIPT), "src/index.js": "export {}\n"}
    bare = ask(discovery, write(tmp_path / "bare", files), ToolCategory.FORMATTER)
    assert tool(bare, "prettier", ToolCategory.FORMATTER).confidence is ConfidenceLevel.MEDIUM
    ws = write(tmp_path / "ws", {**files, ".editorconfig": EDITORCONFIG})
    response = ask(discovery, ws, ToolCategory.FORMATTER)
    prettier = tool(response, "prettier", ToolCategory.FORMATTER)
    assert (prettier.confidence, prettier.config_path) == (ConfidenceLevel.HIGH, ".editorconfig")
    assert prettier.evidence == ["package.json", ".editorconfig"]
    assert prettier.run_command == "npm run format"  # still the project's own command
    decision = formatter_decision(response, "javascript")
    assert (decision.tier, decision.confidence) == (1, ConfidenceLevel.HIGH)
    assert ".editorconfig sets end_of_line, indent_size, indent_style" in decision.note
    # No tool is invented: the same tools as without the file.
    assert [t.name for t in response.tools] == [t.name for t in bare.tools]


def test_editorconfig_is_reported_but_does_not_configure_other_formatters(
    tmp_path: Path, discovery: ToolDiscovery
) -> None:
    ws = write(tmp_path, {
        "requirements-dev.txt": "black==24.8.0\n", "app.py": "x = 1\n",
        ".editorconfig": EDITORCONFIG,
    })  # fmt: skip
    response = ask(discovery, ws, ToolCategory.FORMATTER)
    black = tool(response, "black", ToolCategory.FORMATTER)  # black ignores .editorconfig
    assert (black.confidence, black.evidence) == (ConfidenceLevel.MEDIUM, ["requirements-dev.txt"])
    decision = formatter_decision(response, "python")
    assert decision.confidence is ConfidenceLevel.MEDIUM
    assert decision.note.endswith(
        "; .editorconfig sets end_of_line, indent_size, indent_style for editors and formatters"
    )
    # Nothing configured at all: the language default stays a low-confidence suggestion.
    empty = write(tmp_path / "empty", {".editorconfig": "[*]\nindent_style = tab\n"})
    go = ask(discovery, empty, ToolCategory.FORMATTER, languages=["go"])
    assert [(t.name, t.source.value) for t in go.tools] == [("gofmt", "academic_research")]
    decision = formatter_decision(go, "go")
    assert decision.confidence is ConfidenceLevel.LOW
    assert decision.note.endswith("; .editorconfig sets indent_style for editors and formatters")
    # Other categories do not read it.
    linters = ask(discovery, ws, ToolCategory.LINTER)
    assert not any(".editorconfig" in d.note for d in linters.decisions)


def test_nearest_editorconfig_applies_and_root_true_stops_the_search(
    tmp_path: Path, discovery: ToolDiscovery
) -> None:
    ws = write(tmp_path, {
        ".editorconfig": "root = true\n[*]\nindent_style = tab\n",
        "web/.editorconfig": "root = true\n[*]\ncharset = utf-8\n",
        "web/package.json": json.dumps(PRETTIER_BY_SCRIPT), "web/src/app.js": "export {}\n",
        "api/.editorconfig": "[*.js]\nmax_line_length = 100\n",
        "api/package.json": json.dumps(PRETTIER_BY_SCRIPT), "api/src/app.js": "export {}\n",
    })  # fmt: skip
    web = ask(discovery, ws, ToolCategory.FORMATTER, path="web/src/app.js")
    prettier = tool(web, "prettier", ToolCategory.FORMATTER)
    # web/.editorconfig is the root for web/ and sets nothing a formatter uses.
    assert prettier.confidence is ConfidenceLevel.MEDIUM
    assert prettier.evidence == ["web/package.json", "web/.editorconfig"]
    note = formatter_decision(web, "javascript").note
    assert note.endswith("; web/.editorconfig sets no indentation, line ending or line length")
    api = ask(discovery, ws, ToolCategory.FORMATTER, path="api/src/app.js")
    prettier = tool(api, "prettier", ToolCategory.FORMATTER)
    assert (prettier.confidence, prettier.config_path) == (
        ConfidenceLevel.HIGH, "api/.editorconfig",
    )  # fmt: skip
    assert prettier.evidence == ["api/package.json", "api/.editorconfig", ".editorconfig"]
    assert "api/.editorconfig sets indent_style, max_line_length" in (
        formatter_decision(api, "javascript").note
    )


def test_editing_or_creating_an_editorconfig_invalidates_the_cache(
    tmp_path: Path, discovery: ToolDiscovery
) -> None:
    ws = write(tmp_path, {"package.json": json.dumps(PRETTIER_BY_SCRIPT)})
    first = ask(discovery, ws, ToolCategory.FORMATTER)
    assert tool(first, "prettier", ToolCategory.FORMATTER).confidence is ConfidenceLevel.MEDIUM
    (ws / ".editorconfig").write_text("[*]\ncharset = utf-8\n")
    created = ask(discovery, ws, ToolCategory.FORMATTER)
    assert not created.cached
    assert ".editorconfig sets no indentation" in formatter_decision(created, "javascript").note
    assert ask(discovery, ws, ToolCategory.FORMATTER).cached
    (ws / ".editorconfig").write_text("[*]\ncharset = utf-8\nindent_size = 4\n")  # in place
    edited = ask(discovery, ws, ToolCategory.FORMATTER)
    assert not edited.cached
    prettier = tool(edited, "prettier", ToolCategory.FORMATTER)
    assert prettier.confidence is ConfidenceLevel.HIGH
    assert discovery.invalidate([".editorconfig"], ws) == 1
