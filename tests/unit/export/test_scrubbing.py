"""The export scrubber: what the redactor knows, the environment's credentials, the MCP
token file, and text shaped like a key, all gone; ordinary words and numbers kept."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from backend.mcp.server.auth import token_store
from backend.redaction import Redactor
from sylk_tui.export import scrubbing
from sylk_tui.export.scrubbing import Scrubber


def test_the_token_file_is_the_one_the_mcp_server_writes() -> None:
    assert scrubbing.TOKEN_FILE == token_store.TOKEN_FILE


@pytest.mark.parametrize(
    ("text", "kept"),
    [
        ("Authorization: Bearer abcdefghijklmnop", "Authorization: Bearer [redacted]"),
        ("key sk-ant-api03-abcdefghijklmnop here", "key [redacted] here"),
        ("ghp_abcdefghijklmnopqrstuvwxyz0123", "[redacted]"),
        ("AKIAABCDEFGHIJKLMNOP", "[redacted]"),
        ("API_KEY=hunter2hunter2", "API_KEY=[redacted]"),
        ('"client_secret": "s3cr3t-value"', '"client_secret": "[redacted]"'),
        ("input_tokens: 12345678", "input_tokens: 12345678"),  # a count, not a secret
        ("the tokenizer splits words", "the tokenizer splits words"),
    ],
)
def test_text_shaped_like_a_credential_is_scrubbed(text: str, kept: str) -> None:
    assert Scrubber(Redactor()).text(text) == kept


def test_known_environment_and_token_file_secrets_are_scrubbed_in_nested_data(
    tmp_path: Path,
) -> None:
    (tmp_path / "mcp_tokens.json").write_text(json.dumps({"default": "tok-from-the-file-123"}))
    env = {"MY_SERVICE_TOKEN": "value-from-env-123", "HOME": "/home/someone"}
    scrub = Scrubber.for_export(Redactor(["configured-key-123"]), data_dir=tmp_path, environ=env)
    data = {"a": ["configured-key-123", ("value-from-env-123",)], "tok-from-the-file-123": 1}
    assert scrub.data(data) == {"a": ["[redacted]", ("[redacted]",)], "[redacted]": 1}
    assert scrub.text("/home/someone/project") == "/home/someone/project"


def test_a_missing_or_garbled_token_file_scrubs_nothing_more(tmp_path: Path) -> None:
    assert scrubbing.token_store_secrets(tmp_path) == []
    (tmp_path / "mcp_tokens.json").write_text("[not json")
    assert scrubbing.token_store_secrets(tmp_path) == []


def test_the_values_of_credential_shapes_are_found_to_scrub_a_picture() -> None:
    scrub = Scrubber(Redactor())
    found = scrub.secrets_in("curl -H 'Authorization: Bearer tok0123456789' sk-abcdefghijkl")
    assert found == ["tok0123456789", "sk-abcdefghijkl"]
    wrapped = "Authorization: Bearer</text><text>tok0123456789</text>"
    assert "tok0123456789" not in scrub.knowing(found).text(wrapped)
