"""The data of the tool discovery protocol: requests, responses, tools and options.

Field names follow the architecture's protocol structures so that a response
can be handed to any agent (or shown to the user) as JSON unchanged. A few
fields are added where a reader needs them: ``evidence`` (every file that
mentioned the tool), ``version_source`` and per-language ``decisions``.
"""

from __future__ import annotations

from enum import StrEnum

from pydantic import BaseModel, ConfigDict, Field

from backend.errors import ErrorKind, SylkError


class ToolCategory(StrEnum):
    LINTER = "linter"
    FORMATTER = "formatter"
    TYPE_CHECKER = "type_checker"
    TEST_FRAMEWORK = "test_framework"
    LSP = "lsp"


class ConfidenceLevel(StrEnum):
    HIGH = "high"  # a config file (or an explicit user choice) says so
    MEDIUM = "medium"  # inferred from dependencies, scripts or CI
    LOW = "low"  # only the language is known

    @property
    def rank(self) -> int:
        return {"low": 0, "medium": 1, "high": 2}[self.value]


class ToolSource(StrEnum):
    CONFIG_FILE = "config_file"
    PRE_COMMIT = "pre_commit"
    PACKAGE_MANIFEST = "package_manifest"
    BUILD_SCRIPT = "build_script"  # package.json scripts, Makefile targets, tox commands
    CI_CONFIG = "ci_config"
    TOOLCHAIN = "toolchain"  # built into the language's toolchain (go test, cargo check)
    ACADEMIC_RESEARCH = "academic_research"
    USER_CHOICE = "user_choice"


class ToolDiscoveryRequest(BaseModel):
    model_config = ConfigDict(extra="forbid")
    session_id: str = ""
    requesting_agent: str = ""  # "engineer", "inspector", "tester"
    tool_category: ToolCategory | None = None  # None: every category
    target_path: str = "."  # a file or directory inside the workspace
    languages: list[str] = Field(default_factory=list)  # if already known


class DiscoveredTool(BaseModel):
    model_config = ConfigDict(extra="forbid")
    name: str
    category: ToolCategory
    language: str
    version: str = ""
    # "lock", "pre_commit", "pin", "metadata" (a project-local install's package metadata,
    # read: the workspace's binaries are never run), "installed" (`--version` of a tool on
    # PATH outside the workspace), "manifest"
    version_source: str = ""
    config_path: str = ""  # workspace-relative
    run_command: str
    install_cmd: str = ""
    is_installed: bool = False
    source: ToolSource
    confidence: ConfidenceLevel = ConfidenceLevel.LOW
    rationale: str = ""
    evidence: list[str] = Field(default_factory=list)


class ToolOption(BaseModel):
    model_config = ConfigDict(extra="forbid")
    tool: DiscoveredTool
    pros: list[str] = Field(default_factory=list)
    cons: list[str] = Field(default_factory=list)
    recommended: bool = False


class LanguageDecision(BaseModel):
    """How one (language, category) was settled, so a reader sees why each tier was used."""

    model_config = ConfigDict(extra="forbid")
    language: str
    category: ToolCategory
    tier: int
    confidence: ConfidenceLevel
    requires_user: bool = False
    note: str = ""


class ToolDiscoveryResponse(BaseModel):
    model_config = ConfigDict(extra="forbid")
    tier: int  # the highest tier any decision needed: 1, 2 or 3
    confidence: ConfidenceLevel  # the weakest evidence behind any decision
    tools: list[DiscoveredTool] = Field(default_factory=list)
    requires_user: bool = False
    user_options: list[ToolOption] = Field(default_factory=list)
    languages: list[str] = Field(default_factory=list)
    decisions: list[LanguageDecision] = Field(default_factory=list)
    target_path: str = "."
    category: ToolCategory | None = None
    cached: bool = False
    warnings: list[str] = Field(default_factory=list)


class Recommendation(BaseModel):
    """Tier 2's answer for one (language, category)."""

    model_config = ConfigDict(extra="forbid")
    language: str
    category: ToolCategory
    tool: DiscoveredTool | None = None  # None: nothing is customary here
    satisfactory: bool = True  # False: the community is split; ask the user
    note: str = ""
    options: list[ToolOption] = Field(default_factory=list)


class ToolDiscoveryError(SylkError):
    """Tool discovery cannot answer the request as asked."""


class UnknownLanguageError(ToolDiscoveryError):
    error_kind = ErrorKind.INVALID

    def __init__(self, language: str, known: list[str]) -> None:
        super().__init__(
            f"no tool defaults for language {language!r}",
            help_hint=f"known languages: {', '.join(known)}",
        )
        self.language = language
        self.known = known


class UnknownCategoryError(ToolDiscoveryError):
    error_kind = ErrorKind.INVALID

    def __init__(self, category: str) -> None:
        known = [c.value for c in ToolCategory]
        super().__init__(
            f"unknown tool category {category!r}",
            help_hint=f"categories: {', '.join(known)}",
        )
        self.category = category
        self.known = known


class InvalidChoiceError(ToolDiscoveryError):
    error_kind = ErrorKind.INVALID

    def __init__(self, tool: str, language: str, category: str, options: list[str]) -> None:
        super().__init__(
            f"{tool!r} is not an option for {language} {category}",
            help_hint=f"choose one of {', '.join(options)}, or give run_command for a custom tool",
        )
        self.tool = tool
        self.options = options


class NoPreferenceStoreError(ToolDiscoveryError):
    def __init__(self) -> None:
        super().__init__(
            "tool choices cannot be remembered: discovery has no archive",
            help_hint="give ToolDiscovery the engine's archive",
        )


def parse_category(value: str | ToolCategory) -> ToolCategory:
    """A category from loose spelling ('type-checker', 'Test Framework'), or a typed error."""
    if isinstance(value, ToolCategory):
        return value
    key = value.strip().lower().replace("-", "_").replace(" ", "_")
    key = {"lint": "linter", "format": "formatter", "tests": "test_framework"}.get(key, key)
    try:
        return ToolCategory(key)
    except ValueError:
        raise UnknownCategoryError(value) from None
