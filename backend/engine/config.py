"""EngineConfig: where an engine keeps its data, the workspace it serves, and overrides."""

from __future__ import annotations

from pathlib import Path

from pydantic import BaseModel, ConfigDict, field_validator

from backend.config.approvals import ApprovalMode
from backend.workspace.confinement import Confinement

DATA_FILES = ("sylk.db", "sylk.db-wal", "sylk.db-shm", "sylk.log")


class EngineConfig(BaseModel):
    model_config = ConfigDict(frozen=True)
    data_dir: Path
    workspace: Path
    config_file: Path | None = None
    provider: str | None = None
    model: str | None = None
    # Index workspaces and follow their edits (off only for tests that need neither).
    watch_files: bool = True
    # `sylk run --approval MODE` / `--yes`: this process's approval mode, over every
    # session's (None: each session's own, else the config's), and yes to every question.
    approval_mode: ApprovalMode | None = None
    assume_yes: bool = False
    # An approved plan's DAG starts at once (False: only orchestrator.dag.execute starts it).
    run_approved_plans: bool = True

    @field_validator("workspace")
    @classmethod
    def _real_workspace(cls, value: Path) -> Path:
        resolved = value.expanduser().resolve()
        if not resolved.is_dir():
            raise ValueError(f"workspace {value} is not a directory")
        return resolved

    def confinement(self, workspace: Path | None = None, *, network: bool = False) -> Confinement:
        """What agents working in ``workspace`` never touch: Sylk's data dir (the
        archive, every session's history, the log) and its config (API keys)."""
        config = self.config_file
        return Confinement.of(
            workspace or self.workspace,
            self.data_dir,
            *(self.data_dir / name for name in DATA_FILES),
            config,
            config.parent if config is not None else None,
            network=network,
        )
