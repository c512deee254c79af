"""Sylk's configuration: one validated model, read from TOML plus the environment.

Precedence, highest first: explicit overrides (CLI flags), environment
variables (``ANTHROPIC_API_KEY``, ``OPENAI_API_KEY``, ``ANTHROPIC_BASE_URL``,
``OPENAI_BASE_URL``, ``SYLK_PROVIDER``, ``SYLK_MODEL``), the config file, then
defaults. Keys are ``SecretStr``: they print as ``**********`` everywhere.
"""

from __future__ import annotations

import os
import tomllib
from collections.abc import Mapping
from pathlib import Path
from typing import Any, Literal

from pydantic import AliasChoices, BaseModel, ConfigDict, Field, SecretStr, ValidationError

from backend.config.approvals import ApprovalSettings
from backend.config.archive import ArchiveSettings, url_password, with_password
from backend.config.budgets import BudgetLimits
from backend.config.context import ContextSettings
from backend.config.mcp_server_auth import McpServerAuthSettings
from backend.config.mcp_servers import McpSettings
from backend.config.orchestration import OrchestrationSettings
from backend.config.scheduling import SchedulingSettings
from backend.config.session_limits import SessionSettings
from backend.config.team import TeamSettings
from backend.errors import SylkError
from backend.roles import AGENT_ROLES

ProviderKind = Literal["anthropic", "openai", "scripted", "offline"]
CONFIG_FILE = "config.toml"


class ConfigError(SylkError):
    """The config file or environment cannot be used as it is."""


class _Model(BaseModel):
    model_config = ConfigDict(extra="forbid")


class ProviderSettings(_Model):
    kind: ProviderKind
    api_key: SecretStr | None = None
    base_url: str | None = None
    default_model: str | None = None
    script: Path | None = None  # scripted provider only
    timeout_s: float = Field(default=60.0, gt=0)
    # OpenAI-compatible providers: sent with the tools (llama-cpp-python needs it to use them).
    tool_choice: Literal["auto", "required", "none"] = "auto"
    # OpenAI-compatible providers: the server's quirks (backend/llm/openai_chat/profiles.py);
    # "auto" asks the server's GET /models once (api.openai.com: no need).
    profile: Literal[
        "auto", "openai", "llama-cpp", "llama-cpp-python", "ollama", "vllm", "lm-studio", "generic"
    ] = "auto"
    # OpenAI providers: the API a call goes to. "auto": the Responses API for the models
    # only it serves (the Codex family) on api.openai.com, Chat Completions otherwise.
    api: Literal["chat", "responses", "auto"] = "auto"
    # Responses API: ask for a reasoning summary ("auto": for models known to reason).
    reasoning_summary: Literal["auto", "on", "off"] = "auto"
    # Anthropic: cache_control breakpoints on the stable prompt prefix; OpenAI: a
    # prompt_cache_key where the server takes one. Off for proxies that refuse the field.
    prompt_cache: bool = True
    # The output limit sent with each request (a small local model may ramble for minutes);
    # unset: 4096. [agents.ROLE] max_tokens wins for that role.
    max_tokens: int | None = Field(default=None, ge=1)


class AgentModel(_Model):
    provider: str
    model: str
    max_tokens: int | None = Field(default=None, ge=1)


class Price(_Model):
    """US dollars per million tokens."""

    input: float = Field(ge=0)
    output: float = Field(ge=0)
    cache_read: float | None = Field(default=None, ge=0)
    cache_write: float | None = Field(default=None, ge=0)


class RetrySettings(_Model):
    max_attempts: int = Field(default=4, ge=1, le=10)
    base_delay_s: float = Field(default=0.5, gt=0)
    max_delay_s: float = Field(default=20.0, gt=0)
    deadline_s: float = Field(default=180.0, gt=0)
    breaker_threshold: int = Field(default=5, ge=1)
    breaker_cooldown_s: float = Field(default=30.0, gt=0)


class GuideSettings(_Model):
    # An agent whose queued work has not moved for this long is reported stalled.
    stall_after_s: float = Field(default=300.0, gt=0)
    # How long a request waits for an agent's answer (a whole agent turn).
    request_timeout_s: float = Field(default=900.0, gt=0)
    inbox_capacity: int = Field(default=64, ge=1)
    health_interval_s: float = Field(default=1.0, gt=0)
    # The routing model tier (asked when the patterns are unsure): one forced `route`
    # call, bounded; past the deadline the pattern tier's guess is used, never retried.
    # A route call is ~50 tokens; a reasoning model as the guide needs more room.
    model_tier_deadline_s: float = Field(default=4.0, gt=0, le=60)
    model_tier_max_tokens: int = Field(default=128, ge=32, le=4096)


class SearchSettings(_Model):
    # Skill search's semantic stage (all-MiniLM-L6-v2 in numpy): "auto" uses it when the
    # model is installed, "on" insists (an error names what to install), "off" keeps BM25
    # alone. SYLK_SEMANTIC overrides it.
    semantic: Literal["auto", "on", "off"] = "auto"


# The seed's assignment table where it names a model; sensible defaults elsewhere.
# The seed's "OpenAI Codex 5.2" is served only by the Responses API, which an OpenAI
# provider with api = "auto" (the default) uses for it on api.openai.com
# (backend.llm.openai_responses). Set [agents.ROLE] model to override.
DEFAULT_AGENT_MODELS: dict[str, AgentModel] = {
    "academic": AgentModel(provider="anthropic", model="claude-opus-4-5"),
    "engineer": AgentModel(provider="anthropic", model="claude-opus-4-5"),
    "architect": AgentModel(provider="openai", model="gpt-5.2-codex"),
    "inspector": AgentModel(provider="openai", model="gpt-5.2-codex"),
    "tester": AgentModel(provider="openai", model="gpt-5.2-codex"),
    "guide": AgentModel(provider="anthropic", model="claude-haiku-4-5"),
    "librarian": AgentModel(provider="anthropic", model="claude-haiku-4-5"),
    "archivalist": AgentModel(provider="anthropic", model="claude-sonnet-4-6"),
    "orchestrator": AgentModel(provider="anthropic", model="claude-sonnet-4-6"),
}

DEFAULT_MODELS: dict[str, str] = {
    "anthropic": "claude-sonnet-4-6",
    "openai": "gpt-5.2",
    "scripted": "scripted",
    "offline": "offline",
}

# Published list prices (USD per million tokens) for the defaults above; extend or
# override them under [prices."model-name"] in the config file.
DEFAULT_PRICES: dict[str, Price] = {
    "claude-opus-4-5": Price(input=5.0, output=25.0, cache_read=0.5, cache_write=6.25),
    # Sonnet 4.5's list price, carried over; override it if yours differs.
    "claude-sonnet-4-6": Price(input=3.0, output=15.0, cache_read=0.3, cache_write=3.75),
    "claude-haiku-4-5": Price(input=1.0, output=5.0, cache_read=0.1, cache_write=1.25),
    # OpenAI's list price for GPT-5.2 at its release (cached input at a tenth; OpenAI
    # charges nothing extra to write its cache); the Codex variant is priced the same.
    "gpt-5.2": Price(input=1.75, output=14.0, cache_read=0.175, cache_write=1.75),
    "gpt-5.2-codex": Price(input=1.75, output=14.0, cache_read=0.175, cache_write=1.75),
}


class SylkConfig(_Model):
    default_provider: str | None = None
    default_model: str | None = None
    providers: dict[str, ProviderSettings] = Field(default_factory=dict)
    agents: dict[str, AgentModel] = Field(default_factory=dict)
    prices: dict[str, Price] = Field(default_factory=dict)
    retry: RetrySettings = Field(default_factory=RetrySettings)
    guide: GuideSettings = Field(default_factory=GuideSettings)
    mcp_servers: McpSettings = Field(default_factory=McpSettings)
    # Bearer tokens and their scopes for `sylk mcp serve` over HTTP (values in the data dir).
    mcp_server: McpServerAuthSettings = Field(default_factory=McpServerAuthSettings)
    search: SearchSettings = Field(default_factory=SearchSettings)
    # The approval policy's default mode and its standing allow/deny rules for commands.
    approvals: ApprovalSettings = Field(default_factory=ApprovalSettings)
    # Each model's context window (glob -> tokens) over the defaults (backend.memory).
    context: ContextSettings = Field(default_factory=ContextSettings)
    # Token and cost limits per session and per pipeline (backend.budgets); none: unlimited.
    budgets: BudgetLimits = Field(default_factory=BudgetLimits)
    # How many jobs run at once across all sessions (backend.orchestration.worker_pool).
    scheduling: SchedulingSettings = Field(default_factory=SchedulingSettings)
    # Where engineer pipelines run: here, or on a Ray cluster (backend.cluster).
    orchestration: OrchestrationSettings = Field(default_factory=OrchestrationSettings)
    # [sessions] auto_suspend_after_s, idle_check_s: idle sessions suspended (engine.lifecycle).
    sessions: SessionSettings = Field(default_factory=SessionSettings)
    # [team] user: the owner recorded on sessions (default: the OS user).
    team: TeamSettings = Field(default_factory=TeamSettings)
    # The archive: None = the SQLite file in the data dir; or postgresql+psycopg://…
    # (SYLK_DATABASE_URL; SYLK_DATABASE_PASSWORD fills in the password). [archive] pool_size.
    database_url: str | None = None
    archive: ArchiveSettings = Field(default_factory=ArchiveSettings)
    # Extra fragment folders for the Academic's library (sub-folders are categories).
    library_paths: list[Path] = Field(default_factory=list)
    # The TUI's keys, by binding id: [keys] (or [keymap]) "session.next" = "alt+j,f5".
    # Kept as written: the TUI checks each entry (sylk_tui.keymap), so one bad entry is
    # named at start and the others still apply, rather than the whole file refused.
    keymap: dict[str, Any] = Field(
        default_factory=dict, validation_alias=AliasChoices("keymap", "keys")
    )
    source: Path | None = Field(default=None, exclude=True)
    # SYLK_PROVIDER, kept apart from the file's default_provider: like --provider it
    # overrides every role's choice (load_config sets it from the environment only).
    env_provider: str | None = Field(default=None, exclude=True)

    def library_folders(self) -> list[Path]:
        """``library_paths`` with ``~`` expanded, relative ones taken from the config's folder."""
        base = self.source.parent if self.source is not None else Path.cwd()
        return [(base / p.expanduser()).resolve() for p in self.library_paths]

    def provider(self, name: str) -> ProviderSettings:
        try:
            return self.providers[name]
        except KeyError:
            known = ", ".join(sorted(self.providers)) or "none"
            raise ConfigError(
                f"unknown provider {name!r} (configured: {known})",
                help_hint="choose anthropic, openai, scripted or offline, "
                "or add [providers.NAME] to the config file",
            ) from None

    def is_usable(self, name: str) -> bool:
        """A provider can be called: a key, a local base_url or a script is set."""
        settings = self.providers.get(name)
        if settings is None:
            return False
        if settings.kind == "offline":
            return True
        if settings.kind == "scripted":
            return settings.script is not None
        if settings.kind == "openai" and settings.base_url and not _is_vendor(settings.base_url):
            return True  # a local OpenAI-compatible server needs no key
        return settings.api_key is not None and bool(settings.api_key.get_secret_value())

    def price(self, model: str) -> Price | None:
        return self.prices.get(model) or DEFAULT_PRICES.get(model)

    def secrets(self) -> list[str]:
        """Every configured key, for scrubbing text before it is stored or shown."""
        keys = [
            p.api_key.get_secret_value()
            for p in self.providers.values()
            if p.api_key is not None and p.api_key.get_secret_value()
        ]
        database = url_password(self.database_url)
        return keys + self.mcp_servers.secrets() + ([database] if database else [])


def _is_vendor(url: str) -> bool:
    return "api.openai.com" in url or "api.anthropic.com" in url


def _read_toml(path: Path) -> dict[str, Any]:
    try:
        with path.open("rb") as handle:
            return tomllib.load(handle)
    except tomllib.TOMLDecodeError as exc:
        raise ConfigError(
            f"config file {path} is not valid TOML: {exc}",
            help_hint="fix the line named, or move the file aside to use defaults",
        ) from exc
    except UnicodeDecodeError as exc:
        raise ConfigError(
            f"config file {path} is not UTF-8 text (byte {exc.start} cannot be read)",
            help_hint="save it as UTF-8, or move the file aside to use defaults",
        ) from exc
    except OSError as exc:
        raise ConfigError(f"cannot read config file {path}: {exc.strerror}") from exc


def _with_builtins(raw: dict[str, Any], env: Mapping[str, str]) -> dict[str, Any]:
    providers: dict[str, Any] = {k: dict(v) for k, v in dict(raw.get("providers", {})).items()}
    for name, key_var, url_var in (
        ("anthropic", "ANTHROPIC_API_KEY", "ANTHROPIC_BASE_URL"),
        ("openai", "OPENAI_API_KEY", "OPENAI_BASE_URL"),
    ):
        entry = providers.setdefault(name, {})
        entry.setdefault("kind", name)
        if env.get(key_var):
            entry["api_key"] = env[key_var]
        if env.get(url_var):
            entry["base_url"] = env[url_var]
    providers.setdefault("offline", {"kind": "offline"})
    providers.setdefault("scripted", {"kind": "scripted"})
    if env.get("SYLK_SCRIPT"):
        providers["scripted"]["script"] = env["SYLK_SCRIPT"]
    merged = dict(raw)
    merged["providers"] = providers
    if env.get("SYLK_PROVIDER"):
        merged["default_provider"] = env["SYLK_PROVIDER"]
    if env.get("SYLK_MODEL"):
        merged["default_model"] = env["SYLK_MODEL"]
    if env.get("SYLK_SEMANTIC"):  # auto | on | off, over the file's [search] semantic
        merged["search"] = {**merged.get("search", {}), "semantic": env["SYLK_SEMANTIC"]}
    if env.get("SYLK_DATABASE_URL"):
        merged["database_url"] = env["SYLK_DATABASE_URL"]
    if merged.get("database_url"):
        merged["database_url"] = with_password(
            str(merged["database_url"]), env.get("SYLK_DATABASE_PASSWORD")
        )
    if env.get("SYLK_LIBRARY_PATHS"):
        extra = [p for p in env["SYLK_LIBRARY_PATHS"].split(os.pathsep) if p]
        merged["library_paths"] = [*merged.get("library_paths", []), *extra]
    return merged


def _explain(exc: ValidationError, origin: str) -> ConfigError:
    problems = "; ".join(
        f"{'.'.join(str(p) for p in err['loc']) or '(top level)'}: {err['msg']}"
        for err in exc.errors(include_input=False)
    )
    return ConfigError(f"invalid configuration in {origin}: {problems}")


def load_config(path: Path | None, env: Mapping[str, str] | None = None) -> SylkConfig:
    """Read ``path`` (absent is fine: defaults) and overlay the environment."""
    env = os.environ if env is None else env
    raw = _read_toml(path) if path is not None and path.exists() else {}
    origin = str(path) if path is not None and path.exists() else "the environment"
    try:
        config = SylkConfig.model_validate(_with_builtins(raw, env))
    except ValidationError as exc:
        raise _explain(exc, origin) from None
    unknown = set(config.agents) - set(AGENT_ROLES)
    if unknown:
        raise ConfigError(
            f"invalid configuration in {origin}: unknown agent role(s) {sorted(unknown)}",
            help_hint=f"roles are {', '.join(AGENT_ROLES)}",
        )
    for role, choice in config.agents.items():
        if choice.provider not in config.providers:
            raise ConfigError(
                f"invalid configuration in {origin}: agents.{role}.provider "
                f"{choice.provider!r} is not a configured provider"
            )
    if config.default_provider is not None:
        config.provider(config.default_provider)  # typed error if unknown
    forced = env.get("SYLK_PROVIDER") or None
    return config.model_copy(update={"source": path, "env_provider": forced})
