"""What each entry point loads before it does its work: the guard on start-up cost.

Every module imported before the TUI's first frame, or before ``sylk run`` answers,
is paid for at every start. The MCP SDK, the model vendors' SDKs and numpy are needed
only by the one command or provider that uses them, so they load behind the functions
that do (a fresh interpreter per check: ``sys.modules`` says what loaded, not a clock).
"""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
OPTIONAL = frozenset({"mcp", "mcp_types", "openai", "anthropic", "numpy", "uvicorn", "starlette"})
"""Loaded only by ``sylk mcp serve``, a configured vendor's provider or semantic search."""
ENGINE = frozenset({"backend.engine", "sqlalchemy", "sqlmodel", "watchdog", "pydantic"})
"""Loaded by the TUI only after its first frame (the engine is built in a worker): the
engine's models and the settings model (pydantic) too, a third of the first frame."""
ORM = frozenset({"sqlmodel", "sqlalchemy.orm"})
"""The archive is read and written with SQLAlchemy Core alone; the ORM is a third of
SQLAlchemy's import and nothing needs it."""
WATCHING = frozenset({"watchdog"})
"""Loaded when a watcher starts (the TUI indexes the workspace; ``sylk run`` does not)."""


def loaded_after(statement: str) -> set[str]:
    """Every module (top-level package and dotted name) a fresh interpreter holds after
    running ``statement``."""
    probe = f"{statement}\nimport sys\nprint('\\n'.join(sorted(sys.modules)))"
    done = subprocess.run(
        [sys.executable, "-c", probe], cwd=ROOT, capture_output=True, text=True, check=True
    )
    names = set(done.stdout.split())
    return names | {name.split(".")[0] for name in names}


@pytest.mark.parametrize(
    "statement",
    [
        "import sylk_tui.app",
        "import sylk_tui.cli",
        "import sylk_tui.cli, sylk_tui.app",
        "import backend.engine",
        "import backend.mcp.server.auth.token_store",  # `sylk mcp token show`: a file read
    ],
)
def test_no_entry_point_loads_the_mcp_sdk_vendor_sdks_or_numpy(statement: str) -> None:
    assert loaded_after(statement) & OPTIONAL == set()


def test_the_tui_draws_its_first_frame_before_it_loads_the_engine_or_the_archive() -> None:
    assert loaded_after("import sylk_tui.cli, sylk_tui.app") & ENGINE == set()


def test_a_built_engine_loads_no_optional_sdk_nor_the_orm_nor_watchdog(tmp_path: Path) -> None:
    """Building the engine (as ``sylk run`` does, offline) leaves the SDKs, the ORM and
    the file watcher's library unloaded too."""
    workspace = tmp_path / "ws"
    workspace.mkdir()
    build = (
        "import asyncio\n"
        "from pathlib import Path\n"
        "from backend.engine import Engine, EngineConfig\n"
        f"engine = Engine(EngineConfig(data_dir=Path({str(tmp_path / 'data')!r}), "
        f"workspace=Path({str(workspace)!r})))\n"
        "asyncio.run(engine.aclose())"
    )
    assert loaded_after(build) & (OPTIONAL | ORM | WATCHING) == set()
