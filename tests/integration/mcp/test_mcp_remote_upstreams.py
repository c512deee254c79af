"""McpHub against real remote MCP servers over streamable HTTP and legacy SSE.

The servers are tests/stubs/mcp_http_upstream.py (the SDK's server under uvicorn) in
child processes on 127.0.0.1, each demanding a bearer token; one per transport serves
the whole module, the kill tests start their own.
"""

from __future__ import annotations

import logging
import os
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from backend.config.mcp_servers import McpConfigError, McpSettings
from backend.config.settings import ConfigError, load_config
from backend.engine import Engine
from backend.engine.build import EngineConfig, build
from backend.errors import ErrorKind
from backend.mcp.client.as_skills import to_skills
from backend.mcp.client.errors import McpServerDownError
from backend.mcp.client.hub import McpHub, ServerState
from backend.skills.models import SkillContext, SkillResult
from tests.support.child_process import ChildProcess
from tests.support.engine_env import engine_env
from tests.support.polling import finishes, until

STUB = Path(__file__).resolve().parents[2] / "stubs" / "mcp_http_upstream.py"
TOKEN = "tok-3f9a7c21d5e8b604"  # what the stubs demand
WRONG = "tok-00badbadbad00bad"
TRANSPORTS = ("streamable_http", "sse")


def serve(
    transport: str, folder: Path, token: str = TOKEN, port: int = 0
) -> tuple[ChildProcess, str]:
    """A stub remote server in a child process, and the URL it printed once listening."""
    child = ChildProcess(
        STUB,
        [transport, token, str(port)],
        cwd=folder,
        env=os.environ,
        stderr=folder / f"{transport}.stderr",
        hang_s=30,
    )
    line = child.lines.get(timeout=child.hang_s)
    assert line is not None and line.startswith("URL "), line
    return child, line.split()[1]


@pytest.fixture(scope="module")
def urls(tmp_path_factory: pytest.TempPathFactory) -> Iterator[dict[str, str]]:
    folder = tmp_path_factory.mktemp("remote")
    served = {transport: serve(transport, folder) for transport in TRANSPORTS}
    yield {transport: url for transport, (_, url) in served.items()}
    for child, _ in served.values():
        child.kill()


@pytest.fixture
def token_env(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("REMOTE_TOKEN", TOKEN)
    monkeypatch.setenv("WRONG_TOKEN", WRONG)
    monkeypatch.delenv("MISSING_TOKEN", raising=False)


def remote(url: str, transport: str, token_ref: str = "${REMOTE_TOKEN}", **more: Any) -> Any:
    return {
        "url": url,
        "transport": transport,
        "headers": {"Authorization": f"Bearer {token_ref}"},
        "startup_timeout_s": 20,
        "timeout_s": 10,
        **more,
    }


def everything_said(hub: McpHub, *errors: BaseException) -> str:
    """Every text a user or model could see about the hub's servers."""
    skills = to_skills(hub)
    texts = [*hub.status_lines(), hub.health_note(), *(str(e) for e in hub.down())]
    texts += [repr(hub.settings), *(repr(e) for e in errors), *(str(e) for e in errors)]
    texts += [f"{s.summary} {s.description}" for s in skills]
    return "\n".join(texts)


@pytest.mark.parametrize("transport", TRANSPORTS)
async def test_remote_tools_become_ops_that_run(
    urls: dict[str, str], transport: str, token_env: None, tmp_path: Path
) -> None:
    settings = McpSettings.model_validate({"servers": {"far": remote(urls[transport], transport)}})
    async with McpHub(settings) as hub:
        [status] = hub.status()
        assert status.state is ServerState.UP and status.pid is None  # no process of ours
        assert "up, 3 tools at http://127.0.0.1:" in status.health
        ops = {tool.op: tool for tool in hub.tools()}
        assert set(ops) == {"far.reverse", "far.add_numbers", "far.whoami"}

        assert (await hub.call("far.reverse", {"text": "sylk"})).text == "klys"
        skills = {skill.op: skill for skill in to_skills(hub)}
        add = skills["far.add_numbers"]
        ctx = SkillContext(session_id="s1", agent="engineer", workspace=tmp_path)
        outcome = await add.handler(ctx, add.params.model_validate({"a": 2, "b": 0.5}))
        assert isinstance(outcome, SkillResult) and outcome.result == {"result": 2.5}
        assert TOKEN not in everything_said(hub)
    assert hub.status()[0].state is ServerState.CLOSED


@pytest.mark.parametrize("transport", TRANSPORTS)
async def test_a_wrong_or_missing_token_is_named_unauthorized_and_never_shown(
    urls: dict[str, str], transport: str, token_env: None, caplog: pytest.LogCaptureFixture
) -> None:
    caplog.set_level(logging.DEBUG)
    settings = McpSettings.model_validate(
        {
            "servers": {
                "wrong": remote(urls[transport], transport, "${WRONG_TOKEN}"),
                "literal": remote(urls[transport], transport, WRONG),
                "bare": {"url": urls[transport], "transport": transport},  # no header at all
            }
        }
    )
    async with McpHub(settings) as hub:
        for status in hub.status():
            assert status.state is ServerState.DOWN, status
            assert "unauthorized" in status.health and "HTTP 401: check headers" in status.health
        with pytest.raises(McpServerDownError, match="unauthorized") as refused:
            await hub.call_tool("wrong", "reverse", {"text": "x"})
        assert refused.value.error_kind is ErrorKind.INTERNAL
        assert "url and headers" in str(refused.value)
        said = everything_said(hub, refused.value) + caplog.text
        assert WRONG not in said and TOKEN not in said
        assert "/mcp" not in "\n".join(hub.status_lines())  # the origin, not the path
    # The redactor is offered the header secrets (as sent and the bare token).
    assert WRONG in settings.secrets() and f"Bearer {WRONG}" in settings.secrets()


async def test_through_the_engine_status_describe_and_execute_never_show_the_token(
    urls: dict[str, str], token_env: None, data_dir: Path, workspace: Path
) -> None:
    servers = McpSettings.model_validate(
        {
            "servers": {
                "far": remote(urls["streamable_http"], "streamable_http"),
                "locked": remote(urls["sse"], "sse", "${WRONG_TOKEN}"),
            }
        }
    )
    settings = load_config(None, env=engine_env()).model_copy(update={"mcp_servers": servers})
    parts = build(EngineConfig(data_dir=data_dir, workspace=workspace), settings)
    engine = Engine.from_parts(parts)
    try:
        await engine.start_tools()
        assert await engine.wait_tools_started(30)
        await until(lambda: "far.reverse" in parts.gateway.registry, what="far's tools as ops")
        session = await engine.ensure_session()
        ctx = SkillContext(session_id=session.id, agent="engineer", workspace=workspace)
        ran = await parts.gateway.execute(ctx, "far.reverse", {"text": "sylk"}, dry_run=False)
        assert ran.ok and "klys" in str(ran.result), ran
        refused = await parts.gateway.execute(ctx, "locked.reverse", {"text": "x"}, dry_run=False)
        assert not refused.ok
        status = engine.status_text(session.id)
        assert "far" in status and "up, 3 tools at http://127.0.0.1:" in status
        assert "unauthorized" in status and "check headers" in status
        described = parts.gateway.describe(ctx, "locked")
        seen = "\n".join(
            [
                status,
                refused.model_dump_json(),
                described.model_dump_json(),
                engine.tool_servers_note(),
            ]
        )
        assert TOKEN not in seen and WRONG not in seen
        assert TOKEN in settings.secrets() and WRONG in settings.secrets()  # the redactor's
    finally:
        await engine.aclose()


async def test_a_missing_variable_is_a_typed_config_error_naming_it(
    urls: dict[str, str], token_env: None
) -> None:
    settings = McpSettings.model_validate(
        {"servers": {"far": remote(urls["sse"], "sse", "${MISSING_TOKEN}")}}
    )
    with pytest.raises(McpConfigError) as missing:
        settings.servers[0].resolved_headers()
    assert missing.value.error_kind is ErrorKind.INVALID
    assert "'far'" in str(missing.value) and "MISSING_TOKEN" in str(missing.value)

    async with McpHub(settings) as hub:
        [status] = hub.status()
        assert status.state is ServerState.DOWN
        assert "environment variable MISSING_TOKEN" in status.health
        with pytest.raises(McpServerDownError, match="variable MISSING_TOKEN, which is not set"):
            await hub.call_tool("far", "reverse", {"text": "x"})


@pytest.mark.parametrize(
    ("entry", "problem"),
    [
        ({"url": "http://mcp.example.com/mcp"}, "plain http to mcp.example.com"),
        ({"url": "http://10.0.0.7:8080/mcp"}, "plain http to 10.0.0.7"),
        ({"url": "ftp://mcp.example.com/mcp"}, "must be http:// or https://"),
        ({"url": "https:///mcp"}, "with a host"),
        ({"url": "https://user:pw@mcp.example.com/"}, "credentials in headers"),
        ({"url": "https://mcp.example.com/", "command": ["x"]}, "exactly one of command"),
        ({"timeout_s": 5}, "exactly one of command"),
        ({"command": ["x"], "headers": {"A": "b"}}, "for a url server only"),
        ({"url": "https://mcp.example.com/", "transport": "websocket"}, "transport"),
        ({"url": "https://mcp.example.com/", "headers": {"Bad Name": "x"}}, "header name"),
    ],
)
def test_bad_remote_entries_are_config_errors_naming_the_server(
    tmp_path: Path, entry: dict[str, Any], problem: str
) -> None:
    body = "\n".join(f"{key} = {_toml(value)}" for key, value in entry.items())
    path = tmp_path / "config.toml"
    path.write_text(f"[mcp_servers.servers.far]\n{body}\n")
    with pytest.raises(ConfigError, match=problem) as bad:
        load_config(path, env=engine_env())
    if "transport" not in entry:
        assert "'far'" in str(bad.value)


def test_insecure_http_only_when_asked_and_https_or_loopback_anywhere() -> None:
    fine = [
        {"url": "http://mcp.example.com/mcp", "allow_insecure": True},
        {"url": "https://mcp.example.com/mcp"},
        {"url": "http://localhost:8080/mcp"},
        {"url": "http://[::1]:8080/mcp"},
    ]
    for entry in fine:
        [server] = McpSettings.model_validate({"servers": {"far": entry}}).servers
        assert server.remote and server.origin().split("://")[1].split("/")[0]
    server = McpSettings.model_validate(
        {"servers": {"far": {"url": "https://h.example:8443/v1/mcp?key=abc123secret"}}}
    ).servers[0]
    assert server.origin() == "https://h.example:8443"  # path and query (a key?) left out


def test_a_header_secret_never_prints_in_a_config_error(tmp_path: Path) -> None:
    path = tmp_path / "config.toml"
    path.write_text(
        "[mcp_servers.servers.far]\n"
        'url = "http://mcp.example.com/mcp"\n'
        f'headers = {{ Authorization = "Bearer {TOKEN}" }}\n'
    )
    with pytest.raises(ConfigError) as bad:
        load_config(path, env=engine_env())
    assert TOKEN not in str(bad.value) and "plain http" in str(bad.value)
    settings = McpSettings.model_validate(
        {"servers": {"far": {"url": "https://x.example/", "headers": {"X-Api-Key": TOKEN}}}}
    )
    assert TOKEN not in repr(settings) and TOKEN in settings.secrets()


def test_headers_resolve_from_the_environment_and_refuse_smuggling() -> None:
    entry = {
        "url": "https://x.example/mcp",
        "headers": {
            "Authorization": "Bearer ${REMOTE_TOKEN}",
            "Accept-Language": "en",  # no credential: the redactor leaves such words alone
        },
    }
    [server] = McpSettings.model_validate({"servers": {"far": entry}}).servers
    env = {"REMOTE_TOKEN": TOKEN}
    sent = server.resolved_headers(env)
    assert sent == {"Authorization": f"Bearer {TOKEN}", "Accept-Language": "en"}
    assert set(server.header_secrets(env)) == {TOKEN, f"Bearer {TOKEN}"}
    with pytest.raises(McpConfigError, match="'Authorization' holds a line break") as smuggled:
        server.resolved_headers({"REMOTE_TOKEN": f"{TOKEN}\r\nX-Admin: yes"})
    assert TOKEN not in str(smuggled.value)


async def test_auto_falls_back_to_sse_and_a_closed_port_is_refused(
    urls: dict[str, str], token_env: None, tmp_path: Path
) -> None:
    closed = _closed_port()
    settings = McpSettings.model_validate(
        {
            "servers": {
                "legacy": remote(urls["sse"], "auto"),
                "nobody": remote(f"http://127.0.0.1:{closed}/mcp", "streamable_http"),
                "elsewhere": remote(urls["streamable_http"].replace("/mcp", "/nope"), "auto"),
            }
        }
    )
    async with McpHub(settings) as hub:
        health = {status.name: status.health for status in hub.status()}
        assert health["legacy"].startswith("up, 3 tools")
        assert (await hub.call("legacy.reverse", {"text": "ab"})).text == "ba"
        assert (
            f"could not connect to http://127.0.0.1:{closed}: connection refused"
            in (health["nobody"])
        )
        assert "not an MCP server" in health["elsewhere"] and "HTTP 404" in health["elsewhere"]


@pytest.mark.parametrize("transport", TRANSPORTS)
async def test_a_server_killed_mid_session_is_down_with_a_reason_and_no_hang(
    transport: str, token_env: None, tmp_path: Path
) -> None:
    child, url = serve(transport, tmp_path)
    settings = McpSettings.model_validate({"servers": {"far": remote(url, transport)}})
    try:
        async with McpHub(settings) as hub:
            assert (await hub.call("far.reverse", {"text": "ab"})).text == "ba"
            child.kill()
            if transport == "sse":  # its event stream ends: noticed with no call in flight
                await until(
                    lambda: hub.status()[0].state is ServerState.DOWN,
                    what="the dropped SSE stream to mark the server down",
                )
            with pytest.raises(McpServerDownError, match="lost its connection to http://127"):
                await finishes(
                    hub.call("far.reverse", {"text": "ab"}), what="a call after the kill"
                )
            [status] = hub.status()
            assert status.state is ServerState.DOWN and "lost its connection" in status.health
            with pytest.raises(McpServerDownError):  # later calls fail fast, same reason
                await finishes(hub.call("far.reverse", {"text": "ab"}), what="a second call")
    finally:
        if child.proc.poll() is None:
            child.kill()


async def test_a_remote_server_back_on_its_port_is_reconnected_by_the_next_call(
    token_env: None, tmp_path: Path
) -> None:
    child, url = serve("streamable_http", tmp_path)
    entry = remote(url, "streamable_http", max_restarts=1)
    settings = McpSettings.model_validate({"servers": {"far": entry}})
    async with McpHub(settings) as hub:
        assert (await hub.call("far.reverse", {"text": "ab"})).text == "ba"
        child.kill()
        with pytest.raises(McpServerDownError, match="lost its connection"):
            await finishes(hub.call("far.reverse", {"text": "ab"}), what="a call after the kill")
        assert "reconnects on the next call (1 left)" in hub.status()[0].health
        port = int(url.rsplit(":", 1)[1].split("/")[0])
        again, same = serve("streamable_http", tmp_path, port=port)
        try:
            assert same == url
            assert (await hub.call("far.reverse", {"text": "cd"})).text == "dc"
            assert hub.status()[0].state is ServerState.UP and hub.status()[0].restarts == 1
        finally:
            again.kill()


def _closed_port() -> int:
    import socket

    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        port: int = sock.getsockname()[1]
    return port


def _toml(value: Any) -> str:
    if isinstance(value, dict):
        return "{ " + ", ".join(f'"{k}" = {_toml(v)}' for k, v in value.items()) + " }"
    if isinstance(value, list):
        return "[" + ", ".join(_toml(v) for v in value) + "]"
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, int | float):
        return str(value)
    return f'"{value}"'
