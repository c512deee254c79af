"""Configuration: TOML plus environment, typed errors, per-role model choice."""

from __future__ import annotations

from pathlib import Path

import pytest

from backend.config.settings import ConfigError, load_config
from backend.llm.errors import ProviderNotConfiguredError
from backend.llm.selection import choose_model


def _write(tmp_path: Path, text: str) -> Path:
    path = tmp_path / "config.toml"
    path.write_text(text, encoding="utf-8")
    return path


def test_no_file_and_no_env_is_offline(tmp_path: Path) -> None:
    config = load_config(tmp_path / "absent.toml", env={})
    choice = choose_model(config, "architect")
    assert choice.offline and choice.reason == "no provider configured"


def test_keys_come_from_the_environment_and_stay_secret() -> None:
    config = load_config(None, env={"ANTHROPIC_API_KEY": "sk-ant-test-123456"})
    assert config.is_usable("anthropic") and not config.is_usable("openai")
    assert "sk-ant-test-123456" not in repr(config)
    assert "sk-ant-test-123456" not in config.model_dump_json()
    assert config.secrets() == ["sk-ant-test-123456"]


def test_roles_follow_the_seed_table_when_their_provider_is_configured() -> None:
    both = load_config(None, env={"ANTHROPIC_API_KEY": "a" * 20, "OPENAI_API_KEY": "o" * 20})
    assert choose_model(both, "engineer").model == "claude-opus-4-5"
    assert choose_model(both, "architect").model == "gpt-5.2-codex"
    assert choose_model(both, "architect").provider == "openai"
    only_anthropic = load_config(None, env={"ANTHROPIC_API_KEY": "a" * 20})
    fallback = choose_model(only_anthropic, "architect")
    assert (fallback.provider, fallback.reason) == ("anthropic", "fallback")
    assert fallback.model == "claude-sonnet-4-6"


def test_a_local_openai_compatible_server_needs_no_key() -> None:
    config = load_config(None, env={"OPENAI_BASE_URL": "http://127.0.0.1:11434/v1"})
    assert config.is_usable("openai")
    assert choose_model(config, "architect").provider == "openai"


def test_file_settings_and_overrides(tmp_path: Path) -> None:
    path = _write(
        tmp_path,
        """
default_provider = "local"
[providers.local]
kind = "openai"
base_url = "http://127.0.0.1:8080/v1"
default_model = "qwen2.5-coder"
[agents.engineer]
provider = "local"
model = "deepseek-coder"
[prices."qwen2.5-coder"]
input = 0.0
output = 0.0
""",
    )
    config = load_config(path, env={})
    assert choose_model(config, "architect").model == "qwen2.5-coder"
    assert choose_model(config, "engineer").model == "deepseek-coder"
    assert choose_model(config, "architect", model="other").model == "other"
    assert config.price("qwen2.5-coder") is not None
    env_wins = load_config(path, env={"SYLK_MODEL": "from-env"})
    assert choose_model(env_wins, "architect").model == "from-env"


def test_choosing_an_unconfigured_provider_says_how_to_configure_it() -> None:
    config = load_config(None, env={})
    with pytest.raises(ProviderNotConfiguredError) as info:
        choose_model(config, "architect", provider="anthropic")
    assert "ANTHROPIC_API_KEY" in str(info.value)
    with pytest.raises(ConfigError, match="unknown provider 'nope'"):
        choose_model(config, "architect", provider="nope")


@pytest.mark.parametrize(
    ("text", "fragment"),
    [
        ("this is = = not toml", "is not valid TOML"),
        ("[retry]\nmax_attempts = 0", "retry.max_attempts"),
        ("[retry]\nsurprise = 1", "retry.surprise"),
        ('[providers.x]\nkind = "carrier-pigeon"', "providers.x.kind"),
        ('[agents.poet]\nprovider = "anthropic"\nmodel = "m"', "unknown agent role"),
        ('[agents.engineer]\nprovider = "ghost"\nmodel = "m"', "not a configured provider"),
        ('default_provider = "ghost"', "unknown provider 'ghost'"),
    ],
)
def test_a_corrupt_config_gives_a_clear_error(tmp_path: Path, text: str, fragment: str) -> None:
    path = _write(tmp_path, text)
    before = path.read_bytes()
    with pytest.raises(ConfigError) as info:
        load_config(path, env={})
    assert fragment in str(info.value)
    assert path.read_bytes() == before


def test_an_unreadable_config_is_a_config_error(tmp_path: Path) -> None:
    folder = tmp_path / "config.toml"
    folder.mkdir()
    with pytest.raises(ConfigError, match="cannot read config file"):
        load_config(folder, env={})


def test_library_paths_from_the_file_and_the_environment(tmp_path: Path) -> None:
    config_file = tmp_path / "conf" / "config.toml"
    config_file.parent.mkdir()
    config_file.write_text('library_paths = ["notes", "~/shared-library"]\n')
    extra = tmp_path / "team"
    config = load_config(config_file, env={"SYLK_LIBRARY_PATHS": str(extra)})
    folders = config.library_folders()
    assert folders[0] == (tmp_path / "conf" / "notes").resolve()  # relative to the config
    assert folders[1] == (Path.home() / "shared-library").resolve()
    assert folders[2] == extra.resolve()
    bad = tmp_path / "bad.toml"
    bad.write_text("library_paths = 3\n")
    with pytest.raises(ConfigError, match="library_paths"):
        load_config(bad, env={})


def test_a_config_that_is_not_utf8_gives_a_clear_error(tmp_path: Path) -> None:
    path = tmp_path / "config.toml"
    path.write_bytes(b'default_provider = "\xff\xfe"\n')
    with pytest.raises(ConfigError, match="not UTF-8 text") as info:
        load_config(path, env={})
    assert "move the file aside" in str(info.value)
    assert path.read_bytes() == b'default_provider = "\xff\xfe"\n'
