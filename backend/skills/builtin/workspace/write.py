"""Workspace ops that change things: write and edit files, run commands and tests.

All honour the dry-run flag (:func:`~backend.skills.call_flags.is_dry_run`; their
skills are declared with ``supports_dry_run=True``): a dry run reports what
would happen and changes nothing. Files are written
atomically and only inside the workspace. Commands run through
:mod:`backend.workspace.commands` in the sandbox (:mod:`backend.sandbox`: writes only
in the workspace, ``.git`` read-only, Sylk's files out of reach, no network unless the
session allows it; an allow-listed environment; the whole tree killed at the limit),
with the session's confinement, their output streamed to the sink the caller put
under ``COMMAND_OUTPUT_KEY``.
"""

from __future__ import annotations

import asyncio
import difflib
import shlex
import stat
from typing import Any

from pydantic import BaseModel, ConfigDict, Field

from backend.skills.call_flags import COMMAND_OUTPUT_KEY, is_dry_run
from backend.skills.envelopes import ErrorCode, SkillError
from backend.skills.models import Guidance, SkillContext, SkillResult
from backend.workspace.commands import MAX_OUTPUT, run_command_line
from backend.workspace.files import Workspace
from backend.worktrees.sandbox_git import sandboxed_git_hint

MAX_EDIT_BYTES = 8 * 1024 * 1024  # an edit reads the whole file, text only


class _Params(BaseModel):
    model_config = ConfigDict(extra="forbid")


class WriteFileParams(_Params):
    path: str = Field(description="file path relative to the workspace root")
    content: str


class EditFileParams(_Params):
    path: str = Field(description="file path relative to the workspace root")
    old_content: str = Field(min_length=1, description="exact text to replace")
    new_content: str
    replace_all: bool = Field(default=False, description="replace every occurrence")


class RunCommandParams(_Params):
    command: str = Field(min_length=1, description="a shell command line")
    cwd: str = Field(default=".", description="working directory inside the workspace")
    timeout_s: float = Field(default=60.0, gt=0, le=1800)


class RunTestsParams(_Params):
    command: str = Field(default="python -m pytest -q", description="the test command")
    paths: list[str] = Field(default_factory=list, description="test files or directories")
    timeout_s: float = Field(default=600.0, gt=0, le=3600)


def _diff(path: str, before: str, after: str) -> str:
    lines = difflib.unified_diff(
        before.splitlines(keepends=True), after.splitlines(keepends=True), f"a/{path}", f"b/{path}"
    )
    text = "".join(lines)
    return text if len(text) <= MAX_OUTPUT else text[:MAX_OUTPUT] + "\n… (diff truncated)"


async def write_file(ctx: SkillContext, p: WriteFileParams) -> SkillResult:
    ws = Workspace(ctx.workspace, protected=ctx.confinement.protected)
    rel = ws.relative(ws.resolve_for_write(p.path))
    st = ws.stat(p.path)
    if st is not None and stat.S_ISDIR(st.st_mode):
        raise SkillError(ErrorCode.VALIDATION_ERROR, f"{p.path!r} is a directory")
    created = st is None
    size = len(p.content.encode())
    if is_dry_run(ctx):
        action = "create" if created else "overwrite"
        return SkillResult(result={"dry_run": True, "would": action, "path": rel, "bytes": size})
    await asyncio.to_thread(ws.write_text, p.path, p.content)
    return SkillResult(result={"path": rel, "bytes": size, "created": created})


async def edit_file(ctx: SkillContext, p: EditFileParams) -> SkillResult:
    ws = Workspace(ctx.workspace, protected=ctx.confinement.protected)
    rel = ws.relative(ws.resolve_for_write(p.path))
    before = await asyncio.to_thread(ws.read_text, p.path, limit=MAX_EDIT_BYTES, strict=True)
    count = before.count(p.old_content)
    if count == 0:
        raise SkillError(
            ErrorCode.VALIDATION_ERROR,
            f"old_content does not occur in {rel}",
            details={"reason": "no_match", "field_errors": [
                {"field": "old_content", "message": "not found in the file"}]},
        )  # fmt: skip
    if count > 1 and not p.replace_all:
        raise SkillError(
            ErrorCode.CONFLICT,
            f"old_content occurs {count} times in {rel}; add context or set replace_all",
            details={"reason": "ambiguous", "occurrences": count},
        )
    after = before.replace(p.old_content, p.new_content, -1 if p.replace_all else 1)
    diff = _diff(rel, before, after)
    replaced = count if p.replace_all else 1
    if is_dry_run(ctx):
        return SkillResult(
            result={"dry_run": True, "path": rel, "replacements": replaced, "diff": diff},
            guidance=[
                Guidance(
                    op="engineer.file.edit",
                    prose="Apply this edit by calling again with dry_run=false",
                    args=p.model_dump(),
                )
            ],
        )
    await asyncio.to_thread(ws.write_text, p.path, after)
    return SkillResult(result={"path": rel, "replacements": replaced, "diff": diff})


async def _run(
    ctx: SkillContext, ws: Workspace, command: str, cwd: str, timeout_s: float
) -> dict[str, Any]:
    """Run in the sandbox with the session's confinement, output streamed to the caller."""
    return await run_command_line(
        ws, command, cwd, timeout_s,
        confinement=ctx.confinement, on_output=ctx.extra.get(COMMAND_OUTPUT_KEY),
    )  # fmt: skip


async def run_command(ctx: SkillContext, p: RunCommandParams) -> SkillResult:
    ws = Workspace(ctx.workspace, protected=ctx.confinement.protected)
    if is_dry_run(ctx):
        rel = ws.relative(ws.resolve(p.cwd))
        return SkillResult(result={"dry_run": True, "would_run": p.command, "cwd": rel})
    result = await _run(ctx, ws, p.command, p.cwd, p.timeout_s)
    warnings = [f"exit code {result['exit_code']}"] if result["exit_code"] else []
    if result["sandbox"] == "none":
        warnings.append("ran unconfined: this machine has no sandbox for commands")
    elif hint := sandboxed_git_hint(ws.root, f"{result['stdout']}\n{result['stderr']}"):
        warnings.append(hint)  # git in a session's worktree: its repository is out of reach
    return SkillResult(result=result, warnings=warnings)


async def run_tests(ctx: SkillContext, p: RunTestsParams) -> SkillResult:
    ws = Workspace(ctx.workspace, protected=ctx.confinement.protected)
    for path in p.paths:
        ws.resolve(path)  # confined, like everything else
    command = " ".join([p.command, *(shlex.quote(path) for path in p.paths)])
    if is_dry_run(ctx):
        return SkillResult(result={"dry_run": True, "would_run": command})
    result = await _run(ctx, ws, command, ".", p.timeout_s)
    result["passed"] = result["exit_code"] == 0
    guidance = []
    if not result["passed"]:
        guidance.append(
            Guidance(op="librarian.code.search", prose="Find the code a failing test exercises")
        )
    return SkillResult(result=result, guidance=guidance)
