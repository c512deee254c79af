"""`sylk repl` at a real terminal (a pseudo-terminal): prompt-toolkit's completion,
history read back, ctrl+c stopping an answer but not the repl, ctrl+d leaving."""

from __future__ import annotations

from pathlib import Path

from tests.integration.repl.repl_process import Terminal, piped
from tests.stubs.llm_script import Reply
from tests.stubs.llm_stub import LLMStub

TOOLBAR = "Tab completes"
UP, CTRL_C, CTRL_D = "\x1b[A", "\x03", "\x04"


def _open(terminals: list[Terminal], data_dir: Path, workspace: Path, **env: str) -> Terminal:
    terminal = Terminal(data_dir, workspace, **env)
    terminals.append(terminal)
    terminal.expect(TOOLBAR)  # the prompt is drawn
    return terminal


def test_tab_completes_a_command_and_ctrl_d_leaves(
    data_dir: Path, workspace: Path, terminals: list[Terminal]
) -> None:
    terminal = _open(terminals, data_dir, workspace, SYLK_PROVIDER="offline")
    at = terminal.mark()
    terminal.send("/sta")
    terminal.expect("/status", after=at)  # offered as it is typed
    terminal.expect("routing, sessions, models and agent health", after=at)  # with its summary
    at = terminal.mark()
    terminal.send("\t\r")  # Tab takes the offer, Enter sends it
    terminal.expect("Models per role", after=at)  # /status ran
    ended = terminal.expect("Dead letters in this session", after=at)  # to its end
    terminal.expect(TOOLBAR, after=ended)  # the prompt is back
    terminal.send(CTRL_D)
    assert terminal.wait() == 0


def test_history_from_an_earlier_run_comes_back_with_up(
    data_dir: Path, workspace: Path, terminals: list[Terminal]
) -> None:
    earlier = piped("/remember note said before\n", data_dir, workspace, SYLK_PROVIDER="offline")
    assert earlier.returncode == 0, earlier.stderr
    terminal = _open(terminals, data_dir, workspace, SYLK_PROVIDER="offline")
    at = terminal.mark()
    terminal.send(UP)
    terminal.expect("/remember note said before", after=at)
    terminal.send("\x15/quit\r")  # ctrl+u clears the recalled line first
    assert terminal.wait() == 0


def test_ctrl_c_stops_the_answer_not_the_repl(
    llm_stub: LLMStub, data_dir: Path, workspace: Path, terminals: list[Terminal]
) -> None:
    pieces = ["Counting: ", *(f"{n} " for n in range(1, 200))]
    llm_stub.push(Reply(text=pieces, delay_s=0.1))
    env = {"ANTHROPIC_API_KEY": "sk-ant-repl-test", "ANTHROPIC_BASE_URL": llm_stub.base_url}
    terminal = _open(terminals, data_dir, workspace, **env)
    at = terminal.mark()
    terminal.send("@architect count to two hundred\r")
    terminal.expect("Counting: 1 ", after=at)
    at = terminal.mark()
    terminal.send(CTRL_C)
    stopped = terminal.expect("(stopped)", after=at)
    terminal.expect(TOOLBAR, after=stopped)  # the prompt is back
    terminal.send(CTRL_C)  # at the prompt: drops the line, the repl stays
    terminal.send("/quit\r")
    assert terminal.wait() == 0
    assert "199" not in terminal.text


def test_an_approval_is_answered_at_the_terminal(
    data_dir: Path, workspace: Path, terminals: list[Terminal], edit_script: dict[str, str]
) -> None:
    terminal = _open(terminals, data_dir, workspace, **edit_script)
    at = terminal.mark()
    terminal.send("@engineer change milk to bread in notes.txt\r")
    asked = terminal.expect("[o/s/d/r]", after=at)
    terminal.send("s\r")  # for the session: this file's edits go ahead from now on
    done = terminal.expect("Changed it.", after=asked)
    terminal.expect(TOOLBAR, after=done)
    assert (workspace / "notes.txt").read_text() == "buy bread\n"
    terminal.send(CTRL_D)
    assert terminal.wait() == 0
