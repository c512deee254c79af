"""``batch(chain=true)``: steps run in order, a step reads earlier results, the first
error stops the chain.

A model that must feed one op's output into the next (search, then read the first
hit's file) would otherwise spend a round trip per step. In a chain, anywhere in a
step but its ``verb`` (an ``execute``'s ``op`` or ``args`` at any depth, a ``describe``'s
``op``, a ``search``'s ``query``), the object ``{"$ref": "N.path"}`` stands
for a value of step ``N``'s envelope as the caller reads it: ``"0.result.hits.0.op"``
is the ``op`` of the first hit of step 0's ``result``. Segments are dotted; a number
indexes a list. The reference is replaced by that value, whole (a number stays a
number, an object an object). A ``$ref`` string beginning with ``#`` is a JSON Schema
reference and passed on as it is.

Checked before anything runs: a reference that is not ``N.path``, or names its own
step or a later one, refuses the whole chain (VALIDATION_ERROR, ``field_errors``
naming where it sits, e.g. ``calls.1.args.path``). Checked at its step: a path the
earlier envelope does not have, or that leads to a value that is not plain JSON,
fails that step with a field error. A failing step (bad shape, bad reference, an
error envelope, a verb that raised) stops the chain: the reply holds the envelopes
of the steps run (the failing one last), ``stopped_at`` and the steps ``not_run``.
"""

from __future__ import annotations

import math
import re
from collections.abc import Awaitable, Callable, Iterator
from typing import Any

from backend.skills.envelopes import Envelope, ErrorCode, failure

REF_KEY = "$ref"
_REF = re.compile(r"^(?P<step>\d+)(?:\.(?P<path>.+))?$")

StepRunner = Callable[[Any], Awaitable[Envelope]]


class RefProblem(Exception):
    """A reference that cannot be followed: ``field`` is where it sits in the call."""

    def __init__(self, field: str, message: str) -> None:
        super().__init__(message)
        self.field = field
        self.message = message


def _is_ref(value: Any) -> bool:
    return (
        isinstance(value, dict)
        and len(value) == 1
        and isinstance(value.get(REF_KEY), str)
        and not value[REF_KEY].startswith("#")
    )


def _refs(value: Any, where: str) -> Iterator[tuple[str, str]]:
    """Every ``(field, reference)`` inside ``value``, ``where`` being its own field."""
    if _is_ref(value):
        yield where, value[REF_KEY]
    elif isinstance(value, dict):
        for key, inner in value.items():
            yield from _refs(inner, f"{where}.{key}")
    elif isinstance(value, list):
        for i, inner in enumerate(value):
            yield from _refs(inner, f"{where}.{i}")


def _fields_of(raw: Any) -> dict[str, Any]:
    """A step's fields that may hold references: all but its verb."""
    return {k: v for k, v in raw.items() if k != "verb"} if isinstance(raw, dict) else {}


def forward_problems(calls: list[Any]) -> list[dict[str, str]]:
    """Field errors for references that are malformed or point at their own or a later
    step; none means every reference may be followed once its step comes."""
    problems = []
    for index, raw in enumerate(calls):
        for field, ref in _refs(_fields_of(raw), f"calls.{index}"):
            found = _REF.match(ref)
            if found is None:
                message = f"{ref!r} is not a reference: write 'N.path', e.g. '0.result.path'"
            elif int(found["step"]) >= index:
                message = (
                    f"{ref!r} names step {found['step']}, which has not run before step "
                    f"{index}: a step may only use the results of the steps before it"
                )
            else:
                continue
            problems.append({"field": field, "message": message})
    return problems


def _plain_json(value: Any) -> bool:
    if value is None or isinstance(value, str | bool | int):
        return True
    if isinstance(value, float):
        return math.isfinite(value)
    if isinstance(value, list):
        return all(_plain_json(v) for v in value)
    if isinstance(value, dict):
        return all(isinstance(k, str) and _plain_json(v) for k, v in value.items())
    return False


def _follow(ref: str, field: str, done: list[dict[str, Any]]) -> Any:
    found = _REF.match(ref)
    assert found is not None  # forward_problems refused any other
    value: Any = done[int(found["step"])]
    walked = found["step"]
    for segment in (found["path"] or "").split(".") if found["path"] else ():
        if isinstance(value, dict) and segment in value:
            value = value[segment]
        elif isinstance(value, list) and segment.isdigit() and int(segment) < len(value):
            value = value[int(segment)]
        else:
            have = (
                f"keys {', '.join(sorted(map(str, value)))}"
                if isinstance(value, dict) and value
                else f"{len(value)} items"
                if isinstance(value, list)
                else f"a {type(value).__name__}"
            )
            raise RefProblem(field, f"{ref!r}: {walked} has no {segment!r} (it holds {have})")
        walked = f"{walked}.{segment}"
    if not _plain_json(value):
        raise RefProblem(field, f"{ref!r} leads to a {type(value).__name__}, not a JSON value")
    return value


def _resolved(value: Any, where: str, done: list[dict[str, Any]]) -> Any:
    if _is_ref(value):
        return _follow(value[REF_KEY], where, done)
    if isinstance(value, dict):
        return {k: _resolved(v, f"{where}.{k}", done) for k, v in value.items()}
    if isinstance(value, list):
        return [_resolved(v, f"{where}.{i}", done) for i, v in enumerate(value)]
    return value


def with_results(index: int, raw: Any, done: list[dict[str, Any]]) -> Any:
    """Step ``index``'s call with its references replaced by earlier steps' values;
    :class:`RefProblem` for one that cannot be followed."""
    if not isinstance(raw, dict):
        return raw
    fields = _resolved(_fields_of(raw), f"calls.{index}", done)
    return {"verb": raw["verb"], **fields} if "verb" in raw else fields


def _step_name(raw: Any) -> dict[str, Any]:
    item = raw if isinstance(raw, dict) else {}
    named = {"verb": item.get("verb")}
    if item.get("op") or item.get("path"):
        named["op"] = item.get("op") or item.get("path")
    elif item.get("query"):
        named["query"] = item.get("query")
    return named


async def run_chain(
    calls: list[Any], run_step: StepRunner, trace: str
) -> tuple[list[Envelope], dict[str, Any]]:
    """Run ``calls`` in order with ``run_step``; the envelopes of the steps run and what
    the reply adds about where the chain stopped (empty when every step succeeded)."""
    envelopes: list[Envelope] = []
    done: list[dict[str, Any]] = []
    for index, raw in enumerate(calls):
        try:
            envelope = await run_step(with_results(index, raw, done))
        except RefProblem as problem:
            envelope = failure(
                str(_step_name(raw).get("op") or "batch"),
                ErrorCode.VALIDATION_ERROR,
                f"step {index}: {problem.message}",
                trace_id=trace,
                details={"field_errors": [{"field": problem.field, "message": problem.message}]},
                help_path="batch",
            )
        envelopes.append(envelope)
        done.append(envelope.to_model())
        if not envelope.ok:
            rest = [{"step": j, **_step_name(r)} for j, r in enumerate(calls) if j > index]
            return envelopes, {"stopped_at": index, "not_run": rest}
    return envelopes, {}
