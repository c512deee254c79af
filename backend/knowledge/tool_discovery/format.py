"""Tool discovery results as Markdown, for the TUI's panels and the CLI.

Grouped by language, one line per tool: what runs it, where it was found,
whether it is installed; then the questions the user still has to answer.
"""

from __future__ import annotations

from backend.knowledge.tool_discovery.defaults import LANGUAGE_DEFAULTS, language_defaults
from backend.knowledge.tool_discovery.editorconfig import EditorConfig
from backend.knowledge.tool_discovery.models import (
    DiscoveredTool,
    ToolCategory,
    ToolDiscoveryResponse,
    ToolOption,
)

TIER_NAMES = {1: "configured in the project", 2: "recommended", 3: "your decision"}


def _label(category: str) -> str:
    return category.replace("_", " ")


def _tool_line(tool: DiscoveredTool) -> str:
    version = f" {tool.version}" if tool.version else ""
    if tool.version and tool.version_source == "metadata":
        version += " (version from metadata, not executed)"
    where = f" — `{tool.config_path}`" if tool.config_path else ""
    installed = "installed" if tool.is_installed else "not installed"
    line = (
        f"- **{_label(tool.category.value)}**: {tool.name}{version} · `{tool.run_command}`"
        f" · {installed} · {tool.source.value} ({tool.confidence.value}){where}"
    )
    if not tool.is_installed and tool.install_cmd:
        line += f"\n  - install: `{tool.install_cmd}`"
    return line


def _option_line(option: ToolOption) -> str:
    star = " (recommended)" if option.recommended else ""
    parts = [f"  - **{option.tool.name}**{star}: `{option.tool.run_command}`"]
    if option.pros:
        parts.append(f"    - pros: {'; '.join(option.pros)}")
    if option.cons:
        parts.append(f"    - cons: {'; '.join(option.cons)}")
    return "\n".join(parts)


def format_discovery(response: ToolDiscoveryResponse) -> str:
    """Markdown a person can act on: tools per language, then open questions."""
    what = _label(response.category.value) if response.category else "tools"
    lines = [
        f"## Tool discovery: {what} for `{response.target_path}`",
        "",
        f"Languages: {', '.join(response.languages) or 'none detected'} · "
        f"tier {response.tier} · confidence {response.confidence.value}"
        + (" · cached" if response.cached else ""),
    ]
    languages = list(dict.fromkeys([*response.languages, *(t.language for t in response.tools)]))
    for language in languages:
        tools = [t for t in response.tools if t.language == language]
        if not tools:
            continue
        lines += ["", f"### {language}", *(_tool_line(t) for t in tools)]
    if response.requires_user:
        lines += ["", "### Your choice is needed"]
        open_ = [d for d in response.decisions if d.requires_user]
        for decision in open_:
            lines.append(
                f"- {decision.language} {_label(decision.category.value)}: {decision.note}"
            )
            lines += [
                _option_line(o)
                for o in response.user_options
                if o.tool.language == decision.language and o.tool.category == decision.category
            ]
    if response.warnings:
        lines += ["", "### Warnings", *(f"- {w}" for w in response.warnings)]
    return "\n".join(lines) + "\n"


def medium_note(language: str, category: ToolCategory, found: list[DiscoveredTool]) -> str:
    """Why tools found without a config file (a dependency, a script) are kept."""
    names = ", ".join(t.name for t in found)
    default = language_defaults(language).get(category) if language in LANGUAGE_DEFAULTS else None
    if default and any(t.name in {c.name for c in default.options} for t in found):
        return f"no config file, but the project uses {names}, a recommended choice"
    return f"no config file; the project's dependencies or scripts point to {names}"


def editorconfig_note(found: EditorConfig) -> str:
    if found.formatting:
        return f"{found.path} sets {', '.join(found.formatting)} for editors and formatters"
    return f"{found.path} sets no indentation, line ending or line length"
