"""What a tool call of an agent did, in a form every front end can show.

The loop records each call as two steps (``tool_call``, then ``tool_result``
with the gateway's envelope as JSON), and streams a running command's output as
``tool_output`` steps. :class:`ToolAction` folds those into one bounded record:
the op and its key argument, the outcome, and for an edit its unified diff, for
a command its exit code and the tail of its output. The loop stores the actions
of a turn with its answer (``payload["actions"]``), so the transcript, exports
and ``sylk run`` show them without reading the step log; the live view builds
the same records from the step events as they arrive.

Everything here is pure and bounded: a diff keeps its first lines, an output its
last ones, a title and a summary one short line each, whatever the tool returned.
"""

from __future__ import annotations

import json
import re
from collections.abc import Iterable, Mapping
from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field

ActionKind = Literal["edit", "command", "other"]
ActionStatus = Literal["running", "ok", "error", "denied", "preview", "stopped"]

MAX_TITLE = 160
MAX_SUMMARY = 200
MAX_DIFF_LINES = 400
MAX_DIFF_CHARS = 32 * 1024
OUTPUT_TAIL_LINES = 20
MAX_OUTPUT_CHARS = 4 * 1024

EDIT_OPS = frozenset({"engineer.file.edit", "engineer.file.write"})
COMMAND_OPS = frozenset({"engineer.shell.run", "tester.tests.run"})
_VERBS = frozenset({"search", "describe", "execute", "batch"})
_RESERVED_ARGS = frozenset({"dry_run", "idempotency_key"})
# The argument that says what a call is about, in the order they are looked for.
_KEY_ARGS = ("path", "command", "query", "pattern", "op", "name", "uri", "text", "id")
# What a terminal would act on rather than show: CSI (colours, cursor moves), OSC (titles,
# OSC 52 clipboard writes, hyperlinks), other escapes, and the 8-bit CSI.
_ESCAPES = re.compile(
    r"\x1b\[[0-?]*[ -/]*[@-~]"  # CSI
    r"|\x1b\][^\x07\x1b]*(?:\x07|\x1b\\)?"  # OSC, to BEL or ST
    r"|\x1b[@-Z\\-_]?"  # any other escape, or a lone ESC
    r"|\x9b[0-?]*[ -/]*[@-~]"  # the 8-bit CSI
)
_CONTROLS = re.compile(r"[\x00-\x08\x0b\x0c\x0e-\x1f\x7f-\x9f]")
_LIST_KEYS = ("results", "hits", "matches", "files", "entries", "items", "ops")


class ToolAction(BaseModel):
    """One tool call: what was asked (op, title) and what came of it."""

    model_config = ConfigDict(extra="ignore")

    id: str
    tool: str
    """The tool name the model called (``execute``, ``engineer__file__edit``)."""
    op: str
    """The op that ran (``engineer.file.edit``), or the verb (``search``, ``batch``)."""
    title: str = ""
    """The key argument: the path, the command, the query, the op described."""
    kind: ActionKind = "other"
    status: ActionStatus = "running"
    at: int = 0
    """Where in the answer's text the call was made (characters written before it)."""
    error_code: str | None = None
    summary: str | None = None
    """One line on the result: an error's message, a count of hits, a file's size."""
    diff: str | None = None
    exit_code: int | None = None
    output: str | None = None
    """The last lines of a command's output (stdout, then stderr)."""
    duration_ms: float | None = None
    approval: str | None = None
    """Who let it run or refused it, in words ("allowed by you", "denied by rule: ...")."""
    files: list[str] | None = None
    """The workspace paths the call changed, as the ops resolved them: an edit's or a
    write's file, or those of the edits and writes that ran inside a batch."""
    refused: list[ToolAction] | None = None
    """A batch's edits and writes the approval gate refused, each as its own action: a
    refusal inside a batch counts as much as one made alone (the pipeline fails on it)."""
    items: list[ToolAction] | None = Field(default=None, exclude=True)
    """A batch's calls as begun (not stored): their results are paired with them."""

    @property
    def marker(self) -> str:
        """The status in a word or two, as a block's header shows it."""
        if self.status == "ok" and self.exit_code is not None:
            return f"exit {self.exit_code}"
        if self.status == "error" and self.error_code:
            return self.error_code.lower().replace("_", " ")
        return {"running": "running…", "preview": "dry run"}.get(self.status, self.status)

    @property
    def failed(self) -> bool:
        return self.status in ("error", "denied") or bool(self.exit_code)

    def stored(self) -> dict[str, Any]:
        """The JSON-ready form kept in a transcript message (unset fields left out)."""
        return self.model_dump(mode="json", exclude_none=True)


# -- building ---------------------------------------------------------------------
def begin_action(call_id: str, tool: str, arguments: Mapping[str, Any], at: int = 0) -> ToolAction:
    """The action of a call the model just asked for (status ``running``)."""
    op, args = _op_and_args(tool, arguments)
    kind: ActionKind = "edit" if op in EDIT_OPS else "command" if op in COMMAND_OPS else "other"
    items = _batch_items(call_id, args.get("calls"), at) if op == "batch" else None
    return ToolAction(
        id=call_id, tool=tool, op=op, title=_title(op, args), kind=kind, at=at, items=items
    )


def finish_action(action: ToolAction, content: str, is_error: bool) -> ToolAction:
    """``action`` with the outcome of its call (``content``: the envelope as JSON)."""
    try:
        envelope = json.loads(content)
    except ValueError:
        envelope = None
    if not isinstance(envelope, dict):  # not the gateway's envelope: say what came back
        status: ActionStatus = "error" if is_error else "ok"
        return action.model_copy(update={"status": status, "summary": _line(content)})
    update: dict[str, Any] = {"approval": _approval(envelope.get("meta"))}
    result = envelope.get("result")
    error = envelope.get("error")
    if envelope.get("ok") is False or is_error:
        code = str(error.get("code", "")) if isinstance(error, dict) else ""
        message = str(error.get("message", "")) if isinstance(error, dict) else ""
        details = error.get("details") if isinstance(error, dict) else None
        denied = _was_refused(envelope.get("meta"))
        update |= {"status": "denied" if denied else "error", "error_code": code or None}
        update["summary"] = _line(message) or None
        if isinstance(details, dict):  # a command that timed out keeps what it printed
            update["output"] = _output_tail(details.get("stdout"), details.get("stderr"))
    else:
        dry = isinstance(result, dict) and result.get("dry_run") is True
        update |= {"status": "preview" if dry else "ok", "summary": _summary(action.op, result)}
    if isinstance(result, dict):
        update |= _result_fields(result)
        if update["status"] == "ok":
            update["files"] = _changed_files(action.op, result) or None
        if action.items and isinstance(result.get("results"), list):
            update["refused"] = _refused_inside(action.items, result["results"]) or None
    if update.get("diff") or action.op in EDIT_OPS:
        update["kind"] = "edit"
    elif update.get("exit_code") is not None or action.op in COMMAND_OPS:
        update["kind"] = "command"
    return action.model_copy(update={k: v for k, v in update.items() if v is not None})


def add_output(action: ToolAction, text: str) -> ToolAction:
    """``action`` with ``text`` (streamed output of its command) added to its tail."""
    tail = _tail((action.output or "") + text)
    return action.model_copy(update={"output": tail, "kind": "command"})


def stopped(action: ToolAction) -> ToolAction:
    """A call whose turn ended before it did (the user stopped it, or the turn failed)."""
    return action.model_copy(update={"status": "stopped"}) if action.status == "running" else action


def actions_from_payload(payload: Mapping[str, Any]) -> list[ToolAction]:
    """The actions a transcript message carries (none when it carries none, or bad ones)."""
    raw = payload.get("actions")
    if not isinstance(raw, list):
        return []
    actions = []
    for item in raw:
        try:
            actions.append(ToolAction.model_validate(item))
        except ValueError:
            continue  # an entry that is not an action is not shown, the rest still are
    return actions


def stored_actions(actions: Iterable[ToolAction]) -> list[dict[str, Any]]:
    return [a.stored() for a in actions]


def answer_pieces(text: str, actions: list[ToolAction]) -> list[str | tuple[int, ToolAction]]:
    """The answer's text cut where each tool call was made, ``(index, action)`` between.

    Blank pieces are left out; an action's place is clamped into the text, so a text
    changed since (a key redacted) still shows every action once, in order.
    """
    pieces: list[str | tuple[int, ToolAction]] = []
    start = 0
    for index, action in sorted(enumerate(actions), key=lambda pair: pair[1].at):
        at = min(max(action.at, start), len(text))
        if text[start:at].strip():
            pieces.append(text[start:at].strip("\n"))
        pieces.append((index, action))
        start = at
    if text[start:].strip() or not pieces:
        pieces.append(text[start:].strip("\n") if pieces else text)
    return pieces


# -- reading the call ----------------------------------------------------------------
def _op_and_args(tool: str, arguments: Mapping[str, Any]) -> tuple[str, dict[str, Any]]:
    if tool == "execute":
        op = _one_line(str(arguments.get("op") or "execute")).replace("__", ".")
        args = arguments.get("args")
        return op, dict(args) if isinstance(args, dict) else {}
    if tool in _VERBS:
        return tool, dict(arguments)
    args = {k: v for k, v in arguments.items() if k not in _RESERVED_ARGS}
    return _one_line(tool).replace("__", "."), args


def _batch_items(call_id: str, calls: Any, at: int) -> list[ToolAction] | None:
    """A batch's calls, each begun as its own action (None unless every call reads)."""
    if not isinstance(calls, list) or not all(isinstance(c, dict) for c in calls):
        return None
    return [begin_action(f"{call_id}.{n}", str(c.get("verb")), c, at) for n, c in enumerate(calls)]


def _title(op: str, args: Mapping[str, Any]) -> str:
    if op == "batch":
        calls = args.get("calls")
        if isinstance(calls, list):
            names = [str(c.get("op") or c.get("verb") or "?") for c in calls if isinstance(c, dict)]
            return _clip(f"{len(calls)} calls: " + ", ".join(names), MAX_TITLE)
    if op == "describe":
        return _clip(str(args.get("op") or args.get("path") or "every domain"), MAX_TITLE)
    for key in _KEY_ARGS:
        value = args.get(key)
        if isinstance(value, str) and value.strip():
            text = _one_line(value)
            if key == "path" and isinstance(args.get("start_line"), int):
                end = args.get("end_line")
                text += f":{args['start_line']}" + (f"-{end}" if isinstance(end, int) else "")
            if key == "command" and isinstance(args.get("paths"), list):
                text = " ".join([text, *map(str, args["paths"])])
            return _clip(text, MAX_TITLE)
    shown = [f"{k}={_one_line(json.dumps(v, default=str))}" for k, v in list(args.items())[:2]]
    return _clip(" ".join(shown), MAX_TITLE)


# -- reading the result --------------------------------------------------------------
def _result_fields(result: Mapping[str, Any]) -> dict[str, Any]:
    fields: dict[str, Any] = {}
    diff = result.get("diff")
    if isinstance(diff, str) and diff:
        fields["diff"] = _head(diff)
    code = result.get("exit_code")
    if isinstance(code, int) and not isinstance(code, bool):
        fields["exit_code"] = code
        fields["output"] = _output_tail(result.get("stdout"), result.get("stderr"))
    duration = result.get("duration_ms")
    if isinstance(duration, int | float) and not isinstance(duration, bool):
        fields["duration_ms"] = float(duration)
    return fields


def _changed_files(op: str, result: Mapping[str, Any]) -> list[str]:
    """The paths an edit or write changed; in a batch, those its items changed (not
    dry runs, not failures): the pipeline's checks look at every file a turn changed."""
    if op in EDIT_OPS:
        path = result.get("path")
        return [path] if isinstance(path, str) and path and not result.get("dry_run") else []
    items = result.get("results") if op == "batch" else None
    found: list[str] = []
    for item in items if isinstance(items, list) else ():
        inner = item.get("result") if isinstance(item, dict) and item.get("ok") else None
        if isinstance(inner, dict):
            found += [p for p in _changed_files(str(item.get("op")), inner) if p not in found]
    return found


def _refused_inside(items: list[ToolAction], results: list[Any]) -> list[ToolAction]:
    """A batch's edits the approval gate refused, each finished with its own envelope."""
    pairs = zip(items, results, strict=True) if len(items) == len(results) else ()
    edits = [(i, r) for i, r in pairs if i.op in EDIT_OPS and isinstance(r, dict)]
    return [a for i, r in edits if (a := finish_action(i, json.dumps(r), True)).status == "denied"]


def _summary(op: str, result: Any) -> str | None:
    if isinstance(result, str):
        return _line(result) or None
    if not isinstance(result, dict):
        return None if result is None else _line(json.dumps(result, default=str))
    if result.get("dry_run") is True:
        would = result.get("would_run") or result.get("would") or "change nothing"
        return _line(f"would {would}" if result.get("would") else f"would run {would}")
    if "exit_code" in result:
        return None  # a command: its exit code and output say it
    if op == "batch" and isinstance(result.get("summary"), dict):
        counts = result["summary"]
        return f"{counts.get('ok', 0)} ok, {counts.get('failed', 0)} failed"
    if isinstance(result.get("content"), str):
        lines = result["content"].count("\n") + (not result["content"].endswith("\n"))
        return f"{lines} lines" if result["content"] else "empty"
    if isinstance(result.get("replacements"), int):
        return f"{result['replacements']} replacement(s)"
    if isinstance(result.get("bytes"), int):
        verb = "created" if result.get("created") else "wrote"
        return f"{verb} {result['bytes']} bytes"
    for key in _LIST_KEYS:
        items = result.get(key)
        if isinstance(items, list):
            names = [str(i.get("op") or i.get("path") or "") for i in items if isinstance(i, dict)]
            listed = ", ".join(n for n in names[:3] if n)
            return _line(f"{len(items)} {key}" + (f": {listed}" if listed else ""))
    return _line(json.dumps(result, default=str, ensure_ascii=False))


def _approval(meta: Any) -> str | None:
    """The approval gate's note (``meta.approval``: decision, by, reason, mode, rule,
    user_reason) in words: "allowed by you", "denied by rule `rm -rf *`"."""
    if not isinstance(meta, dict) or not isinstance(meta.get("approval"), dict):
        return None
    note = meta["approval"]
    decision = str(note.get("decision") or "decided")
    by, reason = note.get("by"), str(note.get("reason") or "")
    if by == "user":
        text = f"{decision} by you"
    elif by == "mode" and note.get("mode"):
        text = f"{decision} by mode {note['mode']}"
    elif by in ("rule", "session"):
        text = f"{decision} by {'a session rule' if by == 'session' else 'rule'}"
    elif by == "yes":
        text = f"{decision} by --yes"
    elif by == "policy":
        text = f"{decision}: {reason.replace('_', ' ')}" if reason else decision
    else:
        text = f"{decision} by {by}" if by else decision
    if note.get("rule"):
        text += f" `{note['rule']}`"
    said = note.get("user_reason")
    return _line(f"{text}: {said}" if said else text)


def _was_refused(meta: Any) -> bool:
    approval = meta.get("approval") if isinstance(meta, dict) else None
    return isinstance(approval, dict) and str(approval.get("decision", "")).startswith("denied")


# -- bounding text ---------------------------------------------------------------------
def terminal_text(text: str) -> str:
    """``text`` safe to draw on a terminal, as a terminal would have shown it.

    Whatever a tool or a model returns is untrusted: escape sequences are dropped
    (a test's colours, but also a title change or an OSC 52 write to the user's
    clipboard), a line rewritten with carriage returns keeps its last version (a
    progress bar), and any other control character shows as U+FFFD.
    """
    text = _ESCAPES.sub("", text)
    if "\r" in text:
        text = "\n".join(line.rstrip("\r").rsplit("\r", 1)[-1] for line in text.split("\n"))
    return _CONTROLS.sub("\ufffd", text)


def _output_tail(stdout: Any, stderr: Any) -> str | None:
    texts = (
        terminal_text(p[-MAX_OUTPUT_CHARS * 2 :]) for p in (stdout, stderr) if isinstance(p, str)
    )
    parts = [p for p in texts if p.strip()]
    if not parts:
        return None
    return _tail("\n".join(p.rstrip("\n") for p in parts))


def _tail(text: str) -> str:
    """The last lines of ``text``; a final newline is kept, so streamed chunks join up."""
    text = terminal_text(text[-MAX_OUTPUT_CHARS * 2 :])[-MAX_OUTPUT_CHARS:]
    ended = text.endswith("\n")
    lines = text.split("\n")[:-1] if ended else text.split("\n")
    kept = "\n".join(lines[-OUTPUT_TAIL_LINES:])
    return kept + "\n" if ended else kept


def _head(diff: str) -> str:
    diff = terminal_text(diff)
    lines = diff[:MAX_DIFF_CHARS].split("\n")
    if len(lines) > MAX_DIFF_LINES or len(diff) > MAX_DIFF_CHARS:
        more = diff.count("\n") + 1 - min(len(lines), MAX_DIFF_LINES)
        return "\n".join(lines[:MAX_DIFF_LINES]) + f"\n… ({more} more diff lines)"
    return diff


def _one_line(text: str) -> str:
    return " ".join(terminal_text(text).split())


def _line(text: str) -> str:
    return _clip(_one_line(text), MAX_SUMMARY)


def _clip(text: str, limit: int) -> str:
    return text if len(text) <= limit else text[: limit - 1] + "…"
