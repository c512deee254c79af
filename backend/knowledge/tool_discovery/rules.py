"""Tier 1 detection: what the workspace's files say about its tools.

Each rule reads one kind of file through the :class:`ConfinedReader` and
reports :class:`Finding` records: a tool, the category it serves, where that
was seen and how strongly it counts. A tool's own config file (or its section
in ``pyproject.toml``, ``setup.cfg``, ``tox.ini``, ``package.json``, a
pre-commit hook) counts as *high*; a dependency, a script, a Makefile target
or a CI step that runs it counts as *medium*. Scripts also give the command
the project itself uses to run the tool.

Which file, section or package names a tool is the catalogue's
(:mod:`~backend.knowledge.tool_discovery.catalog`); ``.editorconfig``, which names
no tool, is read by :mod:`~backend.knowledge.tool_discovery.editorconfig`.
"""

from __future__ import annotations

import configparser
import fnmatch
import re
from collections.abc import Iterable
from dataclasses import dataclass
from typing import Any

from backend.knowledge.tool_discovery.catalog import (
    CONFIG_FILES,
    INI_SECTIONS,
    PACKAGE_TOOLS,
    PRE_COMMIT_HOOKS,
    PYPROJECT_SECTIONS,
    invoked_tools,
)
from backend.knowledge.tool_discovery.files import (
    ConfinedReader,
    candidates_in,
    join,
    workflow_files,
)
from backend.knowledge.tool_discovery.models import ConfidenceLevel, ToolCategory, ToolSource

L, F, T, X, S = (
    ToolCategory.LINTER,
    ToolCategory.FORMATTER,
    ToolCategory.TYPE_CHECKER,
    ToolCategory.TEST_FRAMEWORK,
    ToolCategory.LSP,
)
HIGH, MEDIUM = ConfidenceLevel.HIGH, ConfidenceLevel.MEDIUM


@dataclass(frozen=True)
class Finding:
    tool: str
    category: ToolCategory
    source: ToolSource
    confidence: ConfidenceLevel
    path: str  # workspace-relative file that says so
    version: str = ""
    version_source: str = ""
    script: str = ""  # the project's command running it (npm run lint, make lint)
    script_name: str = ""
    script_only: bool = False  # the script runs nothing but this tool


_REQ_NAME = re.compile(r"^\s*([A-Za-z0-9][A-Za-z0-9._-]*)(?:\[[^\]]*\])?\s*(.*)$")


def _requirement(line: str) -> tuple[str, str] | None:
    """(normalised name, version spec) of a PEP 508 requirement line."""
    line = line.split("#", 1)[0].split(";", 1)[0].strip()
    if not line or line.startswith(("-", "git+", "http")):
        return None
    match = _REQ_NAME.match(line)
    if match is None:
        return None
    return match.group(1).lower().replace("_", "-"), match.group(2).strip().replace(" ", "")


def _deps(path: str, pairs: Iterable[tuple[str, str]]) -> list[Finding]:
    out: list[Finding] = []
    for name, spec in pairs:
        for tool, category in PACKAGE_TOOLS.get(name, []):
            exact = spec.lstrip("=") if spec.startswith("==") else ""
            out.append(
                Finding(tool, category, ToolSource.PACKAGE_MANIFEST, MEDIUM, path,
                        version=exact or spec,
                        version_source="pin" if exact else "manifest" if spec else "")
            )  # fmt: skip
    return out


def _scripts(path: str, source: ToolSource, runner: str, scripts: dict[str, str]) -> list[Finding]:
    out: list[Finding] = []
    for name, command in scripts.items():
        found = invoked_tools(command)
        only = len({tool for tool, _ in found}) == 1
        out.extend(
            Finding(tool, cat, source, MEDIUM, path, script=f"{runner} {name}".strip(),
                    script_name=name, script_only=only)
            for tool, cat in found
        )  # fmt: skip
    return out


def config_files(reader: ConfinedReader, directory: str) -> list[Finding]:
    out: list[Finding] = []
    for rel in candidates_in(reader, directory):
        name = rel.rsplit("/", 1)[-1]
        if not reader.exists(rel):
            continue  # a symlink out of the workspace: warned about, never used
        for pattern, tool, cats in CONFIG_FILES:
            if fnmatch.fnmatch(name, pattern):
                out.extend(Finding(tool, c, ToolSource.CONFIG_FILE, HIGH, rel) for c in cats)
        if name in ("ruff.toml", ".ruff.toml") and "[format]" in (reader.text(rel) or ""):
            out.append(Finding("ruff", F, ToolSource.CONFIG_FILE, HIGH, rel))
    return out


def pyproject(reader: ConfinedReader, directory: str) -> list[Finding]:
    rel = join(directory, "pyproject.toml")
    data = reader.toml(rel)
    if data is None:
        return []
    out: list[Finding] = []
    tool = data.get("tool", {}) if isinstance(data.get("tool"), dict) else {}
    for section, found in PYPROJECT_SECTIONS.items():
        if section in tool:
            out.extend(Finding(t, c, ToolSource.CONFIG_FILE, HIGH, rel) for t, c in found)
    ruff = tool.get("ruff")
    if isinstance(ruff, dict) and "format" in ruff:
        out.append(Finding("ruff", F, ToolSource.CONFIG_FILE, HIGH, rel))
    requirements: list[str] = list(data.get("project", {}).get("dependencies", []))
    for group in [
        data.get("project", {}).get("optional-dependencies", {}),
        data.get("dependency-groups", {}),
    ]:
        for items in group.values() if isinstance(group, dict) else []:
            requirements.extend(i for i in items if isinstance(i, str))
    requirements.extend(tool.get("uv", {}).get("dev-dependencies", []))
    pairs = [r for r in map(_requirement, requirements) if r]
    poetry = tool.get("poetry", {})
    tables = [poetry.get("dependencies", {}), poetry.get("dev-dependencies", {})]
    tables += [g.get("dependencies", {}) for g in poetry.get("group", {}).values()]
    for table in tables:
        pairs += [(k.lower(), v if isinstance(v, str) else "") for k, v in table.items()]
    return out + _deps(rel, pairs)  # fmt: skip


def ini_files(reader: ConfinedReader, directory: str) -> list[Finding]:
    out: list[Finding] = []
    for name in ("setup.cfg", "tox.ini"):
        rel = join(directory, name)
        text = reader.text(rel)
        if text is None:
            continue
        parser = configparser.ConfigParser(interpolation=None, strict=False)
        try:
            parser.read_string(text)
        except configparser.Error as exc:
            reader.warnings.append(f"could not parse {rel}: {str(exc).splitlines()[0]}")
            continue
        for section in parser.sections():
            hit = INI_SECTIONS.get(section.lower())
            if hit:
                out.append(Finding(hit[0], hit[1], ToolSource.CONFIG_FILE, HIGH, rel))
            if name == "tox.ini" and section.startswith("testenv"):
                env = section.partition(":")[2] or "py"
                commands = parser.get(section, "commands", fallback="")
                out += _scripts(rel, ToolSource.BUILD_SCRIPT, "tox -e", {env: commands})
        if name == "setup.cfg" and parser.has_section("options.extras_require"):
            lines = [v for _, v in parser.items("options.extras_require")]
            reqs = [r for r in map(_requirement, "\n".join(lines).splitlines()) if r]
            out += _deps(rel, reqs)
    return out


def requirements(reader: ConfinedReader, directory: str) -> list[Finding]:
    out: list[Finding] = []
    for rel in candidates_in(reader, directory):
        if fnmatch.fnmatch(rel.rsplit("/", 1)[-1], "requirements*.txt"):
            text = reader.text(rel) or ""
            out += _deps(rel, [r for r in map(_requirement, text.splitlines()) if r])
    pipfile = reader.toml(join(directory, "Pipfile"))
    if pipfile:
        pairs = [
            (k.lower(), v if isinstance(v, str) and v != "*" else "")
            for table in ("packages", "dev-packages")
            for k, v in pipfile.get(table, {}).items()
        ]
        out += _deps(join(directory, "Pipfile"), pairs)
    return out


def package_json(reader: ConfinedReader, directory: str, runner: str) -> list[Finding]:
    rel = join(directory, "package.json")
    data = reader.json(rel)
    if not isinstance(data, dict):
        return []
    pairs: list[tuple[str, str]] = []
    for table in ("dependencies", "devDependencies", "peerDependencies"):
        deps = data.get(table)
        if isinstance(deps, dict):
            pairs += [(k, str(v)) for k, v in deps.items()]
    out = _deps(rel, pairs)
    embedded = {"eslintConfig": ("eslint", L), "prettier": ("prettier", F), "jest": ("jest", X)}
    for key, (tool, category) in embedded.items():
        if key in data:
            out.append(Finding(tool, category, ToolSource.CONFIG_FILE, HIGH, rel))
    scripts = data.get("scripts")
    if isinstance(scripts, dict):
        text = {k: v for k, v in scripts.items() if isinstance(v, str)}
        out += _scripts(rel, ToolSource.BUILD_SCRIPT, runner, text)
    return out


def _makefile_targets(text: str) -> dict[str, str]:
    targets: dict[str, str] = {}
    current: str | None = None
    for line in text.splitlines():
        if line.startswith("\t") and current is not None:
            targets[current] += line.strip() + "\n"
            continue
        match = re.match(r"^([A-Za-z0-9_.\-/]+)\s*:(?!=)", line)
        current = match.group(1) if match and not match.group(1).startswith(".") else None
        if current is not None:
            targets[current] = ""
    return targets


def makefile(reader: ConfinedReader, directory: str) -> list[Finding]:
    for name in ("GNUmakefile", "Makefile", "makefile"):
        rel = join(directory, name)
        text = reader.text(rel)
        if text is not None:
            runner = "make" if not directory else f"make -C {directory}"
            return _scripts(rel, ToolSource.BUILD_SCRIPT, runner, _makefile_targets(text))
    return []


def pre_commit(reader: ConfinedReader) -> list[Finding]:
    data = reader.yaml(".pre-commit-config.yaml")
    out: list[Finding] = []
    repos = data.get("repos", []) if isinstance(data, dict) else []
    for repo in repos if isinstance(repos, list) else []:
        if not isinstance(repo, dict):
            continue
        rev = str(repo.get("rev", "")).lstrip("v")
        for hook in repo.get("hooks", []) or []:
            hit = PRE_COMMIT_HOOKS.get(str(hook.get("id", ""))) if isinstance(hook, dict) else None
            if hit:
                exact = (
                    rev if re.match(r"^\d+(\.\d+)+", rev) and repo.get("repo") != "local" else ""
                )
                out.append(Finding(hit[0], hit[1], ToolSource.PRE_COMMIT, HIGH,
                                   ".pre-commit-config.yaml", version=exact,
                                   version_source="pre_commit" if exact else ""))  # fmt: skip
    return out


def _run_lines(node: Any) -> Iterable[str]:
    if isinstance(node, dict):
        for key, value in node.items():
            if key in ("run", "script") and isinstance(value, str):
                yield value
            elif key == "script" and isinstance(value, list):
                yield from (v for v in value if isinstance(v, str))
            else:
                yield from _run_lines(value)
    elif isinstance(node, list):
        for item in node:
            yield from _run_lines(item)


def ci(reader: ConfinedReader) -> list[Finding]:
    out: list[Finding] = []
    for rel in workflow_files(reader):
        data = reader.yaml(rel)
        for command in _run_lines(data):
            out += [Finding(tool, cat, ToolSource.CI_CONFIG, MEDIUM, rel)
                    for tool, cat in invoked_tools(command)]  # fmt: skip
        if "golangci/golangci-lint-action" in (reader.text(rel) or ""):
            out.append(Finding("golangci-lint", L, ToolSource.CI_CONFIG, MEDIUM, rel))
    return out


def toolchains(reader: ConfinedReader, directory: str) -> list[Finding]:
    """Go and Rust: the manifest itself configures the toolchain's built-in tools."""
    out: list[Finding] = []
    gomod = join(directory, "go.mod")
    text = reader.text(gomod)
    if text is not None:
        match = re.search(r"^go\s+(\d+\.\d+(?:\.\d+)?)", text, re.MULTILINE)
        version = match.group(1) if match else ""
        for tool, cat in (("go vet", T), ("go test", X), ("gofmt", F)):
            out.append(Finding(tool, cat, ToolSource.TOOLCHAIN, HIGH, gomod, version=version,
                               version_source="manifest" if version else ""))  # fmt: skip
        if re.search(r"^\s*(tool\s+)?github\.com/golangci/golangci-lint", text, re.MULTILINE):
            out.append(Finding("golangci-lint", L, ToolSource.PACKAGE_MANIFEST, MEDIUM, gomod))
    cargo_rel = join(directory, "Cargo.toml")
    cargo = reader.toml(cargo_rel)
    if cargo is not None:
        channel = ""
        toolchain = reader.toml(join(directory, "rust-toolchain.toml")) or {}
        if isinstance(toolchain.get("toolchain"), dict):
            channel = str(toolchain["toolchain"].get("channel", ""))
        for tool, cat in (("cargo check", T), ("cargo test", X)):
            out.append(Finding(tool, cat, ToolSource.TOOLCHAIN, HIGH, cargo_rel, version=channel,
                               version_source="manifest" if channel else ""))  # fmt: skip
        lints = cargo.get("lints", cargo.get("workspace", {}).get("lints", {}))
        if isinstance(lints, dict) and "clippy" in lints:
            out.append(Finding("clippy", L, ToolSource.CONFIG_FILE, HIGH, cargo_rel))
    return out


def other_manifests(reader: ConfinedReader, directory: str) -> list[Finding]:
    out: list[Finding] = []
    gemfile = join(directory, "Gemfile")
    gems = re.findall(r"""^\s*gem\s+['"]([\w-]+)['"]""", reader.text(gemfile) or "", re.MULTILINE)
    out += _deps(gemfile, [(g, "") for g in gems])
    composer_rel = join(directory, "composer.json")
    composer = reader.json(composer_rel)
    if isinstance(composer, dict):
        dev = composer.get("require-dev", {})
        out += _deps(composer_rel, [(k, str(v)) for k, v in dev.items()] if isinstance(dev, dict)
                     else [])  # fmt: skip
    return out
