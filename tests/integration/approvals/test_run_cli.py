"""`sylk run --approval MODE` and `--yes`, end to end: a real process, the model a local
stub that asks to run a command with dry_run=false (defect 5 of issue 12)."""

from __future__ import annotations

from pathlib import Path

from tests.integration.cli.test_run_cli import KEY, run
from tests.stubs.llm_script import Reply, StubToolCall
from tests.stubs.llm_stub import LLMStub

TOUCH = StubToolCall(
    "execute", {"op": "engineer.shell.run", "args": {"command": "touch made"}, "dry_run": False}
)
WRITE = StubToolCall(
    "execute", {"op": "engineer.file.write", "args": {"path": "new.txt", "content": "hi\n"}}
)


def _env(stub: LLMStub) -> dict[str, str]:
    return {"ANTHROPIC_API_KEY": KEY, "ANTHROPIC_BASE_URL": stub.base_url}


def _tool_result(stub: LLMStub, request: int) -> str:
    """What the model was told about its tool call, in the request after it."""
    messages = stub.requests[request].body["messages"]
    blocks = [b for m in messages if isinstance(m["content"], list) for b in m["content"]]
    results = [b for b in blocks if b.get("type") == "tool_result"]
    content = results[-1]["content"]
    return content if isinstance(content, str) else " ".join(c["text"] for c in content)


def test_without_yes_the_models_dry_run_false_is_refused_and_says_how(
    llm_stub: LLMStub, data_dir: Path, workspace: Path
) -> None:
    llm_stub.push(Reply(text=["Running."], tool_calls=[TOUCH]), Reply(text=["It was refused."]))
    result = run(["@engineer make the file"], _env(llm_stub), data_dir, workspace)
    assert result.returncode == 0, result.stderr
    assert not (workspace / "made").exists()
    told = _tool_result(llm_stub, 1)
    assert "approval_required" in told and "--yes" in told
    assert "needs the user's approval" in result.stderr and "Traceback" not in result.stderr


def test_yes_approves_what_would_ask(llm_stub: LLMStub, data_dir: Path, workspace: Path) -> None:
    llm_stub.push(
        Reply(text=["Writing."], tool_calls=[WRITE]),
        Reply(text=["Running."], tool_calls=[TOUCH]),
        Reply(text=["Done."]),
    )
    result = run(["--yes", "@engineer make the files"], _env(llm_stub), data_dir, workspace)
    assert result.returncode == 0, result.stderr
    assert (workspace / "new.txt").read_text() == "hi\n"
    for request in (1, 2):  # the write, then the command: both approved by --yes
        told = _tool_result(llm_stub, request).replace(" ", "")
        assert '"approval":{"decision":"allowed","by":"yes"' in told


def test_approval_auto_edit_writes_but_a_command_still_needs_approval(
    llm_stub: LLMStub, data_dir: Path, workspace: Path
) -> None:
    llm_stub.push(
        Reply(text=["Writing."], tool_calls=[WRITE]),
        Reply(text=["Running."], tool_calls=[TOUCH]),
        Reply(text=["Done."]),
    )
    args = ["--approval", "auto-edit", "@engineer write it"]
    result = run(args, _env(llm_stub), data_dir, workspace)
    assert result.returncode == 0, result.stderr
    assert (workspace / "new.txt").read_text() == "hi\n"
    assert not (workspace / "made").exists()
    assert "approval_required" in _tool_result(llm_stub, 2)


def test_approval_read_only_refuses_with_the_mode_named(
    llm_stub: LLMStub, data_dir: Path, workspace: Path
) -> None:
    llm_stub.push(Reply(text=["Writing."], tool_calls=[WRITE]), Reply(text=["Refused."]))
    args = ["--approval", "read-only", "--yes", "@engineer write it"]
    result = run(args, _env(llm_stub), data_dir, workspace)
    # The refused write fails the engineer's task: the run does not claim success.
    assert result.returncode == 1, result.stderr
    assert "were not approved (approval mode read-only)" in result.stderr
    assert not (workspace / "new.txt").exists()
    assert "read-only" in _tool_result(llm_stub, 1) and "read-only" in result.stderr
    bad = run(["--approval", "yolo", "x"], {}, data_dir, workspace)
    assert bad.returncode == 2 and "invalid choice" in bad.stderr
