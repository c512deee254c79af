"""One tier 1 pass: read the workspace's files and merge what they say into tools.

Findings about the same (tool, category) from several files become one
:class:`DiscoveredTool`: the strongest evidence sets its confidence and
source, the nearest config file its ``config_path``, the project's own script
its ``run_command``, and every file that mentioned it is kept as evidence.
"""

from __future__ import annotations

import fnmatch
from collections.abc import Callable
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, field
from functools import partial

from backend.knowledge.tool_discovery import rules
from backend.knowledge.tool_discovery.catalog import CATALOG, CATEGORY_WORDS, ToolSpec
from backend.knowledge.tool_discovery.files import (
    ConfinedReader,
    candidates_in,
    census,
    join,
)
from backend.knowledge.tool_discovery.installed import (
    METADATA,
    Installed,
    locate,
    node_version,
    python_version,
)
from backend.knowledge.tool_discovery.models import (
    ConfidenceLevel,
    DiscoveredTool,
    ToolCategory,
    ToolSource,
)
from backend.knowledge.tool_discovery.probe import (
    NODE_SCRIPT,
    ProjectTooling,
    VersionProbe,
    install_command,
    project_tooling,
    run_command,
)
from backend.knowledge.tool_discovery.rules import Finding

SOURCE_ORDER = [
    ToolSource.CONFIG_FILE, ToolSource.PRE_COMMIT, ToolSource.TOOLCHAIN,
    ToolSource.PACKAGE_MANIFEST, ToolSource.BUILD_SCRIPT, ToolSource.CI_CONFIG,
]  # fmt: skip
PROBE_WORKERS = 4
PYTHON_MARKERS = ("pyproject.toml", "setup.py", "setup.cfg", "Pipfile", "requirements*.txt")
MANIFEST_LANGUAGES = {
    "go.mod": "go", "Cargo.toml": "rust", "Gemfile": "ruby", "composer.json": "php",
    "pom.xml": "java", "build.gradle": "java", "build.gradle.kts": "java", "*.csproj": "csharp",
}  # fmt: skip


@dataclass
class ScanResult:
    dirs: list[str]
    languages: list[str]
    language_source: str  # "request", "manifest", "census" or "none"
    tools: list[DiscoveredTool] = field(default_factory=list)
    warnings: list[str] = field(default_factory=list)
    read: set[str] = field(default_factory=set)


def detect_languages(reader: ConfinedReader, dirs: list[str]) -> list[str]:
    found: list[str] = []
    for d in dirs:
        names = [n.rsplit("/", 1)[-1] for n in candidates_in(reader, d)]
        if any(fnmatch.fnmatch(n, m) for n in names for m in PYTHON_MARKERS):
            found.append("python")
        if "package.json" in names:
            pkg = reader.json(join(d, "package.json"))
            deps = {}
            if isinstance(pkg, dict):
                for table in ("dependencies", "devDependencies"):
                    if isinstance(pkg.get(table), dict):
                        deps.update(pkg[table])
            typed = "tsconfig.json" in names or "typescript" in deps
            found.append("typescript" if typed else "javascript")
        found += [lang for n in names for m, lang in MANIFEST_LANGUAGES.items()
                  if fnmatch.fnmatch(n, m)]  # fmt: skip
    if "typescript" in found:
        found = [lang for lang in found if lang != "javascript"]
    return list(dict.fromkeys(found))


def census_languages(counts: dict[str, int]) -> list[str]:
    if not counts:
        return []
    top = max(counts.values())
    ranked = sorted(counts, key=lambda lang: -counts[lang])
    return [lang for lang in ranked if counts[lang] * 5 >= top]


def collect(reader: ConfinedReader, dirs: list[str], tooling: ProjectTooling) -> list[Finding]:
    """Every finding, nearest directory first; a rule that chokes on odd input only warns."""
    findings: list[Finding] = []

    def guarded(what: str, rule: Callable[[], list[Finding]]) -> None:
        try:
            findings.extend(rule())
        except (TypeError, AttributeError, ValueError, KeyError) as exc:
            reader.warnings.append(f"could not understand {what}: {exc}")

    for d in reversed(dirs):
        runner = NODE_SCRIPT[tooling.node_pm]
        runner = f"cd {d} && {runner}" if d else runner
        steps: list[tuple[str, Callable[[], list[Finding]]]] = [
            ("config files", partial(rules.config_files, reader, d)),
            ("pyproject.toml", partial(rules.pyproject, reader, d)),
            ("setup.cfg/tox.ini", partial(rules.ini_files, reader, d)),
            ("requirements", partial(rules.requirements, reader, d)),
            ("package.json", partial(rules.package_json, reader, d, runner)),
            ("Makefile", partial(rules.makefile, reader, d)),
            ("go.mod/Cargo.toml", partial(rules.toolchains, reader, d)),
            ("Gemfile/composer.json", partial(rules.other_manifests, reader, d)),
        ]
        for label, step in steps:
            guarded(join(d, label), step)
    guarded(".pre-commit-config.yaml", lambda: rules.pre_commit(reader))
    guarded("CI workflows", lambda: rules.ci(reader))
    return findings


def _script_score(finding: Finding) -> tuple[int, int, int]:
    words = CATEGORY_WORDS[finding.category]
    name = finding.script_name.lower()
    named = len(words) - words.index(name) if name in words else 0
    # package.json scripts before Makefile targets before tox envs, then shorter names
    kind = 2 if finding.path.endswith("package.json") else 1 if "akefile" in finding.path else 0
    return (named * 2 + (1 if finding.script_only else 0), kind, -len(name))


def _rationale(best: Finding, script: Finding | None) -> str:
    source = {
        ToolSource.CONFIG_FILE: f"configured in {best.path}",
        ToolSource.PRE_COMMIT: f"a pre-commit hook in {best.path}",
        ToolSource.TOOLCHAIN: f"built into the toolchain of {best.path}",
        ToolSource.PACKAGE_MANIFEST: f"a dependency in {best.path}",
        ToolSource.BUILD_SCRIPT: f"run by {best.script or best.path}",
        ToolSource.CI_CONFIG: f"run in CI ({best.path})",
    }[best.source]
    if script is not None and best.source is not ToolSource.BUILD_SCRIPT:
        source += f"; the project runs it with `{script.script}`"
    return source


def merge(
    findings: list[Finding],
    languages: list[str],
    tooling: ProjectTooling,
    *,
    reader: ConfinedReader,
    probe: VersionProbe | None,
    path_env: str | None,
) -> list[DiscoveredTool]:
    groups: dict[tuple[str, ToolCategory], list[Finding]] = {}
    for finding in findings:
        if finding.tool in CATALOG and finding.category in CATALOG[finding.tool].runs:
            groups.setdefault((finding.tool, finding.category), []).append(finding)

    def build(item: tuple[tuple[str, ToolCategory], list[Finding]]) -> DiscoveredTool:
        (name, category), group = item
        spec = CATALOG[name]
        best = max(group, key=lambda f: (f.confidence.rank, -SOURCE_ORDER.index(f.source)))
        scripts = [f for f in group if f.script]
        script = max(scripts, key=_script_score) if scripts else None
        exe = locate(spec, reader, path_env, node_dirs=tooling.node_dirs, scanned=tooling.scanned)
        version, version_source = _version(
            spec, group, tooling, reader=reader, probe=probe, exe=exe, path_env=path_env
        )
        config = next((f.path for f in group if f.source in SOURCE_ORDER[:3]), "")
        return DiscoveredTool(
            name=name, category=category, language=spec.languages(languages),
            version=version, version_source=version_source, config_path=config,
            run_command=script.script if script else run_command(spec, category, tooling),
            install_cmd=install_command(spec, tooling), is_installed=exe is not None,
            source=best.source, confidence=best.confidence,
            rationale=_rationale(best, script),
            evidence=list(dict.fromkeys(f.path for f in group)),
        )  # fmt: skip

    # `<tool> --version` of a tool on PATH can take seconds (pytest imports its plugins).
    with ThreadPoolExecutor(max_workers=PROBE_WORKERS) as pool:
        tools = list(pool.map(build, groups.items()))
    tools.sort(key=lambda t: (t.category.value, -t.confidence.rank, t.name))
    return tools


def _version(
    spec: ToolSpec,
    group: list[Finding],
    tooling: ProjectTooling,
    *,
    reader: ConfinedReader,
    probe: VersionProbe | None,
    exe: Installed | None,
    path_env: str | None,
) -> tuple[str, str]:
    if spec.ecosystem == "python" and spec.package in tooling.python_locks:
        return tooling.python_locks[spec.package], "lock"
    if spec.ecosystem == "node":
        pinned, source = node_version(spec, tooling.node_dirs, reader)
        if pinned:
            return pinned, source
    for kind in ("pre_commit", "pin"):  # exact pins outrank whatever happens to be installed
        pinned_by = next((f for f in group if f.version_source == kind), None)
        if pinned_by is not None:
            return pinned_by.version, kind
    if exe is not None and exe.local:  # the workspace's own code: read about, never run
        if spec.ecosystem == "python" and (found := python_version(spec, tooling.scanned, reader)):
            return found, METADATA
    elif probe is not None and exe is not None:
        found = probe.version(spec.version_argv, exe.path, reader.root, path_env)
        if found:
            return found, "installed"
    manifest = next((f for f in group if f.version), None)
    return (manifest.version, manifest.version_source) if manifest else ("", "")


def scan(
    reader: ConfinedReader,
    dirs: list[str],
    languages: list[str],
    *,
    category: ToolCategory | None,
    probe: VersionProbe | None,
    path_env: str | None,
    target: str,
) -> ScanResult:
    source = "request" if languages else "manifest"
    if not languages:
        languages = detect_languages(reader, dirs)
    if not languages:
        languages = census_languages(census(reader.ws, target))
        source = "census" if languages else "none"
    tooling = project_tooling(reader, dirs)
    findings = [f for f in collect(reader, dirs, tooling) if category in (None, f.category)]
    tools = merge(findings, languages, tooling, reader=reader, probe=probe, path_env=path_env)
    return ScanResult(dirs, languages, source, tools, reader.warnings, reader.read)


__all__ = ["ConfidenceLevel", "ScanResult", "scan"]
