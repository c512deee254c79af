"""A session with everything an export carries, and secrets planted wherever they can hide.

Made through the real engine and the scripted model: an Architect turn that creates a
plan (approved by --yes, not run), an engineer turn that reads a file holding secrets and
edits it (tool output, a diff), and user lines that quote keys. Every planted secret is
in :data:`PLANTED`; an export must contain none of them.
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from pathlib import Path

from backend.config.approvals import ApprovalMode, ApprovalSettings
from backend.config.settings import load_config
from backend.engine import Engine, EngineConfig
from backend.engine.build import build
from backend.sessions.models import Session
from tests.support.engine_env import engine_env
from tests.support.scripted import execute, read_then_edit

PROVIDER_KEY = "sk-planted-provider-key-0123456789"  # configured: the redactor knows it
BEARER = "plantedbearer0123456789abcdef"  # quoted in a header: known to nobody
ENV_SECRET = "planted-env-value-0123456789"  # in the environment as MY_SERVICE_TOKEN
MCP_TOKEN = "planted-mcp-token-0123456789abcdef"  # sylk mcp serve's token file
FILE_KEY = "AKIAPLANTEDKEY012345"  # an AWS-shaped key in a workspace file
PLANTED = (PROVIDER_KEY, BEARER, ENV_SECRET, MCP_TOKEN, FILE_KEY)

PLAN = {"id": "p1", "prompt": "add a --verbose flag", "nodes": [
    {"id": "t1", "agent": "librarian", "prompt": "Find the CLI's flag parsing"},
    {"id": "e1", "agent": "engineer", "prompt": "Add the flag", "depends_on": ["t1"]},
]}  # fmt: skip


@dataclass
class Planted:
    session: Session
    data_dir: Path
    workspace: Path
    env: dict[str, str]


async def planted_session(tmp_path: Path, data_dir: Path, workspace: Path) -> Planted:
    (workspace / "app.py").write_text(f"x = 1\naws = '{FILE_KEY}'\n")
    (data_dir / "mcp_tokens.json").write_text(json.dumps({"default": MCP_TOKEN}))
    (data_dir / "mcp_tokens.json").chmod(0o600)
    turns = [
        {"text": "Planning.", "tool_calls": [execute("architect.plan.create", plan=PLAN)]},
        {"text": "Plan p1 is approved."},
        *read_then_edit("app.py", "x = 1", "x = 2", said=f"x is 2 now; key {PROVIDER_KEY}."),
    ]
    script = tmp_path / "script.json"
    script.write_text(json.dumps({"turns": turns}))
    env = {"SYLK_SCRIPT": str(script), "OPENAI_API_KEY": PROVIDER_KEY,
           "MY_SERVICE_TOKEN": ENV_SECRET}  # fmt: skip
    settings = load_config(None, env=engine_env(env))
    settings = settings.model_copy(update={"approvals": ApprovalSettings(mode=ApprovalMode.AUTO)})
    config = EngineConfig(data_dir=data_dir, workspace=workspace, provider="scripted",
                          assume_yes=True, run_approved_plans=False, watch_files=False)  # fmt: skip
    engine = Engine.from_parts(build(config, settings))
    try:
        session = await engine.create_session("planted <b>&</b>")
        await engine.submit(session.id, "@architect add a --verbose flag")
        await engine.submit(
            session.id,
            f"@engineer set x to 2; curl -H 'Authorization: Bearer {BEARER}' with {ENV_SECRET} "
            f"and {MCP_TOKEN}",
        )
        session = engine.get_session(session.id)
    finally:
        await engine.aclose()
    return Planted(session, data_dir, workspace, env)
