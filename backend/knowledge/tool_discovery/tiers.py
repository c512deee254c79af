"""Tiers 2 and 3: the Academic's recommendation, and the user's remembered choice.

Tier 2 answers from :mod:`~backend.knowledge.tool_discovery.defaults`. Tier 3 turns
an open question into options with pros and cons, and turns a stored choice (a
global preference ``tools.<language>.<category>`` in the archive) back into a tool.
"""

from __future__ import annotations

import shutil
from datetime import UTC, datetime
from typing import Any

from backend.knowledge.tool_discovery.defaults import CategoryDefault, ToolChoice, language_defaults
from backend.knowledge.tool_discovery.models import (
    ConfidenceLevel,
    DiscoveredTool,
    InvalidChoiceError,
    Recommendation,
    ToolCategory,
    ToolOption,
    ToolSource,
)

PREFERENCE_PREFIX = "tools."


def preference_key(language: str, category: ToolCategory) -> str:
    return f"{PREFERENCE_PREFIX}{language}.{category.value}"


def choice_tool(
    choice: ToolChoice,
    language: str,
    category: ToolCategory,
    path_env: str | None,
) -> DiscoveredTool:
    return DiscoveredTool(
        name=choice.name,
        category=category,
        language=language,
        run_command=choice.run,
        install_cmd=choice.install,
        is_installed=shutil.which(choice.exe, path=path_env) is not None,
        source=ToolSource.ACADEMIC_RESEARCH,
        confidence=ConfidenceLevel.LOW,
        rationale=choice.rationale,
    )


def options(
    default: CategoryDefault, language: str, category: ToolCategory, path_env: str | None
) -> list[ToolOption]:
    return [
        ToolOption(
            tool=choice_tool(choice, language, category, path_env),
            pros=list(choice.pros),
            cons=list(choice.cons),
            recommended=choice is default.recommended,
        )
        for choice in default.options
    ]


def recommend(language: str, category: ToolCategory, path_env: str | None) -> Recommendation:
    """Tier 2 for one (language, category); raises for an unknown language."""
    default = language_defaults(language).get(category)
    if default is None:
        return Recommendation(
            language=language,
            category=category,
            note=f"no {category.value.replace('_', ' ')} is customary for {language}",
        )
    return Recommendation(
        language=language,
        category=category,
        tool=choice_tool(default.recommended, language, category, path_env),
        satisfactory=default.satisfactory,
        note=default.note,
        options=options(default, language, category, path_env),
    )


def preference_value(
    language: str, category: ToolCategory, tool: str, run_command: str | None
) -> dict[str, Any]:
    """What ``choose`` stores: the chosen option, or a custom tool with its command."""
    default = language_defaults(language).get(category)
    known = list(default.options) if default else []
    match = next((c for c in known if c.name.lower() == tool.strip().lower()), None)
    if match is None and not (run_command and run_command.strip()):
        raise InvalidChoiceError(tool, language, category.value, [c.name for c in known])
    return {
        "tool": match.name if match else tool.strip(),
        "run_command": (run_command or "").strip() or (match.run if match else ""),
        "install_cmd": match.install if match else "",
        "executable": match.exe if match else (run_command or tool).split()[0],
        "custom": match is None,
        "chosen_at": datetime.now(UTC).isoformat(timespec="seconds"),
    }


def preference_tool(
    value: Any, language: str, category: ToolCategory, path_env: str | None
) -> DiscoveredTool | None:
    if not isinstance(value, dict) or not value.get("tool") or not value.get("run_command"):
        return None
    executable = str(value.get("executable") or str(value["tool"]).split()[0])
    when = str(value.get("chosen_at", ""))[:10]
    return DiscoveredTool(
        name=str(value["tool"]),
        category=category,
        language=language,
        run_command=str(value["run_command"]),
        install_cmd=str(value.get("install_cmd", "")),
        is_installed=shutil.which(executable, path=path_env) is not None,
        source=ToolSource.USER_CHOICE,
        confidence=ConfidenceLevel.HIGH,
        rationale=f"chosen by the user{' on ' + when if when else ''}",
    )
