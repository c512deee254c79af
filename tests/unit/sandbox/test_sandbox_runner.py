"""The runner around the launcher: live output, the output cap, stdin, the environment, levels."""

from __future__ import annotations

import asyncio
import sys
import tempfile
from pathlib import Path

import pytest

from backend.sandbox import (
    MAX_OUTPUT,
    SandboxSupport,
    SandboxUnavailableError,
    command_env,
    run_sandboxed,
    sandbox_support,
)
from backend.sandbox import runner as runner_module
from backend.sandbox.support import probe_support
from backend.skills.envelopes import ErrorCode, code_for
from tests.support.polling import until


async def run(tmp_path: Path, *argv: str, **kw: object) -> runner_module.SandboxRun:
    return await run_sandboxed(list(argv), cwd=tmp_path, workspace=tmp_path, timeout_s=60, **kw)  # type: ignore[arg-type]


async def test_output_is_handed_on_live_per_stream_and_kept_whole(tmp_path: Path) -> None:
    seen: list[tuple[str, str]] = []
    script = "for i in $(seq 1 50); do echo out$i; echo err$i >&2; done; printf 'é'"
    result = await run(tmp_path, "sh", "-c", script, on_output=lambda s, t: seen.append((s, t)))
    for stream, text in (("stdout", result.stdout), ("stderr", result.stderr)):
        assert "".join(t for s, t in seen if s == stream) == text
    assert result.stdout.endswith("out50\né") and result.stderr.endswith("err50\n")


async def test_each_stream_keeps_its_last_64_kib(tmp_path: Path) -> None:
    script = "import sys; sys.stdout.write('a' * 200000 + 'END'); sys.stderr.write('e' * 10)"
    result = await run(tmp_path, sys.executable, "-c", script)
    assert len(result.stdout.encode()) == MAX_OUTPUT and result.stdout.endswith("aEND")
    assert result.stderr == "e" * 10


async def test_a_broken_output_sink_does_not_stop_the_command(tmp_path: Path) -> None:
    def broken(stream: str, text: str) -> None:
        raise RuntimeError("display bug")

    result = await run(tmp_path, "sh", "-c", "echo one; echo two > made", on_output=broken)
    assert result.exit_code == 0 and (tmp_path / "made").read_text() == "two\n"


async def test_stdin_is_closed_and_the_exit_code_comes_back(tmp_path: Path) -> None:
    result = await run(tmp_path, "sh", "-c", "cat; exit 7")
    assert result.exit_code == 7 and result.stdout == ""
    killed = await run(tmp_path, "sh", "-c", "kill -9 $$")
    assert killed.exit_code == 128 + 9


def test_the_environment_is_allow_listed(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    monkeypatch.setenv("OPENAI_API_KEY", "sk-x")
    monkeypatch.setenv("LC_ALL", "C.UTF-8")
    monkeypatch.setenv("HOME", "/home/someone")
    env = command_env(tmp_path)
    assert "OPENAI_API_KEY" not in env and env["LC_ALL"] == "C.UTF-8"
    assert env["HOME"] == env["TMPDIR"] == str(tmp_path) and "PATH" in env
    assert command_env()["HOME"] == "/home/someone"


def test_a_level_the_machine_lacks_is_refused(monkeypatch: pytest.MonkeyPatch) -> None:
    lesser = SandboxSupport("landlock", "Landlock only", landlock_abi=7)
    monkeypatch.setattr(runner_module, "sandbox_support", lambda: lesser)
    with pytest.raises(SandboxUnavailableError) as refused:
        runner_module.choose_level("full")
    assert code_for(refused.value) is ErrorCode.CONFLICT
    assert runner_module.choose_level(None) == "landlock"
    assert runner_module.choose_level("none") == "none"


def test_support_says_what_it_confines() -> None:
    assert sandbox_support() is sandbox_support()  # probed once
    unconfined = probe_support("none")
    assert unconfined.level == "none" and not unconfined.confined
    assert "UNCONFINED" in unconfined.detail and "approval" in unconfined.detail
    best = probe_support()
    assert best.confined == (best.level != "none")
    if best.level != "none":
        assert best.landlock_abi >= 1 and f"ABI {best.landlock_abi}" in best.detail
        assert probe_support("landlock").level == "landlock"


async def test_a_call_cancelled_while_it_is_set_up_leaves_no_temp_dir(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    temp = tmp_path / "temp"
    temp.mkdir()
    monkeypatch.setattr(tempfile, "tempdir", str(temp))  # this test's calls only
    for _ in range(5):  # cancelled at once: while the thread makes the call's dir
        task = asyncio.create_task(run(tmp_path, "true"))
        await asyncio.sleep(0)
        task.cancel()
        with pytest.raises(asyncio.CancelledError):
            await task
    await until(lambda: not any(temp.iterdir()), what="the cancelled calls' dirs to go")
