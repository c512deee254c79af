"""Which provider and model a role uses: flags, [agents.ROLE], default_provider, the seed.

The README's own sample config is read from README.md, so the two cannot drift.
"""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from backend.config.settings import load_config
from backend.llm.errors import ProviderNotConfiguredError
from backend.llm.selection import choose_model

README = Path(__file__).resolve().parents[3] / "README.md"
KEYS = {"ANTHROPIC_API_KEY": "a" * 24, "OPENAI_API_KEY": "o" * 24}


def _readme_config(tmp_path: Path) -> Path:
    """The first toml block under README's "## Models" heading, written to a file."""
    models = README.read_text(encoding="utf-8").split("## Models", 1)[1]
    block = re.search(r"```toml\n(.*?)```", models, re.DOTALL)
    assert block is not None, "README's Models section lost its sample config"
    path = tmp_path / "config.toml"
    path.write_text(block.group(1), encoding="utf-8")
    return path


def test_the_readme_sample_keeps_the_engineers_own_model(tmp_path: Path) -> None:
    config = load_config(_readme_config(tmp_path), env=KEYS)
    engineer = choose_model(config, "engineer")
    assert (engineer.provider, engineer.model) == ("anthropic", "claude-opus-4-5")
    assert engineer.reason == "[agents.engineer]"
    # Roles without an entry of their own go to default_provider, not the seed's table.
    for role in ("architect", "guide", "tester"):
        chosen = choose_model(config, role)
        assert (chosen.provider, chosen.model, chosen.reason) == (
            "local",
            "qwen2.5-coder",
            "default_provider",
        )


def test_a_roles_own_provider_without_a_key_is_an_error_naming_both(tmp_path: Path) -> None:
    config = load_config(_readme_config(tmp_path), env={})
    with pytest.raises(ProviderNotConfiguredError) as info:
        choose_model(config, "engineer")
    message = str(info.value)
    assert "'anthropic'" in message and "[agents.engineer]" in message
    assert "ANTHROPIC_API_KEY" in message
    assert choose_model(config, "architect").provider == "local"  # others are unaffected


def test_an_explicit_provider_overrides_every_role(tmp_path: Path) -> None:
    path = _readme_config(tmp_path)
    config = load_config(path, env=KEYS)
    flagged = choose_model(config, "engineer", provider="local")
    assert (flagged.provider, flagged.model) == ("local", "qwen2.5-coder")
    assert choose_model(config, "engineer", provider="local", model="m2").model == "m2"
    from_env = load_config(path, env={**KEYS, "SYLK_PROVIDER": "openai"})
    assert choose_model(from_env, "engineer").provider == "openai"
    assert choose_model(from_env, "architect").provider == "openai"


def test_default_model_applies_to_roles_without_their_own_model(tmp_path: Path) -> None:
    config = load_config(_readme_config(tmp_path), env={**KEYS, "SYLK_MODEL": "tiny"})
    assert choose_model(config, "architect").model == "tiny"
    assert choose_model(config, "engineer").model == "claude-opus-4-5"


def test_the_seed_table_applies_only_without_a_default_provider() -> None:
    config = load_config(None, env=KEYS)
    assert choose_model(config, "engineer").model == "claude-opus-4-5"
    assert choose_model(config, "guide").model == "claude-haiku-4-5"
    # With default_provider = anthropic, the seed's model for that provider still fits.
    anthropic = config.model_copy(update={"default_provider": "anthropic"})
    architect = choose_model(anthropic, "architect")
    assert (architect.provider, architect.reason) == ("anthropic", "default_provider")
    assert choose_model(anthropic, "guide").model == "claude-haiku-4-5"
