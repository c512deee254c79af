"""The Inspector's remaining ops, for real: a task's validation, the latest issues, a
deep pass over the whole project and an issue explained.

The tool checks are the engine's (:class:`Inspection`, the project's own linters,
formatters and type checkers in the session's sandbox); what the Inspector's model
adds (a task's compliance, an explanation no tool or table gives) goes through the
engine's answer path as an inspector turn (:class:`AgentAsk`). Offline, the model's
part says it was not done and the tool part still runs. The last report of each
session is kept (:class:`LatestReports`) for ``inspector.issues.report``.
"""

from __future__ import annotations

import json
import os
import re
from collections import Counter, OrderedDict
from collections.abc import Awaitable, Callable
from dataclasses import dataclass, field
from datetime import UTC, datetime
from pathlib import Path
from typing import Any, Protocol

from backend.agents.answering import pipeline_turn
from backend.errors import ErrorKind, SylkError
from backend.guide.routing.decision import RouteDecision, Target
from backend.knowledge.tool_discovery.installed import system_which
from backend.messages import Message, MessageType
from backend.pipelines.checks import InspectionIssue, InspectionReport, IssueCategory
from backend.pipelines.checks.check_table import GO, JS, PY
from backend.pipelines.checks.paths import workspace_relative
from backend.pipelines.checks.test_targets import SKIP_DIRS
from backend.pipelines.checks.tool_process import run_tool
from backend.skills.models import SkillContext

KEPT_SESSIONS = 256  # sessions whose latest reports are remembered
SOURCES = (*PY, *JS, *GO)
DIFF_MAX = 40_000  # characters of the task's diff shown to the model
EXPLAIN_TIMEOUT_S = 20.0
Record = Message[dict[str, Any]]
AskAgent = Callable[[str, RouteDecision], Awaitable[Record]]


class LatestReports:
    """The latest inspection and test run of each recent session, in memory."""

    def __init__(self) -> None:
        self._kept: OrderedDict[tuple[str, str], dict[str, Any]] = OrderedDict()

    def keep(self, kind: str, session_id: str, op: str, report: dict[str, Any]) -> None:
        self._kept[(kind, session_id)] = {"op": op, "at": datetime.now(UTC).isoformat(), **report}
        self._kept.move_to_end((kind, session_id))
        while len(self._kept) > 2 * KEPT_SESSIONS:
            self._kept.popitem(last=False)

    def latest(self, kind: str, session_id: str) -> dict[str, Any] | None:
        return self._kept.get((kind, session_id))


class Inspection(Protocol):
    """The engine's tool checks (:class:`backend.engine.quality_work.QualityWork`)."""

    async def run(self, ctx: SkillContext, files: list[str]) -> InspectionReport: ...
    async def changed(self, ctx: SkillContext) -> list[str]: ...
    async def patch(self, ctx: SkillContext) -> str: ...


@dataclass(frozen=True)
class TaskWork:
    """What a pipeline's task is about: what it asked, its criteria, the files it touched."""

    task_id: str
    prompt: str
    criteria: tuple[str, ...] = ()
    files: tuple[str, ...] = ()


# (session_id, task_id) -> the task of the session's live or last pipelines, None if unknown
TaskLookup = Callable[[str, str], Awaitable[TaskWork | None]]


class UnknownTaskError(SylkError):
    error_kind = ErrorKind.NOT_FOUND

    def __init__(self, task_id: str, why: str) -> None:
        super().__init__(
            f"no task {task_id!r}: {why}",
            help_hint='name the files instead, e.g. {"paths": ["src/app.py"]}',
            details={"reason": "unknown_task", "task_id": task_id},
        )


class NothingToValidateError(SylkError):
    error_kind = ErrorKind.INVALID

    def __init__(self) -> None:
        super().__init__(
            "nothing to validate: no task, no paths, and this session has changed no file",
            help_hint='pass paths, e.g. {"paths": ["src/app.py"]}, or a task_id',
        )


class NoExplanationError(SylkError):
    error_kind = ErrorKind.NOT_FOUND

    def __init__(self, issue: str) -> None:
        super().__init__(
            f"no explanation for {issue!r}: no tool could say, Sylk's table lacks it, "
            "and no model is configured for the inspector",
            help_hint="give the rule code the tool printed (E501, arg-type, no-unused-vars)",
            details={"reason": "no_explanation"},
        )


class AgentDidNotAnswerError(SylkError):
    error_kind = ErrorKind.CONFLICT


@dataclass
class AgentAsk:
    """An agent turn through the engine's answer path, where a model is configured."""

    ask: AskAgent | None = None
    has_model: Callable[[str], bool] = field(default=lambda role: False)

    def can(self, ctx: SkillContext, role: str) -> bool:
        # The caller's own agent is busy in this very turn: asking it would wait on itself.
        return self.ask is not None and ctx.agent != role and self.has_model(role)

    async def answer(self, ctx: SkillContext, role: Target, text: str) -> Record:
        assert self.ask is not None  # callers check can() first
        decision = RouteDecision(target=role, confidence=1.0, tier="dsl", text=text)
        with pipeline_turn():  # one turn: the op checks its result itself
            record = await self.ask(ctx.session_id, decision)
        payload = record.payload
        stop = payload.get("stop")
        if record.type is MessageType.SYSTEM_NOTICE or stop not in (None, "final", "truncated"):
            why = payload.get("error") or payload.get("text") or f"the turn stopped ({stop})"
            raise AgentDidNotAnswerError(f"the {role.value} did not answer: {why}")
        return record


def report_body(report: InspectionReport, issues: list[InspectionIssue]) -> dict[str, Any]:
    body = report.model_dump(mode="json")
    body["issues"] = [i.model_dump(mode="json") for i in issues]
    body["clean"] = not issues and not report.failed_runs
    return body


class InspectorOps:
    def __init__(
        self,
        checks: Inspection,
        reports: LatestReports,
        agents: AgentAsk,
        tasks: TaskLookup | None = None,
    ) -> None:
        self._checks = checks
        self._reports = reports
        self._agents = agents
        self._tasks = tasks

    async def task(self, ctx: SkillContext, task_id: str) -> TaskWork:
        if self._tasks is None:
            raise UnknownTaskError(task_id, "this engine keeps no pipelines' tasks")
        found = await self._tasks(ctx.session_id, task_id)
        if found is None:
            raise UnknownTaskError(task_id, "no live or recent pipeline of this session has it")
        return found

    async def validate_task(
        self, ctx: SkillContext, task_id: str | None, paths: list[str], criteria: list[str]
    ) -> dict[str, Any]:
        task = await self.task(ctx, task_id) if task_id else None
        files = paths or list(task.files if task else ()) or await self._checks.changed(ctx)
        if not files:
            raise NothingToValidateError()
        report = await self._checks.run(ctx, files)
        wanted = [*(task.criteria if task else ()), *criteria]
        compliance, found = await self._compliance(ctx, task, wanted, report.files)
        body = report_body(report, [*report.issues, *found])
        body |= {"task_id": task_id, "compliance": compliance}
        self._reports.keep("inspection", ctx.session_id, "inspector.task.validate", body)
        return body

    async def _compliance(
        self, ctx: SkillContext, task: TaskWork | None, criteria: list[str], files: list[str]
    ) -> tuple[dict[str, Any], list[InspectionIssue]]:
        if not criteria:
            return {"checked": False, "reason": "no compliance criteria given"}, []
        diff = diff_of_files(await self._checks.patch(ctx), files)[:DIFF_MAX]
        if ctx.agent == Target.INSPECTOR.value:  # a model already: it judges, here and now
            why = "you are the inspector: judge the criteria against this diff yourself"
            return {"checked": False, "reason": why, "criteria": criteria, "diff": diff}, []
        if not self._agents.can(ctx, Target.INSPECTOR.value):
            why = "no model is configured for the inspector; the tool checks ran"
            return {"checked": False, "reason": why, "criteria": criteria}, []
        text = "\n".join([
            "Check this change against each compliance criterion. Answer with JSON only:",
            '{"criteria": [{"criterion": "...", "met": true, "why": "..."}]}',
            f"Task: {task.prompt}" if task else "",
            "Criteria:", *(f"- {c}" for c in criteria),
            "Diff of the task's files:", diff or "(no recorded change to these files)",
        ])  # fmt: skip
        record = await self._agents.answer(ctx, Target.INSPECTOR, text)
        said = str(record.payload.get("text") or "")
        verdicts = compliance_verdicts(said)
        if verdicts is None:
            return {"checked": True, "verdict": "unclear", "answer": said[:4000]}, []
        issues = [
            InspectionIssue(
                file=files[0] if len(files) == 1 else "",
                category=IssueCategory.COMPLIANCE,
                code="criterion",
                message=f"not met: {v.get('criterion', '?')}: {v.get('why', '')}".rstrip(": "),
                tool="inspector (model)",
            )
            for v in verdicts
            if not v.get("met")
        ]
        verdict = "met" if not issues else "not_met"
        return {"checked": True, "verdict": verdict, "criteria": verdicts}, issues

    async def issues_report(self, ctx: SkillContext, file: str | None) -> dict[str, Any]:
        latest = self._reports.latest("inspection", ctx.session_id)
        if latest is None:
            return {"inspected": False, "message": "no inspection in this session yet: "
                    "run inspector.style.check or inspector.implementation.validate"}  # fmt: skip
        issues = [i for i in latest["issues"] if file is None or i["file"] == file]
        by_file: dict[str, list[dict[str, Any]]] = {}
        for issue in issues:
            shown = {k: v for k, v in issue.items() if k != "file" and v not in ("", None)}
            by_file.setdefault(issue["file"], []).append(shown)
        return {
            "inspected": True,
            "op": latest["op"],
            "at": latest["at"],
            "files_inspected": latest["files"],
            "total": len(issues),
            "severity_counts": dict(Counter(i["severity"] for i in issues)),
            "by_file": by_file,
            "failed_tools": [
                r for r in latest["tools_run"] if r["status"] not in ("clean", "issues")
            ],
            "skipped": latest["skipped"],
            "clean": latest["clean"] and file is None,
        }

    async def deep_analysis(
        self, ctx: SkillContext, paths: list[str], max_files: int
    ) -> dict[str, Any]:
        found = source_files(ctx.workspace, ctx.confinement.protected, paths)
        files = found[:max_files]
        report = await self._checks.run(ctx, files)
        body = report_body(report, list(report.issues))
        body |= {"files_found": len(found), "capped": len(found) > len(files)}
        if body["capped"]:
            body["note"] = f"inspected the first {len(files)} of {len(found)} source files"
        self._reports.keep("inspection", ctx.session_id, "inspector.analysis.deep", body)
        return body

    async def explain(self, ctx: SkillContext, issue: str) -> dict[str, Any]:
        code = issue_code(issue)
        seen = self._occurrences(ctx, code)
        said = await self._ruff_says(ctx, code)
        if said:
            return {"code": code, "source": "tool", "tool": "ruff", "explanation": said, **seen}
        known = builtin_explanation(code)
        if known is not None:
            tool, text = known
            return {"code": code, "source": "builtin table", "tool": tool, "explanation": text,
                    **seen}  # fmt: skip
        if self._agents.can(ctx, Target.INSPECTOR.value):
            asked = f"Explain this code issue to the user, briefly, with how to fix it: {issue}"
            record = await self._agents.answer(ctx, Target.INSPECTOR, asked)
            text = str(record.payload.get("text") or "")
            return {"code": code, "source": "model", "explanation": text, **seen}
        raise NoExplanationError(issue)

    def _occurrences(self, ctx: SkillContext, code: str) -> dict[str, Any]:
        latest = self._reports.latest("inspection", ctx.session_id) or {"issues": []}
        at = [f"{i['file']}:{i['line']}" for i in latest["issues"] if i["code"] == code]
        return {"in_latest_inspection": at} if at else {}

    @staticmethod
    async def _ruff_says(ctx: SkillContext, code: str) -> str:
        """``ruff rule CODE`` from a ruff installed outside the workspace, confined."""
        if not re.fullmatch(r"[A-Z]{1,4}[0-9]{1,4}", code) or code.startswith("TS"):
            return ""
        ruff = system_which("ruff", None, Path(ctx.workspace))
        if ruff is None:
            return ""
        out = await run_tool([str(ruff), "rule", code], workspace=Path(ctx.workspace),
                             confinement=ctx.confinement, timeout_s=EXPLAIN_TIMEOUT_S)  # fmt: skip
        ok = out.finished and out.exit_code == 0 and out.stdout.strip()
        return out.stdout.strip()[:8000] if ok else ""


def compliance_verdicts(text: str) -> list[dict[str, Any]] | None:
    """The verdicts of a model's ``{"criteria": [...]}`` answer; None: not that JSON."""
    found = re.search(r"\{.*\}", text, re.DOTALL)
    try:
        data = json.loads(found[0]) if found else None
    except json.JSONDecodeError:
        return None
    items = data.get("criteria") if isinstance(data, dict) else None
    if not isinstance(items, list) or not all(isinstance(i, dict) for i in items):
        return None
    return items


def diff_of_files(patch: str, files: list[str]) -> str:
    """The sections of a unified ``git diff`` about ``files``."""
    parts = re.split(r"(?m)^(?=diff --git )", patch)
    return "".join(
        p for p in parts if any(f" b/{f}\n" in p.split("\n", 1)[0] + "\n" for f in files)
    )


def source_files(workspace: Path, protected: Any, under: list[str]) -> list[str]:
    """The workspace's source files (no link followed, Sylk's paths and caches skipped)."""
    root = Path(workspace).resolve()
    hidden = {Path(p) for p in protected}
    starts = [root / workspace_relative(u, root) for u in under] if under else [root]
    found: list[str] = []
    for start in starts:
        if start.is_symlink() or not start.resolve().is_relative_to(root):
            continue  # a link (or a path through one) could lead out: not walked
        if start.is_file():
            found.append(start.relative_to(root).as_posix())
            continue
        for folder, dirs, names in os.walk(start, followlinks=False):
            here = Path(folder)
            dirs[:] = sorted(
                d for d in dirs
                if d not in SKIP_DIRS and not d.startswith(".") and here / d not in hidden
            )  # fmt: skip
            for name in sorted(names):
                path = here / name
                if name.endswith(SOURCES) and not path.is_symlink():
                    found.append(path.relative_to(root).as_posix())
    return list(dict.fromkeys(found))


# The common rules of ruff/flake8, mypy, eslint and tsc, for when no tool can say.
TABLE: dict[str, tuple[str, str]] = {
    "E501": ("ruff", "Line too long: the line is longer than the configured line-length. "
             "Break it (wrap arguments, split strings) or raise line-length in the config."),
    "F401": ("ruff", "Unused import: a module or name is imported but never used. Remove "
             "it, or re-export it explicitly (__all__ or 'import x as x')."),
    "F841": ("ruff", "Unused variable: a local is assigned but never read. Drop the "
             "assignment or name it _ when the value is deliberately ignored."),
    "F821": ("ruff", "Undefined name: the name is used but never defined or imported."),
    "E722": ("ruff", "Bare except: catches everything, KeyboardInterrupt included. "
             "Catch the exceptions you expect."),
    "I001": ("ruff", "Import block is unsorted or unformatted: run 'ruff check --fix'."),
    "B006": ("ruff", "Mutable default argument: the default is shared between calls. "
             "Default to None and create the value inside the function."),
    "arg-type": ("mypy", "Argument has an incompatible type: the value passed does not "
                 "match the parameter's annotation. Convert it, or fix the annotation."),
    "return-value": ("mypy", "Incompatible return value: the function returns a type its "
                     "annotation does not allow (e.g. float where int is declared)."),
    "assignment": ("mypy", "Incompatible types in assignment: the value's type does not "
                   "match the variable's declared (or first inferred) type."),
    "attr-defined": ("mypy", "The type has no such attribute: a typo, a missing import, or "
                     "an Optional that must be checked for None first."),
    "union-attr": ("mypy", "An attribute of a union member that may lack it (often None): "
                   "narrow the type first (if x is not None)."),
    "call-arg": ("mypy", "Wrong arguments in a call: too many, too few, or an unexpected "
                 "keyword."),
    "no-untyped-def": ("mypy", "A function without type annotations under strict mode: "
                       "annotate its parameters and return type."),
    "import-untyped": ("mypy", "A library without type information: install its stubs "
                       "(types-...) or ignore it in the mypy config."),
    "no-unused-vars": ("eslint", "A variable, import or parameter is declared but never "
                       "used. Remove it, or prefix it with _ if the config allows."),
    "no-undef": ("eslint", "Use of an undeclared variable: a typo, a missing import, or a "
                 "global the eslint env does not declare."),
    "eqeqeq": ("eslint", "Use === and !== instead of == and != (no type coercion)."),
    "prefer-const": ("eslint", "A let that is never reassigned: declare it with const."),
    "TS2322": ("tsc", "Type 'A' is not assignable to type 'B': the value's type does not "
               "match the declared type."),
    "TS2345": ("tsc", "Argument of type 'A' is not assignable to parameter of type 'B'."),
    "TS2339": ("tsc", "Property does not exist on type: a typo, or narrow a union first."),
    "TS2304": ("tsc", "Cannot find name: a typo or a missing import or declaration."),
    "TS7006": ("tsc", "Parameter implicitly has an 'any' type: annotate it (noImplicitAny)."),
}  # fmt: skip
_CODE = re.compile(r"\b(TS\d{4}|[A-Z]{1,4}\d{1,4}|[a-z]+(?:-[a-z]+)+|eqeqeq)\b")


def issue_code(issue: str) -> str:
    """The rule code in an issue's text ("E501 in a.py:3" -> "E501"), else the text."""
    found = _CODE.search(issue)
    return found[1] if found else issue.strip()


def builtin_explanation(code: str) -> tuple[str, str] | None:
    return TABLE.get(code) or TABLE.get(code.upper())
