"""Two teammates' engines on one archive: each built as its own user would build it."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from backend.config.settings import load_config
from backend.config.team import TeamSettings
from backend.engine import Engine, EngineConfig
from backend.engine.build import build
from backend.messages import Message, MessageType


def teammate(
    data_dir: Path, workspace: Path, user: str, url: str | None = None, **settings: Any
) -> Engine:
    """An engine acting for ``user`` ([team] user) on the archive at ``url`` (None: the
    SQLite file in ``data_dir``)."""
    config = load_config(None, env={}).model_copy(
        update={"team": TeamSettings(user=user), "database_url": url, **settings}
    )
    return Engine.from_parts(build(EngineConfig(data_dir=data_dir, workspace=workspace), config))


def said(session_id: str, text: str) -> Message[dict[str, Any]]:
    return Message[dict[str, Any]](
        session_id=session_id, source="user", type=MessageType.USER_INPUT, payload={"text": text}
    )
