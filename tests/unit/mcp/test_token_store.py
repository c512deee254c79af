"""The bearer-token file of ``sylk mcp serve`` and the scopes a token grants.

Real files in a temporary data dir: a token is made once and kept at mode 0600
whatever the umask; a file that group or others may read, that is someone else's,
a symlink or not JSON is refused with a typed error naming the fix; rotation replaces
one token and a store already holding the old value sees the new one at once.
"""

from __future__ import annotations

import json
import os
import stat
from pathlib import Path

import pytest
from pydantic import ValidationError

from backend.config.mcp_server_auth import McpServerAuthSettings
from backend.config.settings import SylkConfig
from backend.errors import ErrorKind
from backend.mcp.server.auth import Grant
from backend.mcp.server.auth.token_store import TOKEN_FILE, TokenFileError, TokenStore


def test_tokens_are_made_once_private_and_identified(data_dir: Path) -> None:
    old_umask = os.umask(0)  # a careless umask must not leave the file readable
    try:
        store = TokenStore(data_dir)
        assert store.tokens() == {}
        assert store.ensure(["default", "ci"]) == ["default", "ci"]
    finally:
        os.umask(old_umask)
    assert store.ensure(["default", "ci"]) == []  # made once
    info = (data_dir / TOKEN_FILE).stat()
    assert stat.S_IMODE(info.st_mode) == 0o600
    tokens = store.tokens()
    assert len(tokens["default"]) >= 43 and tokens["default"] != tokens["ci"]
    assert store.identify(tokens["ci"]) == "ci"
    assert store.identify(tokens["ci"] + "x") is None
    assert store.identify("") is None
    assert not [p for p in data_dir.iterdir() if p.name.startswith(".")]  # no temp left


def test_rotation_is_seen_at_once_by_a_store_that_read_the_old(data_dir: Path) -> None:
    serving, commanding = TokenStore(data_dir), TokenStore(data_dir)
    serving.ensure(["default", "ci"])
    old = serving.tokens()
    commanding.rotate("ci")
    assert serving.identify(old["ci"]) is None  # the running server's store re-reads
    assert serving.identify(commanding.tokens()["ci"]) == "ci"
    assert serving.identify(old["default"]) == "default"  # the other token stays


@pytest.mark.parametrize("mode", [0o640, 0o604, 0o660, 0o622])
def test_a_file_others_may_read_or_change_is_refused(data_dir: Path, mode: int) -> None:
    store = TokenStore(data_dir)
    store.ensure(["default"])
    (data_dir / TOKEN_FILE).chmod(mode)
    with pytest.raises(TokenFileError) as caught:
        TokenStore(data_dir).tokens()
    assert caught.value.error_kind is ErrorKind.DENIED
    assert f"{mode:04o}" in caught.value.message
    assert "chmod 600" in caught.value.help_hint and "rotate" in caught.value.help_hint
    with pytest.raises(TokenFileError):  # a store that had read it refuses too
        store.identify("anything")


def test_a_symlink_someone_elses_file_or_garbage_is_refused(data_dir: Path, tmp_path: Path) -> None:
    target = tmp_path / "elsewhere.json"
    target.write_text(json.dumps({"default": "known"}))
    target.chmod(0o600)
    path = data_dir / TOKEN_FILE
    path.symlink_to(target)
    with pytest.raises(TokenFileError):
        TokenStore(data_dir).tokens()
    with pytest.raises(TokenFileError):  # nor is it written through
        TokenStore(data_dir).ensure(["default"])
    assert json.loads(target.read_text()) == {"default": "known"}
    path.unlink()

    path.write_text(json.dumps({"default": "known"}))
    path.chmod(0o600)
    os.chown(path, 54321, -1)  # root in the tests: give it away
    with pytest.raises(TokenFileError, match="belongs to uid 54321"):
        TokenStore(data_dir).tokens()
    path.unlink()

    for garbage in ("not json", "[1, 2]", '{"default": 7}', '{"default": ""}'):
        path.write_text(garbage)
        path.chmod(0o600)
        with pytest.raises(TokenFileError, match="not a JSON object"):
            TokenStore(data_dir).tokens()


def test_rotating_over_a_symlink_replaces_it_and_leaves_its_target_alone(
    data_dir: Path, tmp_path: Path
) -> None:
    target = tmp_path / "victim.json"
    target.write_text("{}")
    (data_dir / TOKEN_FILE).symlink_to(target)
    store = TokenStore(data_dir)
    with pytest.raises(TokenFileError):  # the rotation reads first, and refuses
        store.rotate("default")
    assert target.read_text() == "{}"


def test_grants_by_domain_route_and_resource() -> None:
    grant = Grant(
        "ci", ("domain:librarian", "route:archivalist.chronicle.query", "resource:library")
    )
    assert grant.allows_op("librarian.code.search")
    assert grant.allows_op("archivalist.chronicle.query")
    assert not grant.allows_op("archivalist.chronicle.store")
    assert not grant.allows_op("librarianx.code.search")  # a domain is a whole segment
    assert grant.allows_resource("sylk://library")
    assert grant.allows_resource("sylk://library/errors/retries-backoff")
    assert not grant.allows_resource("sylk://library-evil/x")
    assert not grant.allows_resource("sylk://sessions/abc")
    assert not grant.allows_resource("file:///library/x")
    globbed = Grant("g", ("route:librarian.code.*",))
    assert globbed.allows_op("librarian.code.search") and not globbed.allows_op("librarian.x")
    assert not globbed.allows_resource("sylk://library")  # no resource scope: none
    everything = Grant("default")
    assert everything.unrestricted and everything.allows_op("anything.at.all")


def test_the_config_surface() -> None:
    config = SylkConfig.model_validate(
        {"mcp_server": {"tokens": {"ci": {"scopes": ["domain:librarian", "resource:library"]}}}}
    )
    settings = config.mcp_server
    assert settings.token_names() == ["default", "ci"]
    assert settings.grant("ci").scopes == ("domain:librarian", "resource:library")
    assert settings.grant("default").scopes == ()
    assert settings.requires_token(allow_remote=False)  # a token is configured
    assert not McpServerAuthSettings().requires_token(allow_remote=False)
    assert McpServerAuthSettings().requires_token(allow_remote=True)
    assert McpServerAuthSettings(require_token=True).requires_token(allow_remote=False)
    for bad in (
        {"tokens": {"ci": {"scopes": ["librarian"]}}},  # no level
        {"tokens": {"ci": {"scopes": ["tenant:x"]}}},  # no such level
        {"tokens": {"ci": {"scopes": ["domain:a b"]}}},
        {"tokens": {"CI!": {}}},  # a name the command line could not take
        {"tokens": {"ci": {"scopes": [], "token": "inline"}}},  # values never in the config
    ):
        with pytest.raises(ValidationError):
            McpServerAuthSettings.model_validate(bad)
