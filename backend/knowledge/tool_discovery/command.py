"""``/tools``: the workspace's linters, formatters and test tools, as the user reads them.

Discovery answers what it can; where the community is split it asks the user (when a
front end shows questions) or says how to choose, and stores the choice for every
session.
"""

from __future__ import annotations

from pathlib import Path

from backend.knowledge.tool_discovery.discovery import ToolDiscovery
from backend.knowledge.tool_discovery.format import format_discovery
from backend.knowledge.tool_discovery.models import ToolCategory, ToolDiscoveryRequest
from backend.questions import Ask, ChoiceOption, ChoiceQuestion


async def tools_answer(
    tools: ToolDiscovery, workspace: Path, args: dict[str, str], ask: Ask | None
) -> str:
    """``/tools``: discover (asking the user when the community is split) or store a choice."""
    if args.get("action") == "choose":
        chosen = await tools.achoose(
            args["language"], args["category"], args["tool"], args.get("run_command")
        )
        return _stored(chosen.language, chosen.category.value, chosen.name, chosen.run_command)
    category = ToolCategory(args["category"]) if args.get("category") else None
    request = ToolDiscoveryRequest(tool_category=category, target_path=args.get("path", "."))
    response = await tools.adiscover(request, workspace)
    if not response.requires_user:
        return format_discovery(response)
    open_ = [d for d in response.decisions if d.requires_user]
    if ask is None:
        first = open_[0]
        example = next(
            o.tool.name for o in response.user_options if o.tool.language == first.language
        )
        return format_discovery(response) + (
            f"\nChoose with `/tools choose {first.language} {first.category.value} {example}`; "
            "the choice is kept for every session."
        )
    notes = []
    for decision in open_:
        options = [
            o
            for o in response.user_options
            if o.tool.language == decision.language and o.tool.category == decision.category
        ]
        label = decision.category.value.replace("_", " ")
        picked = await ask(
            ChoiceQuestion(
                title=f"Choose a {decision.language} {label}",
                prompt=decision.note or f"Several {label}s are common for {decision.language}.",
                options=[
                    ChoiceOption(
                        o.tool.name,
                        f"{o.tool.name}  ·  {o.tool.run_command}",
                        "; ".join([*o.pros[:2], *(f"but {c}" for c in o.cons[:1])]),
                        o.recommended,
                    )
                    for o in options
                ],
            )
        )
        if picked is None:
            notes.append(f"No {decision.language} {label} chosen; ask again with /tools.")
            continue
        chosen = await tools.achoose(decision.language, decision.category, picked)
        notes.append(_stored(chosen.language, label, chosen.name, chosen.run_command))
    response = await tools.adiscover(request, workspace, refresh=True)
    return format_discovery(response) + "\n" + "\n".join(notes)


def _stored(language: str, category: str, name: str, command: str) -> str:
    return (
        f"Stored your choice: {name} (`{command}`) as the {language} {category.replace('_', ' ')}"
        " for every session."
    )
