"""EngineConfig: where an engine keeps its data, the workspace it serves, and overrides."""

from __future__ import annotations

from pathlib import Path

from pydantic import BaseModel, ConfigDict, field_validator


class EngineConfig(BaseModel):
    model_config = ConfigDict(frozen=True)
    data_dir: Path
    workspace: Path
    config_file: Path | None = None
    provider: str | None = None
    model: str | None = None
    # Index workspaces and follow their edits (off only for tests that need neither).
    watch_files: bool = True

    @field_validator("workspace")
    @classmethod
    def _real_workspace(cls, value: Path) -> Path:
        resolved = value.expanduser().resolve()
        if not resolved.is_dir():
            raise ValueError(f"workspace {value} is not a directory")
        return resolved
