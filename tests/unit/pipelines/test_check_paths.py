"""Paths into a tool's command line: inside the workspace only, never read as an option."""

from __future__ import annotations

from pathlib import Path

import pytest

from backend.knowledge.tool_discovery.models import ToolCategory
from backend.pipelines.checks.check_table import command_for
from backend.pipelines.checks.paths import as_argument, reported_path, workspace_relative
from backend.pipelines.checks.results import CheckPathError

ROOT = Path("/ws")


def test_relative_and_absolute_paths_inside_are_kept() -> None:
    assert workspace_relative("./pkg//a.py", ROOT) == "pkg/a.py"
    assert workspace_relative("/ws/pkg/a.py", ROOT) == "pkg/a.py"
    assert workspace_relative("pkg/../b.py", ROOT) == "b.py"


@pytest.mark.parametrize(
    "path", ["../etc/passwd", "/etc/passwd", "pkg/../../x", "", "a\x00b", ".."]
)
def test_paths_that_leave_the_workspace_are_refused(path: str) -> None:
    with pytest.raises(CheckPathError) as caught:
        workspace_relative(path, ROOT)
    assert caught.value.error_kind == "invalid"


def test_a_file_named_like_an_option_is_never_one() -> None:
    assert as_argument("--config=evil.toml") == "./--config=evil.toml"
    assert as_argument("pkg/-x.py") == "pkg/-x.py"


def test_reported_paths_outside_stay_as_printed() -> None:
    assert reported_path("/ws/src/a.ts", ROOT) == "src/a.ts"
    assert reported_path("/usr/lib/x.py", ROOT) == "/usr/lib/x.py"


def test_an_old_mypy_gets_its_text_format() -> None:
    new = command_for("mypy", ToolCategory.TYPE_CHECKER, "1.13.0")
    old = command_for("mypy", ToolCategory.TYPE_CHECKER, "1.8.0")
    assert new is not None and "--output" in new.args
    assert old is not None and "--output" not in old.args and "--show-column-numbers" in old.args
    assert command_for("golangci-lint", ToolCategory.LINTER) is None
