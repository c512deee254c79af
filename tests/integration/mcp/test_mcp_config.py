"""The [mcp_servers] config section and how server and tool names become op names."""

from __future__ import annotations

import tomllib

import pytest
from pydantic import ValidationError

from backend.config.mcp_servers import McpSettings, domain_for, op_for
from backend.skills.models import OP_NAME

KEYED = """
[mcp_servers.servers.github]
command = ["github-mcp-server", "stdio"]
env = { GITHUB_TOKEN = "ghp_abcdefghijklmnop", LOG_LEVEL = "debug-verbose" }
timeout_s = 15

[mcp_servers.servers."File System"]
command = ["fs-server"]
enabled = false
"""

LISTED = """
[[mcp_servers.servers]]
name = "echo"
command = ["python", "echo.py"]
max_restarts = 1
"""


def test_both_toml_spellings_validate() -> None:
    keyed = McpSettings.model_validate(tomllib.loads(KEYED)["mcp_servers"])
    assert [s.name for s in keyed.servers] == ["github", "File System"]
    github = keyed.servers[0]
    assert github.timeout_s == 15 and github.domain == "github"
    assert github.plain_env()["GITHUB_TOKEN"] == "ghp_abcdefghijklmnop"
    assert "ghp_abcdefghijklmnop" not in repr(keyed)  # env values print masked
    assert keyed.secrets() == ["ghp_abcdefghijklmnop"]  # only credential-looking names
    assert [s.name for s in keyed.enabled()] == ["github"]
    assert keyed.servers[1].domain == "file_system"

    listed = McpSettings.model_validate(tomllib.loads(LISTED)["mcp_servers"])
    assert listed.servers[0].max_restarts == 1 and listed.servers[0].timeout_s == 60
    assert McpSettings().servers == []


@pytest.mark.parametrize(
    ("servers", "problem"),
    [
        ({"echo": {"command": []}}, "at least 1 item"),
        ({"echo": {"command": [" "]}}, "program"),
        ({"librarian": {"command": ["x"]}}, "shadow Sylk's own 'librarian'"),
        ({"My Server": {"command": ["x"]}, "my_server": {"command": ["y"]}}, "distinct name"),
        ({"echo": {"command": ["x"], "timeout_s": 0}}, "greater than 0"),
        ({"echo": {"command": ["x"], "colour": "red"}}, "Extra inputs"),
        ({"echo": {"command": ["x"], "roles": ["wizard"]}}, "unknown role.*'wizard'"),
        ({"echo": {"command": ["x"], "deny": [" "]}}, "glob is empty"),
    ],
)
def test_bad_server_entries_are_rejected(servers: dict[str, object], problem: str) -> None:
    with pytest.raises(ValidationError, match=problem):
        McpSettings.model_validate({"servers": servers})


@pytest.mark.parametrize(
    ("server", "tool", "op"),
    [
        ("echo", "reverse", "echo.reverse"),
        ("GitHub", "createPullRequest", "github.create_pull_request"),
        ("my-server", "files/read.all", "my_server.files_read_all"),
        ("42things", "2fa", "mcp_42things.tool_2fa"),
        ("echo", "add-numbers", "echo.add_numbers"),
        ("fs", "read-file", "fs.read_file"),
        ("weather", "getWeather", "weather.get_weather"),
    ],
)
def test_names_become_valid_ops(server: str, tool: str, op: str) -> None:
    assert op_for(domain_for(server), tool) == op
    assert OP_NAME.match(op)


def test_allow_and_deny_globs_match_either_spelling_and_deny_wins() -> None:
    settings = McpSettings.model_validate(
        {
            "servers": {
                "fs": {
                    "command": ["x"],
                    "allow": ["read_*", "getWeather", "delete*"],
                    "deny": ["delete_*", "*secret*"],
                    "roles": ["librarian", "engineer"],
                }
            }
        }
    )
    fs = settings.servers[0]
    assert fs.offers_tool("read-file") and fs.offers_tool("read_file")  # op spelling
    assert fs.offers_tool("getWeather") and fs.offers_tool("readFile")
    assert not fs.offers_tool("get_weather_now")  # globs are whole-name matches
    assert not fs.offers_tool("delete-all") and not fs.offers_tool("deleteAll")  # deny wins
    assert not fs.offers_tool("read_secret_key")
    assert not fs.offers_tool("write_file")  # no allow glob names it
    assert fs.offered_to("engineer") and not fs.offered_to("tester")

    everything = McpSettings.model_validate({"servers": {"echo": {"command": ["x"]}}}).servers[0]
    assert everything.offers_tool("delete_all") and everything.offered_to("tester")
