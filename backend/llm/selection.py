"""Which provider and model an agent role uses, and building that provider."""

from __future__ import annotations

from dataclasses import dataclass, replace

from backend.config.settings import DEFAULT_AGENT_MODELS, DEFAULT_MODELS, SylkConfig
from backend.llm.errors import ProviderNotConfiguredError
from backend.llm.offline import how_to_configure
from backend.llm.provider import Provider
from backend.llm.scripted import ScriptedProvider

# Tried in this order when a role's own provider is not configured.
FALLBACK_ORDER = ("anthropic", "openai")


@dataclass(frozen=True)
class ModelChoice:
    provider: str
    kind: str
    model: str
    reason: str
    # The output limit from the config (the role's own, else its provider's); None: default.
    max_tokens: int | None = None

    @property
    def offline(self) -> bool:
        return self.kind == "offline"


def _model_for(config: SylkConfig, provider: str, role: str, override: str | None) -> str:
    """The model: the caller's, the role's own entry's (same provider), ``default_model``,
    the seed's (same provider), the provider's ``default_model``, the kind's default."""
    own, seeded = config.agents.get(role), DEFAULT_AGENT_MODELS.get(role)
    if override:
        return override
    if own is not None and own.provider == provider:
        return own.model
    if config.default_model:
        return config.default_model
    if seeded is not None and seeded.provider == provider:
        return seeded.model
    settings = config.provider(provider)
    return settings.default_model or DEFAULT_MODELS[settings.kind]


def _require_usable(config: SylkConfig, name: str, why: str, fix: str = "") -> None:
    """A typed error naming the provider and who asked for it, if it cannot be called."""
    config.provider(name)  # ConfigError for an unknown name
    if not config.is_usable(name):
        hint = how_to_configure(config.source).replace("\n", " ")
        raise ProviderNotConfiguredError(
            f"provider {name!r} is not configured ({why})",
            provider=name,
            help_hint=f"{fix}{hint}",
        )


def choose_model(
    config: SylkConfig,
    role: str,
    *,
    provider: str | None = None,
    model: str | None = None,
) -> ModelChoice:
    """The provider and model for ``role``, with the output limit the config sets for them."""
    choice = _choose(config, role, provider=provider, model=model)
    if choice.offline:
        return choice
    own = config.agents.get(role)
    if own is not None and own.provider == choice.provider and own.max_tokens:
        return replace(choice, max_tokens=own.max_tokens)
    return replace(choice, max_tokens=config.provider(choice.provider).max_tokens)


def _choose(
    config: SylkConfig,
    role: str,
    *,
    provider: str | None = None,
    model: str | None = None,
) -> ModelChoice:
    """The provider and model for ``role``, first found:

    1. an explicit provider (``--provider``, a session's ``/model``, ``SYLK_PROVIDER``);
    2. the role's own ``[agents.ROLE]`` entry;
    3. ``default_provider`` (for the roles without an entry of their own);
    4. the seed's table (:data:`DEFAULT_AGENT_MODELS`) where its provider is usable;
    5. the first usable provider, then the offline provider.

    A provider named in 1-3 that cannot be called raises a typed error naming the
    role and the provider: the user asked for it, so it is never silently swapped.
    """
    explicit = provider or config.env_provider
    if explicit is not None:
        _require_usable(config, explicit, f"chosen for the {role}")
        model_name = _model_for(config, explicit, role, model)
        return ModelChoice(explicit, config.provider(explicit).kind, model_name, "chosen")
    own = config.agents.get(role)
    if own is not None:
        _require_usable(
            config,
            own.provider,
            f"[agents.{role}] assigns it to the {role}",
            fix=f"pass --provider, use /model {role} PROVIDER/MODEL, or remove [agents.{role}]. ",
        )
        kind = config.provider(own.provider).kind
        return ModelChoice(own.provider, kind, model or own.model, f"[agents.{role}]")
    if config.default_provider is not None:
        default = config.default_provider
        _require_usable(config, default, "default_provider")
        model_name = _model_for(config, default, role, model)
        return ModelChoice(default, config.provider(default).kind, model_name, "default_provider")
    seeded = DEFAULT_AGENT_MODELS.get(role)
    if seeded is not None and config.is_usable(seeded.provider):
        kind = config.provider(seeded.provider).kind
        return ModelChoice(seeded.provider, kind, model or seeded.model, f"{role} default")
    others = [n for n, p in config.providers.items() if p.kind not in ("offline", "scripted")]
    for name in [*FALLBACK_ORDER, *sorted(others)]:
        if name in config.providers and config.is_usable(name):
            kind = config.provider(name).kind
            return ModelChoice(name, kind, _model_for(config, name, role, model), "fallback")
    return ModelChoice("offline", "offline", "offline", "no provider configured")


def build_provider(config: SylkConfig, name: str) -> Provider:
    """A fresh provider instance for a configured name (SDK clients load lazily)."""
    settings = config.provider(name)
    key = settings.api_key.get_secret_value() if settings.api_key else None
    if settings.kind == "offline":
        raise ProviderNotConfiguredError(
            "the offline provider makes no model calls",
            provider=name,
            help_hint=how_to_configure(config.source).replace("\n", " "),
        )
    if settings.kind == "scripted":
        if settings.script is None:
            raise ProviderNotConfiguredError(
                "the scripted provider needs a script file",
                provider=name,
                help_hint="set SYLK_SCRIPT=path/to/script.yaml or [providers.scripted] script",
            )
        return ScriptedProvider.from_file(settings.script)
    if settings.kind == "anthropic":
        from backend.llm.anthropic_adapter import AnthropicProvider

        return AnthropicProvider(
            key,
            settings.base_url,
            name=name,
            timeout_s=settings.timeout_s,
            prompt_cache=settings.prompt_cache,
        )
    from backend.llm.openai_chat import OpenAIProvider

    # Local OpenAI-compatible servers accept any key; the SDK insists on one.
    chat = OpenAIProvider(
        key or "sylk-local",
        settings.base_url,
        name=name,
        timeout_s=settings.timeout_s,
        tool_choice=settings.tool_choice,
        profile=settings.profile,
        prompt_cache=settings.prompt_cache,
    )
    from backend.llm.openai_responses import with_responses_api

    return with_responses_api(chat, settings, name=name, api_key=key or "sylk-local")
