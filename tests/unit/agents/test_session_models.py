"""A session's own models: the run's flag > the session's choice > the config."""

from __future__ import annotations

from pathlib import Path

import pytest

from backend.agents.session_models import (
    ALL_ROLES,
    METADATA_KEY,
    ModelOverride,
    dump,
    effective_choice,
    parse_spec,
    stored,
)
from backend.config.settings import ConfigError, SylkConfig, load_config
from backend.errors import CommandError
from backend.llm.errors import ProviderNotConfiguredError
from backend.sessions.models import Session

KEYS = {"ANTHROPIC_API_KEY": "a" * 24, "OPENAI_API_KEY": "o" * 24}


def _config(tmp_path: Path) -> SylkConfig:
    path = tmp_path / "config.toml"
    path.write_text(
        'default_provider = "local"\n'
        '[providers.local]\nkind = "openai"\nbase_url = "http://127.0.0.1:9/v1"\n'
        'default_model = "qwen"\n'
        '[agents.engineer]\nprovider = "anthropic"\nmodel = "claude-opus-4-5"\n',
        encoding="utf-8",
    )
    return load_config(path, env=KEYS)


def _session(**choices: ModelOverride) -> Session:
    session = Session(name="s", workspace="/tmp")
    session.metadata[METADATA_KEY] = dump(choices)
    return session


def test_the_session_choice_beats_the_config_and_the_run_flag_beats_both(
    tmp_path: Path,
) -> None:
    config = _config(tmp_path)
    session = _session(engineer=parse_spec("openai/gpt-x"))
    chosen = effective_choice(config, "engineer", session)
    assert (chosen.provider, chosen.model) == ("openai", "gpt-x")
    assert chosen.reason == "this session's /model"
    assert effective_choice(config, "architect", session).provider == "local"  # not touched
    flagged = effective_choice(config, "engineer", session, run_provider="local")
    assert (flagged.provider, flagged.model) == ("local", "qwen")
    only_model = effective_choice(config, "engineer", session, run_model="gpt-y")
    assert (only_model.provider, only_model.model) == ("openai", "gpt-y")


def test_a_choice_for_all_roles_yields_to_a_roles_own(tmp_path: Path) -> None:
    config = _config(tmp_path)
    session = _session(
        **{ALL_ROLES: parse_spec("openai"), "tester": parse_spec("local/qwen-small")}
    )
    architect = effective_choice(config, "architect", session)
    assert (architect.provider, architect.model) == ("openai", "gpt-5.2-codex")
    assert effective_choice(config, "engineer", session).provider == "openai"
    assert effective_choice(config, "tester", session).model == "qwen-small"


def test_specs_keep_slashes_in_model_names_and_refuse_empty_parts() -> None:
    assert parse_spec("local/qwen/qwen2.5-coder:7b") == ModelOverride(
        provider="local", model="qwen/qwen2.5-coder:7b"
    )
    assert parse_spec("openai").model is None
    for bad in ("", "/gpt", "openai/"):
        with pytest.raises(CommandError):
            parse_spec(bad)


def test_an_unusable_or_unknown_stored_provider_is_a_typed_error(tmp_path: Path) -> None:
    config = load_config(None, env={})
    with pytest.raises(ProviderNotConfiguredError, match="chosen for the engineer"):
        effective_choice(config, "engineer", _session(engineer=parse_spec("anthropic/x")))
    with pytest.raises(ConfigError, match="unknown provider 'ghost'"):
        effective_choice(config, "engineer", _session(engineer=parse_spec("ghost/x")))


def test_unreadable_stored_choices_are_skipped() -> None:
    metadata = {METADATA_KEY: {"engineer": {"model": "no provider"}, "tester": {"provider": "x"}}}
    assert stored(metadata) == {"tester": ModelOverride(provider="x")}
    assert stored({METADATA_KEY: "garbage"}) == {}
    assert dump({}) is None
