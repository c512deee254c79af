"""A plan from a document (JSON or YAML) or from decoded data, checked whole.

Plans arrive as text from a model, from a file (`sylk plan validate`) or from a client
over MCP: untrusted in every case. This module reads the text without executing
anything (``yaml.safe_load``, refusing YAML aliases so a small document cannot expand
into a huge one; JSON with duplicate keys refused, so no two readers see different
plans), turns pydantic's field errors into :class:`~backend.plans.errors.PlanProblem`
s whose path names the field (``nodes[2].depends_on[0]``), then checks the graph.
"""

from __future__ import annotations

import json
from collections.abc import Sequence
from typing import Any, Literal

from pydantic import ValidationError

from backend.plans.errors import PlanProblem, ProblemCode, error_for
from backend.plans.graph import validate_plan
from backend.plans.models import Plan
from backend.plans.validated_plan import ValidatedPlan
from backend.roles import AGENT_ROLES

DocumentFormat = Literal["json", "yaml"]
MAX_DOCUMENT_BYTES = 8 * 1024 * 1024
_NUMBER_ERRORS = frozenset(
    {"greater_than", "greater_than_equal", "less_than", "less_than_equal", "multiple_of"}
)


def load_plan(data: object, *, agents: Sequence[str] = AGENT_ROLES) -> ValidatedPlan:
    """Decoded data (a dict from JSON, YAML or a model's tool call) as a validated plan."""
    return validate_plan(parse_plan(data), agents=agents)


def load_plan_document(
    text: str | bytes,
    fmt: DocumentFormat | None = None,
    *,
    agents: Sequence[str] = AGENT_ROLES,
) -> ValidatedPlan:
    """A plan document's text as a validated plan; ``fmt`` None guesses from the text."""
    return load_plan(read_document(text, fmt), agents=agents)


def parse_plan(data: object) -> Plan:
    """The fields of ``data`` as a :class:`Plan`, or a PlanFieldError naming every bad one."""
    try:
        return Plan.model_validate(data)
    except ValidationError as exc:
        raise error_for([_field_problem(e) for e in exc.errors()]) from None


def read_document(text: str | bytes, fmt: DocumentFormat | None = None) -> object:
    """Decode a plan document without trusting it: bounded, no aliases, no duplicate keys."""
    if len(text) > MAX_DOCUMENT_BYTES:
        raise _document_error(
            f"the document is larger than {MAX_DOCUMENT_BYTES // (1024 * 1024)} MiB",
            size=len(text),
        )
    if isinstance(text, bytes):
        try:
            text = text.decode("utf-8")
        except UnicodeDecodeError as exc:
            raise _document_error(f"not UTF-8 text (byte {exc.start})", offset=exc.start) from None
    if fmt is None:
        fmt = "json" if text.lstrip().startswith("{") else "yaml"
    try:
        return _read_json(text) if fmt == "json" else _read_yaml(text)
    except RecursionError:
        raise _document_error("the document nests too deeply") from None


def _read_json(text: str) -> object:
    try:
        return json.loads(text, object_pairs_hook=_no_duplicate_keys)
    except json.JSONDecodeError as exc:
        raise _document_error(
            f"not valid JSON: {exc.msg} at line {exc.lineno} column {exc.colno}",
            line=exc.lineno,
            column=exc.colno,
        ) from None
    except _DuplicateKeyError as exc:
        message = f"the key {exc.key!r} appears twice in one object"
        raise _document_error(message, key=exc.key) from None


def _read_yaml(text: str) -> object:
    import yaml  # a YAML plan is rare: the parser loads with the first one

    try:
        for event in yaml.parse(text, Loader=yaml.SafeLoader):
            if isinstance(event, yaml.AliasEvent):
                mark = event.start_mark
                line = mark.line + 1 if mark is not None else None
                raise _document_error("YAML aliases (*name) are not accepted in a plan", line=line)
        return yaml.safe_load(text)
    except yaml.YAMLError as exc:
        mark = getattr(exc, "problem_mark", None)
        where = f" at line {mark.line + 1} column {mark.column + 1}" if mark is not None else ""
        problem = getattr(exc, "problem", None) or "cannot be parsed"
        raise _document_error(f"not valid YAML: {problem}{where}") from None


class _DuplicateKeyError(ValueError):
    def __init__(self, key: str) -> None:
        super().__init__(key)
        self.key = key


def _no_duplicate_keys(pairs: list[tuple[str, Any]]) -> dict[str, Any]:
    seen: dict[str, Any] = {}
    for key, value in pairs:
        if key in seen:
            raise _DuplicateKeyError(key)
        seen[key] = value
    return seen


def _document_error(message: str, **fields: Any) -> Exception:
    return error_for([PlanProblem(ProblemCode.BAD_DOCUMENT, "", message, fields)])


def field_path(loc: Sequence[int | str]) -> str:
    """pydantic's location as a path a person reads: ``nodes[2].depends_on[0]``."""
    path = ""
    for part in loc:
        path += f"[{part}]" if isinstance(part, int) else (f".{part}" if path else str(part))
    return path


def _field_problem(error: Any) -> PlanProblem:
    kind = str(error["type"])
    path = field_path(error["loc"])
    if not path and kind == "model_type":
        message = "a plan document is a JSON object (a YAML mapping) at its top level"
    else:
        message = str(error["msg"])
    is_number = kind in _NUMBER_ERRORS or kind.startswith("int_")
    code = ProblemCode.BAD_NUMBER if is_number else ProblemCode.BAD_FIELD
    fields: dict[str, Any] = {"type": kind}
    value = error.get("input")
    if (
        value is None
        or isinstance(value, bool | int | float)
        or (isinstance(value, str) and len(value) <= 200)
    ):
        fields["input"] = value
    return PlanProblem(code, path, message, fields)
