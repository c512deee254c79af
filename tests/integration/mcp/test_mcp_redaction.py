"""No reply of ``sylk mcp serve`` carries a configured key: tool results, resources,
prompts and errors, over stdio and over HTTP.

A fake key is configured in a temporary config file; the workspace, a library fragment
and the names a client asks for all contain it. A real server process is spoken to
with the official SDK client, and every reply's wire form is searched for the key.
"""

from __future__ import annotations

import json
import os
import sys
from pathlib import Path
from typing import Any

import pytest
from mcp import Client, StdioServerParameters
from mcp.shared.exceptions import MCPError
from pydantic import BaseModel

from backend.redaction import REDACTED
from tests.integration.mcp.test_mcp_http import http_server, serve_args

ROOT = Path(__file__).resolve().parents[3]
KEY = "sk-ant-api03-mcp-reply-key-0123456789abcdef"
FRAGMENT = f"""---
id: key-rotation
category: secrets
tags: [keys, rotation, credentials]
capabilities:
  - Rotating the provider key {KEY}
useWhen:
  - A key leaked
estimatedTokens: 40
---

# Key rotation

Rotate the provider key {KEY} every month and after every leak.
"""


def configure(data_dir: Path, workspace: Path) -> Path:
    """A config holding the key; a workspace and a library that quote it."""
    config_dir = data_dir / "no-config"  # where the shared helpers point SYLK_CONFIG_DIR
    library = data_dir / "library" / "secrets"
    library.mkdir(parents=True)
    (library / "key-rotation.md").write_text(FRAGMENT)
    config_dir.mkdir(parents=True)
    (config_dir / "config.toml").write_text(
        f'library_paths = ["{library.parent}"]\n\n'
        f'[providers.anthropic]\nkind = "anthropic"\napi_key = "{KEY}"\n'
    )
    (workspace / "settings.py").write_text(
        f'API_KEY = "{KEY}"\n\n\ndef leak():\n    return API_KEY\n'
    )
    return config_dir


def wire(value: Any) -> str:
    """A reply as it travels (or close to it): its JSON."""
    if isinstance(value, BaseModel):
        return value.model_dump_json(by_alias=True)
    return json.dumps(value, default=str)


async def exercise(client: Client) -> list[str]:
    """Every kind of reply that could carry the key; returns their wire forms."""
    replies: list[str] = [client.instructions or ""]
    read = await client.call_tool(
        "execute", {"op": "librarian.file.read", "args": {"path": "settings.py"}}
    )
    assert not read.is_error, read
    replies.append(wire(read))
    missing = await client.call_tool(
        "execute", {"op": "librarian.file.read", "args": {"path": f"{KEY}.txt"}}
    )
    assert missing.is_error  # the path is quoted in the error
    replies.append(wire(missing))
    batch = await client.call_tool(
        "batch",
        {
            "calls": [
                {"verb": "execute", "op": "librarian.file.read", "args": {"path": "settings.py"}}
            ]
        },
    )
    replies.append(wire(batch))

    listed = await client.list_resources()
    uri = "sylk://library/secrets/key-rotation"
    assert uri in {str(r.uri) for r in listed.resources}
    replies.append(wire(listed))
    replies.append(wire(await client.read_resource(uri)))
    replies.append(
        wire(await client.read_resource("sylk://library/match?query=rotate+provider+key"))
    )
    with pytest.raises(MCPError) as unknown:
        await client.read_resource(f"sylk://library/secrets/{KEY}")
    replies.append(wire(unknown.value.error))

    practice = await client.get_prompt("best-practice", {"topic": "rotate a leaked provider key"})
    replies.append(wire(practice))
    replies.append(wire(await client.get_prompt("where-is", {"symbol": "leak"})))
    with pytest.raises(MCPError) as bad_prompt:
        await client.get_prompt(KEY, {})
    replies.append(wire(bad_prompt.value.error))
    return replies


def assert_redacted(replies: list[str]) -> None:
    assert len(replies) == 11
    leaking = [reply[:200] for reply in replies if KEY in reply]
    assert not leaking, leaking
    # The replies did reach the key's places, and the key is shown as redacted there.
    assert sum(REDACTED in reply for reply in replies) >= 9, replies


async def test_stdio_replies_are_redacted(data_dir: Path, workspace: Path) -> None:
    config_dir = configure(data_dir, workspace)
    server = StdioServerParameters(
        command=sys.executable,
        args=serve_args(data_dir, workspace)[1:],
        cwd=ROOT,
        env={**{k: os.environ[k] for k in ("PYTHONPATH", "PATH") if k in os.environ},
             "SYLK_CONFIG_DIR": str(config_dir)},
    )  # fmt: skip
    async with Client(server, cache=None) as client:
        assert_redacted(await exercise(client))


async def test_http_replies_are_redacted(data_dir: Path, workspace: Path) -> None:
    configure(data_dir, workspace)
    async with http_server(data_dir, workspace) as port:
        url = f"http://127.0.0.1:{port}/mcp"
        async with Client(url, cache=None) as client:
            assert_redacted(await exercise(client))
