"""A tool call folded into one bounded record: what was asked and what came of it."""

from __future__ import annotations

import json
from typing import Any

from backend.agents.tool_actions import (
    MAX_DIFF_LINES,
    MAX_TITLE,
    OUTPUT_TAIL_LINES,
    actions_from_payload,
    add_output,
    begin_action,
    finish_action,
    stopped,
)

DIFF = "--- a/app.py\n+++ b/app.py\n@@ -1 +1 @@\n-x = 1\n+x = 2\n"


def _ok(result: Any, **meta: Any) -> str:
    return json.dumps({"op": "x", "ok": True, "result": result, "meta": {"trace_id": "t", **meta}})


def _failed(code: str, message: str, **extra: Any) -> str:
    error = {"code": code, "message": message, **extra}
    return json.dumps({"op": "x", "ok": False, "error": error, "meta": {"trace_id": "t"}})


def test_a_direct_edit_names_its_path_and_keeps_the_diff() -> None:
    action = begin_action(
        "c1", "engineer__file__edit", {"path": "app.py", "old_content": "1", "new_content": "2",
                                       "dry_run": False},
    )  # fmt: skip
    assert (action.op, action.title, action.kind, action.status) == (
        "engineer.file.edit", "app.py", "edit", "running",
    )  # fmt: skip
    done = finish_action(action, _ok({"path": "app.py", "replacements": 1, "diff": DIFF}), False)
    assert done.status == "ok" and done.diff == DIFF and done.marker == "ok"
    assert done.summary == "1 replacement(s)"


def test_a_command_through_execute_keeps_exit_code_and_the_tail_of_its_output() -> None:
    call = {"op": "engineer.shell.run", "args": {"command": "make test"}, "dry_run": False}
    action = begin_action("c2", "execute", call)
    assert (action.op, action.title, action.kind) == ("engineer.shell.run", "make test", "command")
    stdout = "".join(f"line {n}\n" for n in range(100))
    result = {"command": "make test", "exit_code": 2, "stdout": stdout, "stderr": "boom\n",
              "duration_ms": 12.5}  # fmt: skip
    done = finish_action(action, _ok(result, warnings=["exit code 2"]), False)
    assert done.exit_code == 2 and done.marker == "exit 2" and done.failed
    assert done.output is not None
    lines = done.output.split("\n")
    assert len(lines) == OUTPUT_TAIL_LINES and lines[-1] == "boom" and lines[-2] == "line 99"
    assert done.duration_ms == 12.5


def test_search_describe_and_batch_titles() -> None:
    assert begin_action("a", "search", {"query": "read a file"}).title == "read a file"
    assert begin_action("b", "describe", {"op": "engineer.file.edit"}).title == (
        "engineer.file.edit"
    )
    batch = begin_action("c", "batch", {"calls": [{"verb": "search", "query": "x"},
                                                  {"verb": "execute", "op": "a.b.c"}]})  # fmt: skip
    assert batch.title == "2 calls: search, a.b.c"
    lines = {"path": "a.py", "start_line": 3, "end_line": 9}
    read = begin_action("d", "execute", {"op": "engineer__file__read", "args": lines})
    assert (read.op, read.title, read.kind) == ("engineer.file.read", "a.py:3-9", "other")
    done = finish_action(read, _ok({"path": "a.py", "content": "a\nb\nc\n"}), False)
    assert done.summary == "3 lines"


def test_errors_denials_and_dry_runs_have_their_own_status() -> None:
    action = begin_action("e", "execute", {"op": "engineer.file.read", "args": {"path": "../x"}})
    failed = finish_action(action, _failed("ACCESS_DENIED", "outside the workspace"), True)
    assert failed.status == "error" and failed.marker == "access denied"
    assert failed.summary == "outside the workspace"

    refusal = json.loads(_failed("ACCESS_DENIED", "denied: not now"))
    refusal["meta"]["approval"] = {
        "decision": "denied", "by": "user", "reason": "denied_by_user", "user_reason": "not now",
    }  # fmt: skip
    denied = finish_action(action, json.dumps(refusal), True)
    assert denied.status == "denied" and denied.approval == "denied by you: not now"
    refusal["meta"]["approval"] = {"decision": "denied", "by": "policy",
                                   "reason": "approval_required", "mode": "ask"}  # fmt: skip
    nobody = finish_action(action, json.dumps(refusal), True)
    assert nobody.status == "denied" and nobody.approval == "denied: approval required"

    shell = begin_action("f", "engineer__shell__run", {"command": "rm -rf build"})
    preview = finish_action(shell, _ok({"dry_run": True, "would_run": "rm -rf build"}), False)
    assert preview.status == "preview" and preview.marker == "dry run"
    assert preview.summary == "would run rm -rf build"

    allowed = finish_action(
        shell, _ok({"exit_code": 0, "stdout": "", "stderr": ""},
                   approval={"decision": "allowed", "by": "rule", "reason": "allow_rule",
                             "rule": "rm *"}), False,
    )  # fmt: skip
    assert allowed.approval == "allowed by rule `rm *`" and allowed.marker == "exit 0"
    by_mode = {"decision": "allowed", "by": "mode", "reason": "mode", "mode": "auto"}
    edit = finish_action(shell, _ok({}, approval=by_mode), False)
    assert edit.approval == "allowed by mode auto"


def test_a_timed_out_command_keeps_what_it_printed() -> None:
    action = begin_action("g", "engineer__shell__run", {"command": "sleep 9"})
    content = _failed(
        "INTERNAL", "command timed out after 1s and was killed",
        details={"reason": "timeout", "stdout": "started\n", "stderr": ""},
    )  # fmt: skip
    done = finish_action(action, content, True)
    assert done.status == "error" and done.output == "started" and done.kind == "command"


def test_what_is_not_an_envelope_is_summarised_not_parsed() -> None:
    action = begin_action("h", "nonexistent", {})
    done = finish_action(action, "no tools are available to guide", True)
    assert done.status == "error" and done.summary == "no tools are available to guide"


def test_streamed_output_joins_chunks_and_keeps_the_tail() -> None:
    action = begin_action("i", "engineer__shell__run", {"command": "seq 100"})
    for n in range(100):
        action = add_output(action, f"{n}")
        action = add_output(action, "\n")
    assert action.output is not None
    assert action.output.split("\n")[:-1] == [str(n) for n in range(80, 100)]
    assert stopped(action).status == "stopped"


def test_huge_diffs_and_titles_are_bounded() -> None:
    action = begin_action("j", "engineer__file__write", {"path": "x" * 500})
    assert len(action.title) == MAX_TITLE
    diff = "".join(f"+line {n}\n" for n in range(5000))
    done = finish_action(action, _ok({"path": "x", "diff": diff}), False)
    assert done.diff is not None
    assert done.diff.count("\n") == MAX_DIFF_LINES and "more diff lines" in done.diff


def test_stored_actions_read_back_and_bad_entries_are_skipped() -> None:
    action = finish_action(begin_action("k", "search", {"query": "q"}), _ok({"hits": []}), False)
    payload = {"actions": [action.stored(), {"nonsense": True}, "x"]}
    assert actions_from_payload(payload) == [action]
    assert actions_from_payload({"actions": "no"}) == []


def test_nothing_a_tool_returns_can_drive_the_terminal() -> None:
    """Escape sequences from a tool or a model (colours, a title, an OSC 52 clipboard
    write) are dropped, a progress bar keeps its last state, other controls show as U+FFFD."""
    clipboard = "\x1b]52;c;cm0gLXJmIH4=\x07"
    call = {"op": f"engineer.shell.run{clipboard}", "args": {"command": f"make{clipboard} test"}}
    action = begin_action("x", "execute", call)
    assert action.op == "engineer.shell.run" and action.title == "make test"
    stdout = "\x1b[31mFAILED\x1b[0m t.py\n10%\r55%\r100%\n\x1b]0;pwned\x1b\\bell\x07\x9b2J\n"
    result = {"exit_code": 1, "stdout": stdout, "stderr": clipboard}
    done = finish_action(action, _ok(result), False)
    assert done.output == "FAILED t.py\n100%\nbell\ufffd"
    streamed = add_output(begin_action("y", "engineer__shell__run", {"command": "x"}), stdout)
    assert streamed.output == "FAILED t.py\n100%\nbell\ufffd\n"
    edit = finish_action(action, _ok({"diff": f"+{clipboard}x\n"}), False)
    assert edit.diff == "+x\n"
    for shown in (done, streamed, edit):
        fields = [v for v in shown.stored().values() if isinstance(v, str)]
        assert not any(c in "".join(fields) for c in "\x1b\x07\x9b\r"), fields
