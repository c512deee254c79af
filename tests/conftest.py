"""Fixtures shared by every test tier: a real data dir, a real workspace, an engine."""

from __future__ import annotations

from collections.abc import AsyncIterator
from pathlib import Path

import pytest

from backend.engine import Engine, EngineConfig
from backend.engine.build import EngineParts, build
from tests.support.engine_env import QUIET_ENV

# The real PostgreSQL server (one per worker) and its fixtures: postgres_url, archive_url.
pytest_plugins = ["tests.support.postgres"]

PROVIDER_ENV = (
    "ANTHROPIC_API_KEY",
    "ANTHROPIC_BASE_URL",
    "OPENAI_API_KEY",
    "OPENAI_BASE_URL",
    "SYLK_PROVIDER",
    "SYLK_MODEL",
    "SYLK_SCRIPT",
    "SYLK_DATA_DIR",
    "SYLK_CONFIG_DIR",
)


def pytest_collection_modifyitems(items: list[pytest.Item]) -> None:
    """Tests marked slow run first: with two workers, a minute-long test dealt out last
    is a minute the other worker waits with nothing to do."""
    items.sort(key=lambda item: item.get_closest_marker("slow") is None)


@pytest.fixture(autouse=True)
def _no_provider_from_the_host(monkeypatch: pytest.MonkeyPatch) -> None:
    """Tests never pick up a real key or endpoint from the machine they run on."""
    for name in PROVIDER_ENV:
        monkeypatch.delenv(name, raising=False)
    # Engines (and `sylk` children) search lexically: a background model load must not
    # change a test's search results halfway. The stage's own tests build it directly.
    # A test with its own env dict for load_config gets the same from engine_env().
    for name, value in QUIET_ENV.items():
        monkeypatch.setenv(name, value)


@pytest.fixture
def data_dir(tmp_path: Path) -> Path:
    path = tmp_path / "data"
    path.mkdir()
    return path


@pytest.fixture
def workspace(tmp_path: Path) -> Path:
    path = tmp_path / "workspace"
    path.mkdir()
    return path


@pytest.fixture
def engine_config(data_dir: Path, workspace: Path) -> EngineConfig:
    return EngineConfig(data_dir=data_dir, workspace=workspace)


@pytest.fixture
async def engine_parts(engine_config: EngineConfig) -> EngineParts:
    """The parts of the ``engine`` fixture, for tests that reach inside it."""
    return build(engine_config)


@pytest.fixture
async def engine(engine_parts: EngineParts) -> AsyncIterator[Engine]:
    eng = Engine.from_parts(engine_parts)
    try:
        yield eng
    finally:
        await eng.aclose()
