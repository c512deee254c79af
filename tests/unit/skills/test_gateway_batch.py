"""``batch`` when a verb raises instead of answering with an error envelope.

The Gateway turns a failing skill handler into an envelope itself; other
``Verbs`` (a bridge to another process, a gateway with a broken hook) may let
the exception through. The batch still answers every item, and the one that
raised points its caller at help like any other error does.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from pydantic import BaseModel, ConfigDict

from backend.skills.envelopes import Envelope, ErrorCode, Meta
from backend.skills.gateway.batch import run_batch
from backend.skills.models import Skill, SkillContext
from backend.skills.registry import Registry


class NoParams(BaseModel):
    model_config = ConfigDict(extra="forbid")


async def fine(_ctx: SkillContext, _p: NoParams) -> str:
    return "fine"


async def broken(_ctx: SkillContext, _p: NoParams) -> str:
    raise RuntimeError("the ledger is locked")


class RawVerbs:
    """Batch's verbs over a registry, running handlers without wrapping their exceptions;
    describe is broken on purpose."""

    def __init__(self, registry: Registry) -> None:
        self.registry = registry

    def search(
        self, ctx: SkillContext, query: str, domain: str | None = None, limit: int = 10, **_: Any
    ) -> Envelope:
        return Envelope(op="search", ok=True, result={"hits": []}, meta=Meta(trace_id="t"))

    def describe(
        self, ctx: SkillContext, path: str = "", level: str = "summary", **_: Any
    ) -> Envelope:
        raise LookupError(f"no help for {path!r} today")

    async def execute(
        self,
        ctx: SkillContext,
        op: str,
        args: dict[str, Any] | None = None,
        *,
        dry_run: bool | None = None,
        idempotency_key: str | None = None,
    ) -> Envelope:
        skill = self.registry.require(op)
        result = await skill.handler(ctx, skill.params.model_validate(args or {}))
        return Envelope(op=op, ok=True, result=result, meta=Meta(trace_id="t"))


def verbs() -> RawVerbs:
    registry = Registry()
    registry.register_all(
        [
            Skill(op="books.ledger.read", agent="librarian", description="Read the ledger.",
                  params=NoParams, handler=fine),
            Skill(op="books.ledger.close", agent="librarian", description="Close the ledger.",
                  params=NoParams, handler=broken),
        ]
    )  # fmt: skip
    return RawVerbs(registry)


async def test_an_item_whose_handler_raises_points_at_the_ops_help(tmp_path: Path) -> None:
    ctx = SkillContext(session_id="s1", agent="librarian", workspace=tmp_path)
    env = await run_batch(
        verbs(),
        ctx,
        [
            {"verb": "execute", "op": "books.ledger.read"},
            {"verb": "execute", "op": "books.ledger.close"},
            {"verb": "describe", "op": "books"},
        ],
    )
    read, close, describe = env.result["results"]
    assert read["ok"] and read["result"] == "fine"
    assert close["op"] == "books.ledger.close" and not close["ok"]
    assert close["error"]["code"] == ErrorCode.INTERNAL.value
    assert close["error"]["message"] == "RuntimeError: the ledger is locked"
    assert close["error"]["help_path"] == "books.ledger.close"
    assert close["error"]["details"] == {"reason": "RuntimeError"}
    assert describe["error"]["help_path"] == "describe"
    assert env.result["summary"] == {"total": 3, "ok": 1, "failed": 2}
