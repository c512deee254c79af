"""The engine's side of running engineer nodes on Ray (``[orchestration] backend = "ray"``).

:class:`EngineSide` lends :class:`backend.cluster.RayPipelines` what it needs of the
driver's engine (the session's workspace, its approval settings, the archive for the
worker's usage), and :func:`run_on_worker` is the body a worker runs: an engine built
from the driver's configuration (same providers, approval mode and rules, sandbox; a
private data dir) on the worker's checkout, running the node through the same
:class:`PipelineWork` path as a local run. So the sandbox and the approval policy on a
worker are the local ones by construction; what the policy asks the user is relayed to
the driver's QuestionBoard (``backend.cluster.question_relay``) when someone answers there.
"""

from __future__ import annotations

import asyncio
import importlib.util
import time
from collections.abc import Awaitable, Callable
from pathlib import Path
from typing import TYPE_CHECKING, Any

from backend.approvals.session_approvals import METADATA_KEY
from backend.cluster.errors import RayMissingError
from backend.cluster.pipeline_history import PipelineHistory, harvest, retargeted, store_write
from backend.cluster.question_relay import WorkerQuestions
from backend.cluster.worker_pipeline import Body, PipelineOutcome, Send, WorkerJob
from backend.engine.plan_runs.ray_apply import apply_as_turn, rolled_back
from backend.events import (
    ChoiceQuestion,
    EngineEvent,
    EngineNotice,
    EventStream,
    MessageAppended,
    PipelineMoved,
)

if TYPE_CHECKING:
    from backend.engine.build import EngineParts


class EngineSide:
    """The driver engine's parts a :class:`RayPipelines` uses."""

    def __init__(self, parts: EngineParts) -> None:
        self._parts = parts
        self.events: EventStream = parts.events
        self.body: Body = run_on_worker
        # One result lands at a time per session: each is its own checkpoint turn (two
        # overlapping turns would be credited to whichever ended first, as one).
        self._landing: dict[str, asyncio.Lock] = {}

    def workspace(self, session_id: str) -> Path:
        return Path(self._parts.sessions.get(session_id).workspace)

    async def ask(self, question: ChoiceQuestion, session_id: str) -> str | None:
        return await self._parts.questions.ask(question, session_id)

    def engine_fields(self, session_id: str) -> dict[str, Any]:
        config = self._parts.config
        return {
            "settings": self._parts.settings,
            "config_file": config.config_file,
            "provider": config.provider,
            "model": config.model,
            "approval_mode": config.approval_mode,
            "assume_yes": config.assume_yes,
            # Someone answers questions here (the TUI): the worker relays its own to us;
            # else it refuses as a local run with nobody to ask does (approval_required).
            "answered_here": self._parts.questions.answered_here,
            "approvals": self._parts.sessions.get(session_id).metadata.get(METADATA_KEY),
        }

    async def record_usage(self, session_id: str, rows: list[dict[str, Any]]) -> None:
        await self._parts.archive.arecord_usage(rows)

    async def record_history(self, session_id: str, history: PipelineHistory) -> int:
        """Stored once, then announced as a local run's messages are (front ends show them)."""
        archive = self._parts.archive
        stored: int = await archive.awrite(store_write(history, session_id), key=session_id)
        if stored:
            for message in retargeted(history, session_id):
                self.events.publish(MessageAppended(session_id=session_id, message=message))
        return stored

    async def applying(
        self, session_id: str, task: str, files: list[str], apply: Callable[[], Awaitable[None]]
    ) -> None:
        async with self._landing.setdefault(session_id, asyncio.Lock()):
            await apply_as_turn(self._parts, session_id, task, files, apply)

    async def rolled_back(self, session_id: str, task: str) -> bool:
        return await rolled_back(self._parts, session_id, task)


async def run_on_worker(
    job: WorkerJob, workspace: Path, data_dir: Path, send: Send
) -> PipelineOutcome:
    """On the worker: an engine on the checkout runs the node's pipeline."""
    clock = Phases()
    from backend.engine import Engine, EngineConfig
    from backend.engine.build import build

    clock.lap("import")

    fields = job.engine
    data_dir.mkdir(parents=True, exist_ok=True)  # noqa: ASYNC240 (a new folder)
    config = EngineConfig(
        data_dir=data_dir, workspace=workspace, watch_files=False, run_approved_plans=False,
        config_file=fields.get("config_file"), provider=fields.get("provider"),
        model=fields.get("model"), approval_mode=fields.get("approval_mode"),
        assume_yes=bool(fields.get("assume_yes")),
    )  # fmt: skip
    settings = fields["settings"]
    # The checkout is already this task's own: no worktree of it.
    sessions = settings.sessions.model_copy(update={"git_isolation": False})
    parts = build(config, settings.model_copy(update={"sessions": sessions}))
    engine = Engine.from_parts(parts)
    clock.lap("build")
    detach = parts.events.add_listener(_forwarder(job, send))
    if fields.get("answered_here"):
        relay = WorkerQuestions(job.run_key, send)
        detach_questions = relay.attach(parts.questions.attach, parts.events.add_listener)
    else:
        detach_questions = _nothing
    try:
        session = await engine.ensure_session()
        if fields.get("approvals"):
            await parts.sessions.set_metadata(session.id, METADATA_KEY, fields["approvals"])
        pipelines = parts.dags.pipelines
        assert pipelines is not None, "an engine runs engineer nodes as pipelines"
        result = await pipelines.run(
            parts.answers.answer, session.id, job.plan_id, job.node, job.upstream
        )
        clock.lap("run")
        usage = _usage_rows(parts, session.id)
        await parts.hook_work.settle()  # the chronicle's file records of the last edits
        history = await parts.archive.aread(lambda conn: harvest(conn, session.id))
    finally:
        detach_questions()
        detach()
        await engine.aclose()
    clock.lap("harvest_and_close")
    return PipelineOutcome(ok=result.ok, output=str(result.output or ""), error=result.error,
                           retryable=result.retryable, usage=usage,
                           history=history, phases_ms=clock.laps)  # fmt: skip


class Phases:
    """Milliseconds per phase of a worker's body (the cluster benchmark reads them)."""

    def __init__(self) -> None:
        self.laps: dict[str, float] = {}
        self._last = time.perf_counter()

    def lap(self, name: str) -> None:
        now = time.perf_counter()
        self.laps[name] = round((now - self._last) * 1000, 1)
        self._last = now


def _nothing() -> None:
    return None


def _usage_rows(parts: EngineParts, session_id: str) -> list[dict[str, Any]]:
    """The worker's model calls as ``USAGE`` rows for the driver's archive (budgets count them)."""
    from sqlalchemy import select

    from backend.archive.schema import USAGE

    def read(conn: Any) -> list[dict[str, Any]]:
        rows = conn.execute(select(USAGE).where(USAGE.c.session_id == session_id))
        return [{k: v for k, v in row._mapping.items() if k != "seq"} for row in rows]

    found: list[dict[str, Any]] = parts.archive.read(read)
    return found


def _forwarder(job: WorkerJob, send: Send) -> Callable[[EngineEvent], None]:
    """The pipeline's notices and moves go to the driver, which republishes them."""

    def forward(event: EngineEvent) -> None:
        if isinstance(event, EngineNotice) and event.plan_id == job.plan_id:
            send((job.run_key, "notice", (event.text, event.level, event.progress)))
        elif isinstance(event, PipelineMoved):
            send((job.run_key, "moved", event.model_dump(mode="json")))

    return forward


def install_ray_pipelines(parts: EngineParts) -> None:
    """``[orchestration] backend = "ray"``: an approved plan's engineer nodes go to the
    cluster (Ray itself is imported at the first node, never at build)."""
    settings = parts.settings.orchestration
    if settings.backend != "ray":
        return
    if importlib.util.find_spec("ray") is None:
        raise RayMissingError()
    from backend.cluster.ray_pipelines import RayPipelines

    parts.dags.remote_pipelines = RayPipelines(EngineSide(parts), settings)
