"""Fixtures shared by every test tier: a real data dir, a real workspace, an engine."""

from __future__ import annotations

from collections.abc import AsyncIterator
from pathlib import Path

import pytest

from backend.engine import Engine, EngineConfig


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
async def engine(engine_config: EngineConfig) -> AsyncIterator[Engine]:
    eng = Engine(engine_config)
    try:
        yield eng
    finally:
        await eng.aclose()
