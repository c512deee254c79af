"""A batch's action carries the edits the approval gate refused inside it, stored and read
back, so whoever reads a turn's actions sees a refusal made in a batch."""

from __future__ import annotations

import json
from typing import Any

from backend.agents.tool_actions import actions_from_payload, begin_action, finish_action

READ_ONLY = {"decision": "denied", "by": "mode", "reason": "read_only", "mode": "read-only"}


def _item(op: str, ok: bool, **extra: Any) -> dict[str, Any]:
    return {"op": op, "ok": ok, "meta": {"trace_id": "t", **extra.pop("meta", {})}, **extra}


def _write(path: str) -> dict[str, Any]:
    return {"verb": "execute", "op": "engineer.file.write", "args": {"path": path, "content": "x"}}


def test_refused_edits_inside_a_batch_are_named_with_who_refused() -> None:
    calls = [_write("a.py"), {"verb": "search", "query": "x"}, _write("b.py")]
    action = begin_action("c", "batch", {"calls": calls})
    denied = {"code": "ACCESS_DENIED", "message": "refused to write a.py: read-only"}
    results = [
        _item("engineer.file.write", False, error=denied, meta={"approval": READ_ONLY}),
        _item("search", True, result={"results": []}),
        _item("engineer.file.write", True, result={"path": "b.py", "bytes": 1}),
    ]
    envelope = {"op": "batch", "ok": True, "result": {"results": results},
                "meta": {"trace_id": "t"}}  # fmt: skip
    done = finish_action(action, json.dumps(envelope), False)
    assert done.status == "ok" and done.files == ["b.py"]
    assert done.refused is not None
    [refused] = done.refused
    assert (refused.op, refused.title, refused.status) == ("engineer.file.write", "a.py", "denied")
    assert refused.approval == "denied by mode read-only"
    stored = done.stored()
    assert "items" not in stored  # the begun calls are not kept
    [back] = actions_from_payload({"actions": [stored]})
    assert back.refused is not None and back.refused[0].title == "a.py"


def test_a_batch_without_refusals_or_with_unreadable_results_carries_none() -> None:
    action = begin_action("c", "batch", {"calls": [_write("a.py")]})
    envelope = {"op": "batch", "ok": True, "result": {"results": []}, "meta": {"trace_id": "t"}}
    assert finish_action(action, json.dumps(envelope), False).refused is None
    odd = begin_action("d", "batch", {"calls": ["not a call"]})
    assert odd.items is None
