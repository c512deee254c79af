"""A child process that runs a DAG against a SQLite state file (run as a script).

``dag_child.py PLAN_JSON STATE_DB LOG [HANG_NODE]``
    Validates the plan, runs it with a :class:`SqliteDagStateStore` on ``STATE_DB``.
    Each node appends ``start ID`` to ``LOG`` when it starts and ``done ID <upstream>``
    when it ends (one ``write`` each, so a kill cannot tear a line); ``HANG_NODE``
    never ends (``hanging ID`` is printed once its start is logged), so the parent can
    kill the process while it runs. Every status event
    is printed (``event ID STATUS``) and flushed as it happens, and the outcome last
    (``outcome STATUS``).
"""

from __future__ import annotations

import asyncio
import json
import os
import sys
from collections.abc import Mapping
from pathlib import Path
from typing import Any


def _append(log: Path, line: str) -> None:
    fd = os.open(log, os.O_WRONLY | os.O_APPEND | os.O_CREAT, 0o600)
    try:
        os.write(fd, (line + "\n").encode())
    finally:
        os.close(fd)


async def main(plan_text: str, state_db: Path, log: Path, hang: str | None) -> int:
    from backend.orchestration import DagScheduler, NodeEvent, NodeResult, SqliteDagStateStore
    from backend.plans import PlanNode, load_plan_document

    plan = load_plan_document(plan_text, "json")

    async def run_node(node: PlanNode, upstream: Mapping[str, Any]) -> NodeResult:
        _append(log, f"start {node.id}")
        if node.id == hang:
            print(f"hanging {node.id}", flush=True)  # its start is in the log by now
            await asyncio.Event().wait()
        await asyncio.sleep(0)  # a suspension point: the layer's other nodes start too
        seen = ",".join(f"{k}={v}" for k, v in sorted(upstream.items()))
        _append(log, f"done {node.id} {seen}")
        return NodeResult.passed(f"out-{node.id}")

    def on_event(event: NodeEvent) -> None:
        print(f"event {event.node_id} {event.status.value}", flush=True)

    store = SqliteDagStateStore(state_db)
    try:
        outcome = await DagScheduler(plan, run_node, store=store, on_event=on_event).run()
    finally:
        await store.aclose()
    print(
        f"outcome {outcome.status.value} {json.dumps(outcome.outputs, sort_keys=True)}", flush=True
    )
    return 0


if __name__ == "__main__":
    args = sys.argv[1:]
    hang_node = args[3] if len(args) > 3 else None
    sys.exit(asyncio.run(main(Path(args[0]).read_text(), Path(args[1]), Path(args[2]), hang_node)))
