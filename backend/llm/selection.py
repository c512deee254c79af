"""Which provider and model an agent role uses, and building that provider."""

from __future__ import annotations

from dataclasses import dataclass

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

    @property
    def offline(self) -> bool:
        return self.kind == "offline"


def _model_for(config: SylkConfig, provider: str, role: str, override: str | None) -> str:
    if override:
        return override
    assigned = config.agents.get(role) or DEFAULT_AGENT_MODELS.get(role)
    if assigned is not None and assigned.provider == provider:
        return assigned.model
    settings = config.provider(provider)
    return config.default_model or settings.default_model or DEFAULT_MODELS[settings.kind]


def choose_model(
    config: SylkConfig,
    role: str,
    *,
    provider: str | None = None,
    model: str | None = None,
) -> ModelChoice:
    """The provider and model for ``role``.

    An explicit provider (flag, ``SYLK_PROVIDER`` or ``default_provider``) must be
    usable, or a typed error says how to configure it. Otherwise the role's own
    assignment is used when its provider is configured, then the first
    configured provider, and the offline provider last.
    """
    explicit = provider or config.default_provider
    if explicit is not None:
        settings = config.provider(explicit)
        if not config.is_usable(explicit):
            raise ProviderNotConfiguredError(
                f"provider {explicit!r} is not configured",
                provider=explicit,
                help_hint=how_to_configure(config.source).replace("\n", " "),
            )
        return ModelChoice(
            explicit, settings.kind, _model_for(config, explicit, role, model), "chosen"
        )
    assigned = config.agents.get(role) or DEFAULT_AGENT_MODELS.get(role)
    if assigned is not None and config.is_usable(assigned.provider):
        kind = config.provider(assigned.provider).kind
        return ModelChoice(assigned.provider, kind, model or assigned.model, f"{role} default")
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

        return AnthropicProvider(key, settings.base_url, name=name, timeout_s=settings.timeout_s)
    from backend.llm.openai_chat import OpenAIProvider

    # Local OpenAI-compatible servers accept any key; the SDK insists on one.
    return OpenAIProvider(
        key or "sylk-local",
        settings.base_url,
        name=name,
        timeout_s=settings.timeout_s,
        tool_choice=settings.tool_choice,
    )
