"""A child process that runs the demo's plan through the engine's public API (a script).

``plan_child.py start DATA_DIR WORKSPACE``
    Sends the demo's request in a new session (edits allowed, ``assume_yes``: the plan
    is approved as it is proposed) and waits for the plan's DAG.
``plan_child.py resume DATA_DIR WORKSPACE``
    ``Engine.resume_dags()`` on the same data dir, then waits for the resumed DAG.

The script is ``$SYLK_SCRIPT``. Each DAG transition is printed as it happens
(``node ID STATUS [resumed]``), each pipeline transition as ``task ID STATE LOOP``,
and each model call as ``model ROLE``; flushed, so a parent can wait for a line and
kill the process there. Then ``outcome STATUS`` and, after the session's QA, ``phase
PHASE``.
"""

from __future__ import annotations

import asyncio
import re
import sys
from pathlib import Path

REQUEST = "add a --verbose flag to the CLI"
PLAN_ID = "verbose-flag"
PIPELINE_NOTICE = re.compile(rf"^Plan {PLAN_ID}, task (\S+): (\S+) \(loop (\d+)\)")


async def main(mode: str, data_dir: Path, workspace: Path) -> int:
    from backend.engine import Engine, EngineConfig
    from backend.events import AgentStepEvent, DagStatusChanged, EngineEvent, EngineNotice

    def show(event: EngineEvent) -> None:
        if isinstance(event, DagStatusChanged) and event.node_id is not None:
            resumed = " resumed" if event.resumed else ""
            print(f"node {event.node_id} {event.status}{resumed}", flush=True)
        elif isinstance(event, EngineNotice) and (found := PIPELINE_NOTICE.match(event.text)):
            print("task {} {} {}".format(*found.groups()), flush=True)
        elif isinstance(event, AgentStepEvent) and event.step.kind == "model_call":
            print(f"model {event.step.role}", flush=True)

    config = EngineConfig(data_dir=data_dir, workspace=workspace, provider="scripted",
                          assume_yes=True, watch_files=False)  # fmt: skip
    engine = Engine(config)
    engine.events.add_listener(show)
    try:
        if mode == "start":
            session = await engine.ensure_session()
            await engine.approval_command(session.id, "auto-edit")
            await engine.submit(session.id, REQUEST)
        else:
            resumed = await engine.resume_dags()
            print(f"resumed {' '.join(plan for _, plan in resumed)}", flush=True)
            session = engine.get_session(resumed[0][0])
        outcome = await engine.wait_dag(session.id, PLAN_ID)
        print(f"outcome {outcome.status.value if outcome else None}", flush=True)
        await engine.wait_qa(session.id)  # the session's QA after a passed DAG
        print(f"phase {engine.session_phase(session.id).value}", flush=True)
    finally:
        await engine.aclose()
    return 0


if __name__ == "__main__":
    sys.exit(asyncio.run(main(sys.argv[1], Path(sys.argv[2]), Path(sys.argv[3]))))
