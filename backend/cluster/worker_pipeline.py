"""What runs on a Ray worker: one engineer node's whole pipeline, in a checkout of its own.

The worker fetches the base commit into a fresh repository, hands the checkout to the
job's ``body`` (the engine's: :mod:`backend.engine.plan_runs.ray_work` builds an engine
from the driver's configuration there and runs the node through the same pipeline path a
local run takes), then commits what the pipeline left and pushes it to the result ref.
``body`` travels pickled by reference, so this room never imports the engine. Nothing
here imports Ray either: :mod:`backend.cluster.ray_pipelines` wraps :func:`run_job` as a
remote task.
"""

from __future__ import annotations

import asyncio
import os
import shutil
import tempfile
import time
from collections.abc import Awaitable, Callable, Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from backend.cluster.git_handoff import changed_files, commit_and_push, fetch_checkout
from backend.cluster.pipeline_history import PipelineHistory
from backend.plans import PlanNode

Send = Callable[[tuple[str, str, Any]], None]  # (run key, kind, payload) to the driver
# Variables of the driver's that change how an engine behaves (SYLK_SEMANTIC, SYLK_SANDBOX...);
# never its data or config dir: the worker's are its own.
PRIVATE_ENV = frozenset({"SYLK_DATA_DIR", "SYLK_CONFIG_DIR"})
SCRATCH = "sylk-ray-"  # a task's scratch dir: sylk-ray-<worker pid>-<random>


@dataclass(frozen=True)
class PipelineOutcome:
    """What the body's pipeline gave: its output or why it failed, and its model usage."""

    ok: bool
    output: str = ""
    error: str | None = None
    retryable: bool = True
    usage: list[dict[str, Any]] = field(default_factory=list)
    history: PipelineHistory = field(default_factory=PipelineHistory)
    phases_ms: dict[str, float] = field(default_factory=dict)  # where the body's time went


# (job, the workspace in the checkout, a private data dir, send) -> the pipeline's outcome
Body = Callable[["WorkerJob", Path, Path, Send], Awaitable[PipelineOutcome]]


@dataclass(frozen=True)
class WorkerJob:
    """Everything a worker needs, pickled to it: no handle on the driver's process."""

    run_key: str
    session_id: str
    plan_id: str
    node: PlanNode
    upstream: Mapping[str, Any]
    repository: str  # the session's repository: a path the worker reaches (or a remote)
    subdir: str  # the workspace inside it
    base_ref: str
    result_ref: str
    body: Body
    engine: dict[str, Any] = field(default_factory=dict)  # the body's: config, settings
    env: dict[str, str] = field(default_factory=dict)


@dataclass(frozen=True)
class WorkerOutcome:
    """How the worker's pipeline ended, and where its result commit is."""

    ok: bool
    output: str = ""
    error: str | None = None
    retryable: bool = True
    base_sha: str = ""
    result_sha: str | None = None
    files: list[str] = field(default_factory=list)
    usage: list[dict[str, Any]] = field(default_factory=list)
    history: PipelineHistory = field(default_factory=PipelineHistory)
    phases_ms: dict[str, float] = field(default_factory=dict)  # fetch, the body's, push
    worker: str = ""
    pid: int = 0


def sylk_env(environ: Mapping[str, str]) -> dict[str, str]:
    """The driver's SYLK_* variables a worker engine should see too."""
    return {k: v for k, v in environ.items() if k.startswith("SYLK_") and k not in PRIVATE_ENV}


def run_job(job: WorkerJob, send: Send, worker: str) -> WorkerOutcome:
    """The Ray task's body (synchronous: Ray runs it in a worker process)."""
    send((job.run_key, "worker", {"pid": os.getpid(), "worker": worker}))
    os.environ.update(job.env)
    sweep_dead_scratch(Path(tempfile.gettempdir()))
    scratch = Path(tempfile.mkdtemp(prefix=f"{SCRATCH}{os.getpid()}-"))
    try:
        return asyncio.run(_run(job, send, worker, scratch))
    finally:
        # Removed before the outcome returns (tens of ms): a removal left to a thread is
        # cut short when Ray stops the worker, leaving a checkout of the user's code.
        shutil.rmtree(scratch, ignore_errors=True)


async def _run(job: WorkerJob, send: Send, worker: str, scratch: Path) -> WorkerOutcome:
    checkout = scratch / "checkout"
    source = Path(job.repository)
    began = time.perf_counter()
    base_sha = await fetch_checkout(source, job.base_ref, checkout)
    fetched = time.perf_counter()
    workspace = checkout / job.subdir if job.subdir else checkout
    ran = await job.body(job, workspace, scratch / "data", send)
    phases = {"fetch": _ms(fetched - began), **ran.phases_ms}
    if not ran.ok:
        return WorkerOutcome(ok=False, error=ran.error, retryable=ran.retryable,
                             base_sha=base_sha, usage=ran.usage, history=ran.history,
                             phases_ms=phases, worker=worker, pid=os.getpid())  # fmt: skip
    pushing = time.perf_counter()
    sha = await commit_and_push(checkout, ran.output, source, job.result_ref)
    files = await changed_files(checkout / ".git", checkout, base_sha, sha)
    phases["push"] = _ms(time.perf_counter() - pushing)
    return WorkerOutcome(ok=True, output=ran.output, base_sha=base_sha, result_sha=sha,
                         files=files, usage=ran.usage, history=ran.history,
                         phases_ms=phases, worker=worker, pid=os.getpid())  # fmt: skip


def sweep_dead_scratch(temp: Path) -> None:
    """Remove what a worker killed mid-task left (its checkout of the user's code, its
    data dir): scratch dirs of ours whose process is gone. A live pid's are never touched."""
    for folder in temp.glob(f"{SCRATCH}*-*"):
        pid = folder.name.removeprefix(SCRATCH).split("-", 1)[0]
        if pid.isdigit() and not _alive(int(pid)) and folder.stat().st_uid == os.getuid():
            shutil.rmtree(folder, ignore_errors=True)


def _alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:  # someone else's process: alive
        return True
    return True


def _ms(seconds: float) -> float:
    return round(seconds * 1000, 1)
