"""What a call is about to do, in the words and the diff the user weighs it by.

A command: its line (``tester.tests.run`` appends its paths, quoted, as it will run
them) and its working directory. An edit: the file and a unified diff. The diff
comes from the op's own preview where it gives one (``engineer.file.edit``'s dry
run, which also fails as the real call would: old text not found, ambiguous); for
a write, from the file's current text and the new content. An external MCP tool:
its op id, which rules match, and its arguments.
"""

from __future__ import annotations

import asyncio
import dataclasses
import difflib
import json
import shlex
from dataclasses import dataclass
from typing import Any

from pydantic import BaseModel

from backend.errors import SylkError
from backend.skills.call_flags import DRY_RUN_KEY
from backend.skills.models import Action, Skill, SkillContext, SkillResult
from backend.workspace.files import Workspace

MAX_DIFF = 64 * 1024
MAX_SHOWN_ARGS = 2000


@dataclass(frozen=True)
class Described:
    action: Action
    subject: str  # what rules and the decision table look at
    command: str = ""
    cwd: str = ""
    path: str = ""
    diff: str = ""


def _field(params: BaseModel | None, name: str, default: Any = None) -> Any:
    return getattr(params, name, default) if params is not None else default


def unified_diff(path: str, before: str, after: str, *, new: bool = False) -> str:
    lines = difflib.unified_diff(
        before.splitlines(keepends=True),
        after.splitlines(keepends=True),
        "/dev/null" if new else f"a/{path}",
        f"b/{path}",
    )
    text = "".join(lines)
    return text if len(text) <= MAX_DIFF else text[:MAX_DIFF] + "\n… (diff truncated)"


async def _preview(skill: Skill, ctx: SkillContext, params: BaseModel) -> dict[str, Any]:
    """The op's own dry run (it changes nothing); raises what the real call would."""
    if not skill.supports_dry_run:
        return {}
    dry = dataclasses.replace(ctx, extra={**ctx.extra, DRY_RUN_KEY: True})
    out = await skill.handler(dry, params)
    result = out.result if isinstance(out, SkillResult) else out
    return result if isinstance(result, dict) else {}


async def _edit(skill: Skill, ctx: SkillContext, params: BaseModel | None) -> Described:
    path = str(_field(params, "path", ""))
    preview = await _preview(skill, ctx, params) if params is not None else {}
    shown = str(preview.get("path") or path)
    diff = preview.get("diff")
    content = _field(params, "content")
    if not isinstance(diff, str) and isinstance(content, str):
        new = preview.get("would") == "create"
        before = ""
        if not new:
            try:
                ws = Workspace(ctx.workspace, protected=ctx.confinement.protected)
                before = await asyncio.to_thread(ws.read_text, path)
            except SylkError as exc:
                before = f"(the current file cannot be shown: {exc})\n"
        diff = unified_diff(shown, before, content, new=new)
    return Described("edit", shown, path=shown, diff=diff if isinstance(diff, str) else "")


def _command(skill: Skill, params: BaseModel | None) -> Described:
    # An op that runs the project's own tools (the Inspector's checks) has no command line
    # of its own: it is named by its op, so a rule such as ``inspector.style.check *`` fits.
    line = str(_field(params, "command", "") or skill.op)
    paths = _field(params, "paths") or []
    if paths:
        line = " ".join([line, *(shlex.quote(str(p)) for p in paths)])
    return Described("command", line, command=line, cwd=str(_field(params, "cwd", ".") or "."))


def _external(skill: Skill, args: dict[str, Any]) -> Described:
    shown = json.dumps(args, ensure_ascii=False, default=str)
    if len(shown) > MAX_SHOWN_ARGS:
        shown = shown[:MAX_SHOWN_ARGS] + "…"
    return Described("external", skill.op, command=f"{skill.op} {shown}")


async def describe(
    skill: Skill, ctx: SkillContext, params: BaseModel | None, args: dict[str, Any]
) -> Described:
    if skill.action == "edit":
        return await _edit(skill, ctx, params)
    if skill.action == "external":
        return _external(skill, args)
    return _command(skill, params)


__all__ = ["Described", "describe", "unified_diff"]
