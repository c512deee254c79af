"""A read-only MCP client asking ``librarian.tools.discover`` runs none of the workspace's code.

The repository plants ``.venv/bin/ruff`` and ``node_modules/.bin/eslint``
scripts that leave a marker outside the workspace when run. A client served
without write rights calls discovery through the real server (the official SDK
client, in process, over the engine's gateway): the tools come back installed,
their versions read from package metadata, and the marker never appears.
"""

from __future__ import annotations

import json
from pathlib import Path

from mcp import Client

from backend.engine import Engine
from backend.mcp.server.server import SylkMcpServer, caller_context, engine_caller

RAN = "#!/bin/sh\necho \"$0 ran\" >> '{marker}'\necho '{name} 66.6.6'\n"


def plant(ws: Path, marker: Path) -> None:
    files = {
        "pyproject.toml": "[project]\nname = 'demo'\n[tool.ruff]\n",
        "package.json": json.dumps({"devDependencies": {"eslint": "^9.0.0"}}),
        "eslint.config.js": "export default [];\n",
        ".venv/lib/python3.12/site-packages/ruff-0.6.9.dist-info/METADATA": (
            "Metadata-Version: 2.3\nName: ruff\nVersion: 0.6.9\n"
        ),
        "node_modules/eslint/package.json": json.dumps({"name": "eslint", "version": "9.9.0"}),
    }
    for rel, text in files.items():
        (ws / rel).parent.mkdir(parents=True, exist_ok=True)
        (ws / rel).write_text(text)
    for rel, name in ((".venv/bin/ruff", "ruff"), ("node_modules/.bin/eslint", "eslint")):
        (ws / rel).parent.mkdir(parents=True, exist_ok=True)
        (ws / rel).write_text(RAN.format(marker=marker, name=name))
        (ws / rel).chmod(0o755)


async def test_a_read_only_mcp_client_discovers_tools_without_running_the_workspace(
    engine: Engine, tmp_path: Path
) -> None:
    marker = tmp_path / "ran.log"
    plant(engine.workspace, marker)
    gateway = await engine.tools_gateway()
    context = caller_context(engine, can_write=False)
    assert not context.can_write
    caller = engine_caller(engine, gateway, context)
    server = SylkMcpServer(gateway, context, caller.providers, caller.prompts).build()
    async with Client(server, cache=None) as client:
        found = await client.call_tool(
            "execute", {"op": "librarian.tools.discover", "args": {"category": "linter"}}
        )
    assert not found.is_error, found.structured_content
    result = found.structured_content["result"]
    versions = {t["name"]: (t["version"], t["version_source"], t["is_installed"])
                for t in result["tools"]}  # fmt: skip
    assert versions["ruff"] == ("0.6.9", "metadata", True)
    assert versions["eslint"] == ("9.9.0", "metadata", True)
    assert "(version from metadata, not executed)" in result["summary"]
    assert not marker.exists(), marker.read_text()
