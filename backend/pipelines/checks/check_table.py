"""How Sylk runs each check tool discovery can name, so that its output can be read.

Discovery says *which* tools a project uses and how a person runs them (``ruff check
.``, ``npm run lint``); a project's script prints for people. The inspector needs the
tool's machine format on just the modified files, so it runs the tool itself with the
flags below (its project config still applies: ruff, mypy, eslint read their own
config files). A tool discovery names that is not here is reported as skipped, with
that reason, rather than run blind.

``scope`` says what the tool is given: ``files`` (the modified files with one of its
suffixes), ``packages`` (the folders of the modified files, as Go packages ``./dir``)
or ``project`` (nothing: tsc checks what tsconfig.json names); the inspector keeps only
the issues in modified files. ``ok_codes`` are the exit codes of a run that worked; any
other code with no issue parsed is a crash.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Literal

from backend.knowledge.tool_discovery.models import ToolCategory
from backend.pipelines.checks.format_parsers import parse_file_list, parse_unified_diff
from backend.pipelines.checks.lint_parsers import (
    parse_eslint,
    parse_flake8,
    parse_go_vet,
    parse_mypy,
    parse_pyright,
    parse_ruff,
    parse_tsc,
)
from backend.pipelines.checks.results import InspectionIssue

Parser = Callable[[str, str, Path], list[InspectionIssue]]
L, F, T = ToolCategory.LINTER, ToolCategory.FORMATTER, ToolCategory.TYPE_CHECKER
PY = (".py", ".pyi")
JS = (".js", ".jsx", ".mjs", ".cjs", ".ts", ".tsx", ".mts", ".cts", ".vue")
TS = (".ts", ".tsx", ".mts", ".cts")
GO = (".go",)
PRETTIER = (*JS, ".json", ".css", ".scss", ".md", ".yaml", ".yml", ".html")
MYPY_JSON_SINCE = (1, 11)  # the first mypy with --output json


@dataclass(frozen=True)
class CheckCommand:
    tool: str
    category: ToolCategory
    executable: str
    args: tuple[str, ...]
    suffixes: tuple[str, ...]
    parse: Parser
    ecosystem: str
    scope: Literal["files", "packages", "project"] = "files"
    ok_codes: frozenset[int] = frozenset({0, 1})


def _check(  # noqa: PLR0917 - a table row, read as one line
    tool: str,
    category: ToolCategory,
    exe: str,
    args: tuple[str, ...],
    suffixes: tuple[str, ...],
    parse: Parser,
    eco: str,
    **kw: object,
) -> CheckCommand:
    return CheckCommand(tool, category, exe, args, suffixes, parse, eco, **kw)  # type: ignore[arg-type]


CHECKS: dict[tuple[str, ToolCategory], CheckCommand] = {
    (c.tool, c.category): c
    for c in (
        _check(
            "ruff",
            L,
            "ruff",
            ("check", "--output-format", "json", "--no-cache", "--force-exclude", "--quiet"),
            PY,
            parse_ruff,
            "python",
        ),
        _check(
            "ruff",
            F,
            "ruff",
            ("format", "--check", "--diff", "--no-cache", "--force-exclude"),
            PY,
            parse_unified_diff("ruff", "ruff format"),
            "python",
        ),
        _check(
            "black",
            F,
            "black",
            ("--check", "--diff", "--quiet"),
            PY,
            parse_unified_diff("black", "black"),
            "python",
            ok_codes=frozenset({0, 1}),
        ),
        _check("flake8", L, "flake8", (), PY, parse_flake8, "python"),
        _check(
            "mypy",
            T,
            "mypy",
            ("--output", "json", "--no-error-summary", "--no-color-output", "--no-pretty"),
            PY,
            parse_mypy,
            "python",
            ok_codes=frozenset({0, 1, 2}),
        ),
        _check("pyright", T, "pyright", ("--outputjson",), PY, parse_pyright, "python"),
        _check("basedpyright", T, "basedpyright", ("--outputjson",), PY, parse_pyright, "python"),
        _check("eslint", L, "eslint", ("--format", "json"), JS, parse_eslint, "node"),
        _check(
            "prettier",
            F,
            "prettier",
            ("--list-different",),
            PRETTIER,
            parse_file_list("prettier"),
            "node",
        ),
        _check(
            "tsc",
            T,
            "tsc",
            ("--noEmit", "--pretty", "false"),
            TS,
            parse_tsc,
            "node",
            scope="project",
            ok_codes=frozenset({0, 1, 2}),
        ),
        _check("go vet", T, "go", ("vet",), GO, parse_go_vet, "go", scope="packages"),
        _check(
            "gofmt",
            F,
            "gofmt",
            ("-l",),
            GO,
            parse_file_list("gofmt"),
            "go",
            ok_codes=frozenset({0}),
        ),
    )
}

# mypy before 1.11 prints only its classic lines; parse_mypy reads both.
MYPY_TEXT_ARGS = (
    "--no-error-summary",
    "--show-column-numbers",
    "--show-error-codes",
    "--no-color-output",
    "--no-pretty",
)


def command_for(tool: str, category: ToolCategory, version: str = "") -> CheckCommand | None:
    """How to run ``tool`` for ``category``; a mypy older than 1.11 gets its text format."""
    command = CHECKS.get((tool, category))
    if command is not None and tool == "mypy" and _older(version, MYPY_JSON_SINCE):
        return _check(
            "mypy",
            T,
            "mypy",
            MYPY_TEXT_ARGS,
            PY,
            parse_mypy,
            "python",
            ok_codes=frozenset({0, 1, 2}),
        )
    return command


def _older(version: str, than: tuple[int, int]) -> bool:
    parts = version.strip().lstrip("v").split(".")
    try:
        numbers = (int(parts[0]), int(parts[1]) if len(parts) > 1 else 0)
    except ValueError:
        return False  # unknown: assume a current version
    return numbers < than
