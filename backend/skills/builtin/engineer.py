"""The Engineer's skills: real file reads, writes, edits and shell commands in the workspace."""

from __future__ import annotations

from collections.abc import Awaitable, Callable
from pathlib import Path
from typing import Any

from pydantic import Field

from backend.skills.builtin.declare import CONTEXTUAL, CORE, WRITE, Params, Unbuilt, declare
from backend.skills.builtin.workspace import read as reads
from backend.skills.builtin.workspace import write as writes
from backend.skills.models import Guidance, Handler, Policy, Skill, SkillContext, SkillResult
from backend.skills.session_scope import CROSS_SESSION_SCOPE

AGENT = "engineer"
ORCHESTRATOR = "the Orchestrator (DAG execution and task hand-off)"
PIPELINES = "the engine's pipelines (backend/engine/plan_runs/pipeline_work)"
UNWIRED = "which the engine has not wired into the skill registry yet"


class TaskParams(Params):
    task_id: str = Field(
        min_length=1, max_length=40, pattern=r"^[A-Za-z0-9][A-Za-z0-9_.-]*$",
        description="a new id for the task in this session (/task ID steers it)",
    )  # fmt: skip
    instructions: str = Field(min_length=1, description="what the engineer should do")


class HelpParams(Params):
    question: str = Field(min_length=1, description="what you need the user to decide")
    context: str | None = Field(default=None, description="what you know, what you tried")
    options: list[str] = Field(
        default_factory=list, description="the answers you see; empty: the user writes one"
    )


class ConsultParams(Params):
    question: str = Field(min_length=1)


_CONSULT: dict[str, list[tuple[str, str]]] = {
    "librarian": [
        ("librarian.code.search", "Search the codebase for the names in your question"),
        ("librarian.code.context", "Show where a symbol is defined"),
        ("librarian.code.structure", "See how the codebase is organised"),
    ],
    "archivalist": [
        ("archivalist.chronicle.query", "Look up past decisions, patterns and failures"),
    ],
    "academic": [
        ("academic.research.best_practices", "Find recommended practice for the topic"),
    ],
}


Consult = Callable[[str, str, Path, str, bool], Awaitable[str | None]]
"""(agent, session_id, workspace, question, may read other sessions) -> the agent's answer
from its stores."""
AskAgent = Callable[[SkillContext, str, str], Awaitable[tuple[str | None, dict[str, Any]]]]
"""(caller, agent, question) -> the agent's answer and the route the question took."""


def consult_handler(agent: str, ask: AskAgent) -> Handler:
    """The ``engineer.consult.<agent>`` handler over ``ask``; an engine installs one that
    sends the question through the Guide (:mod:`backend.team.messages`)."""

    async def handler(ctx: SkillContext, p: ConsultParams) -> SkillResult:
        answer, route = await ask(ctx, agent, p.question)
        found = answer is not None
        return SkillResult(
            result={
                "consulted": agent,
                "question": p.question,
                "answered": found,
                "answer": answer if found else f"The {agent} has nothing stored on this.",
                "route": route,
            },
            # The answer comes from the agent's store; these ops dig further.
            guidance=[Guidance(op=op, prose=prose) for op, prose in _CONSULT[agent]],
        )

    handler.__name__ = f"consult_{agent}"
    return handler


def _consult(agent: str, consult: Consult | None) -> Handler | Unbuilt:
    """Straight to the stores: what a gateway without an engine's Guide answers with."""
    if consult is None:
        return Unbuilt("the engine's knowledge services", UNWIRED)

    async def direct(
        ctx: SkillContext, who: str, question: str
    ) -> tuple[str | None, dict[str, Any]]:
        # Other sessions' history only for a caller holding the cross-session scope.
        crossing = CROSS_SESSION_SCOPE in ctx.scopes
        answer = await consult(who, ctx.session_id, ctx.workspace, question, crossing)
        return answer, {"via": "direct", "reason": "no Guide in this gateway"}

    return consult_handler(agent, direct)


def engineer_skills(consult: Consult | None = None) -> list[Skill]:
    return [
        declare(
            "engineer.file.read", AGENT, "Read a file's contents, optionally a line range.",
            reads.ReadFileParams, reads.read_file, tier=CORE, entry_point=True,
            tags=("read", "view", "show", "cat", "file", "open"),
            examples=[("read a module", {"path": "src/app.py"}),
                      ("read part of a file", {"path": "src/app.py", "start_line": 1,
                                               "end_line": 50})],
        ),
        declare(
            "engineer.file.edit", AGENT,
            "Edit an existing file by replacing exact text (search/replace). Shows a diff; "
            "a dry run unless dry_run is false.",
            writes.EditFileParams, writes.edit_file, kind=WRITE, destructive=True, tier=CORE,
            action="edit",
            supports_dry_run=True,
            tags=("edit", "modify", "change", "update", "replace", "patch", "fix"),
            examples=[("rename a function call",
                       {"path": "src/app.py", "old_content": "old_name(",
                        "new_content": "new_name("})],
            policy=Policy(
                do=["read the file first (engineer.file.read; required, a line range is "
                    "enough) and copy old_content exactly",
                    "preview (default dry run), then apply with dry_run=false"],
                dont=["use it to create files: use engineer.file.write",
                      "apply an edit to a file not read in this session, or changed since "
                      "you read it: it is refused (CONFLICT); read it again"],
                edge_cases=["old_content found several times: add surrounding lines or set "
                            "replace_all"],
            ),
        ),
        declare(
            "engineer.file.write", AGENT,
            "Write content to a file in the workspace (creates it, or overwrites it).",
            writes.WriteFileParams, writes.write_file, kind=WRITE, tier=CORE, action="edit",
            supports_dry_run=True,
            tags=("write", "create", "save", "new file", "overwrite"),
            examples=[("create a new module", {"path": "src/util.py", "content": "X = 1\n"})],
            policy=Policy(
                do=["read an existing file before overwriting it (required; a new file needs "
                    "no read)"],
                dont=["overwrite a file you have not read, or one changed since you read it: "
                      "it is refused (CONFLICT); prefer engineer.file.edit for changes"],
            ),
        ),
        declare(
            "engineer.shell.run", AGENT,
            "Execute a shell command in the workspace with a timeout; returns exit code, stdout "
            "and stderr. A dry run unless dry_run is false.",
            writes.RunCommandParams, writes.run_command, kind=WRITE, destructive=True, tier=CORE,
            action="command",
            supports_dry_run=True,
            scopes=("shell",), tags=("run", "execute", "shell", "bash", "command", "terminal"),
            examples=[("list a directory", {"command": "ls -la"}),
                      ("run the linter", {"command": "ruff check .", "timeout_s": 120})],
            policy=Policy(
                do=["prefer read ops to shell for reading files"],
                dont=["start servers or anything that never exits"],
                edge_cases=["on timeout the whole process group is killed"],
            ),
            notes=("environment variables that look like credentials are not passed on",),
        ),
        declare(
            "engineer.task.execute", AGENT,
            "Run a task as a one-node pipeline: the engineer makes the change, the "
            "project's linters and tests check it, feedback loops until they pass.",
            TaskParams, provider=PIPELINES, tier=CORE, kind=WRITE,
            tags=("task", "execute", "implement", "do", "code", "pipeline"),
            examples=[("run a small change as task t1",
                       {"task_id": "t1", "instructions": "add a --verbose flag to the CLI"})],
            notes=("refused while a pipeline runs in the session (an engineer inside a "
                   "pipeline cannot start another; /task ID prompt reaches it)",
                   "done when the inspector and tester pass, never on the engineer's word"),
        ),
        declare(
            "engineer.help.request", AGENT,
            "Request clarification via the Orchestrator (it reaches the user through the "
            "Architect).",
            HelpParams, provider=ORCHESTRATOR, tier=CORE,
            tags=("help", "unclear", "confused", "question", "clarification"),
            examples=[("ask which API to keep", {"question": "Keep v1 endpoints?"})],
        ),
        declare(
            "engineer.consult.librarian", AGENT,
            "Query codebase context from the Librarian: where is, how does, existing code.",
            ConsultParams, _consult("librarian", consult), tier=CONTEXTUAL,
            triggers=(r"\bwhere\b", r"\bhow does\b", r"\bfind\b", r"\bexisting\b", r"\bpattern"),
            tags=("consult", "librarian", "codebase", "where is", "find"),
            examples=[("where is auth handled", {"question": "where is auth handled?"})],
        ),
        declare(
            "engineer.consult.archivalist", AGENT,
            "Query historical context from the Archivalist: what was done before.",
            ConsultParams, _consult("archivalist", consult), tier=CONTEXTUAL,
            triggers=(r"\bbefore\b", r"\blast time\b", r"\bprevious", r"\bhistory\b", r"did we"),
            tags=("consult", "archivalist", "history", "previously"),
            examples=[("did we try this", {"question": "did we try caching before?"})],
        ),
        declare(
            "engineer.consult.academic", AGENT,
            "Query research from the Academic: best practice and recommended approaches.",
            ConsultParams, _consult("academic", consult), tier=CONTEXTUAL,
            triggers=(r"best practice", r"\brecommend", r"\bshould\b", r"\bstandard\b"),
            tags=("consult", "academic", "best practice", "research"),
            examples=[("recommended retry policy", {"question": "how should we retry?"})],
        ),
    ]  # fmt: skip
