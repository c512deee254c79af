"""``sylk run`` when the archive cannot be written, and when a key reaches the terminal.

A full disk is a real one: a small tmpfs (mounted here as root, skipped where mounting
is not allowed) filled up after the session exists, so the request is stored but the
model's long answer is not. The answer is printed anyway, a warning says it was not
saved (naming the file and what to do), and the archive is intact. A read-only
file system (the same tmpfs remounted read-only) is a clear error with status 4.

A key configured in a temporary config never reaches the terminal: not when the model
streams it split between two pieces, not in a provider's error message.
"""

from __future__ import annotations

import json
import os
import sqlite3
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path

import pytest

from tests.stubs.llm_script import Reply, Status
from tests.stubs.llm_stub import LLMStub

KEY = "sk-ant-api03-terminal-key-0123456789abcdef"
EXIT_NOT_SAVED = 4


def sylk(
    *args: str, data_dir: Path, workspace: Path, config_dir: Path
) -> subprocess.CompletedProcess[str]:
    base = {k: v for k, v in os.environ.items() if not k.startswith(("ANTHROPIC_", "OPENAI_"))}
    return subprocess.run(
        [sys.executable, "-m", "sylk_tui", *args, "--data-dir", str(data_dir),
         "--workspace", str(workspace)],
        capture_output=True, text=True, timeout=120, check=False,
        env={**base, "SYLK_CONFIG_DIR": str(config_dir)},
    )  # fmt: skip


def configure(config_dir: Path, base_url: str) -> Path:
    config_dir.mkdir(parents=True, exist_ok=True)
    (config_dir / "config.toml").write_text(
        f'[providers.anthropic]\nkind = "anthropic"\napi_key = "{KEY}"\nbase_url = "{base_url}"\n'
    )
    return config_dir


@pytest.fixture
def small_disk(tmp_path: Path) -> Iterator[Path]:
    """A 16 MiB tmpfs, unmounted afterwards; skipped where it cannot be mounted."""
    mount_point = tmp_path / "disk"
    mount_point.mkdir()
    done = subprocess.run(
        ["mount", "-t", "tmpfs", "-o", "size=16m,mode=0700", "tmpfs", str(mount_point)],
        capture_output=True, text=True, check=False,
    )  # fmt: skip
    if done.returncode != 0:
        pytest.skip(f"cannot mount a tmpfs here: {done.stderr.strip()}")
    try:
        yield mount_point
    finally:
        subprocess.run(["umount", "-l", str(mount_point)], check=False)


def fill(disk: Path, leave: int) -> Path:
    """Fill ``disk`` until only about ``leave`` bytes are free."""
    stats = os.statvfs(disk)
    free = stats.f_bavail * stats.f_frsize
    filler = disk / "filler"
    with filler.open("wb") as out:
        out.write(b"\0" * max(0, free - leave))
    return filler


def test_a_full_disk_prints_the_answer_says_it_was_not_saved_and_loses_nothing(
    llm_stub: LLMStub, small_disk: Path, tmp_path: Path
) -> None:
    data_dir, workspace = small_disk / "data", tmp_path / "workspace"
    workspace.mkdir()
    config_dir = configure(tmp_path / "config", llm_stub.base_url)
    made = sylk("sessions", "new", "errands", data_dir=data_dir, workspace=workspace,
                config_dir=config_dir)  # fmt: skip
    assert made.returncode == 0, made.stderr
    lines = [f"step {n}: keep the ledger balanced\n" for n in range(60_000)]  # ~2 MiB
    llm_stub.push(Reply(text=[lines[0], "".join(lines[1:])]))
    filler = fill(small_disk, leave=512 * 1024)  # room for the request, not the answer

    ran = sylk("run", "--session", "errands", "@architect how do I keep the ledger?",
               data_dir=data_dir, workspace=workspace, config_dir=config_dir)  # fmt: skip
    # The agent's turn cannot record its steps; it finishes all the same, storing its
    # answer fails too: the answer is on screen in full and said NOT saved (exit 4).
    assert ran.returncode == EXIT_NOT_SAVED, ran.stderr[-2000:]
    assert ran.stdout.rstrip("\n") == "".join(lines).rstrip("\n")
    assert "the answer above was NOT saved" in ran.stderr
    assert f"cannot write the archive {data_dir / 'sylk.db'}: the disk is full" in ran.stderr
    assert "free space on the disk" in ran.stderr
    assert "Traceback" not in ran.stderr and "Logging error" not in ran.stderr

    filler.unlink()  # room again: what was stored is intact, and Sylk works on
    with sqlite3.connect(data_dir / "sylk.db") as db:
        assert db.execute("PRAGMA integrity_check").fetchone() == ("ok",)
    listed = sylk("sessions", "list", "--json", data_dir=data_dir, workspace=workspace,
                  config_dir=config_dir)  # fmt: skip
    assert listed.returncode == 0, listed.stderr
    rows = [(row["name"], row["messages"]) for row in json.loads(listed.stdout)]
    assert rows == [("errands", 1)]  # the request; nothing half-written
    llm_stub.push(Reply(text=["Balanced."]))
    again = sylk("run", "--session", "errands", "@architect and now?", data_dir=data_dir,
                 workspace=workspace, config_dir=config_dir)  # fmt: skip
    assert again.returncode == 0 and again.stdout.strip() == "Balanced.", again.stderr


def test_a_read_only_data_dir_is_a_clear_error(small_disk: Path, tmp_path: Path) -> None:
    data_dir, workspace = small_disk / "data", tmp_path / "workspace"
    workspace.mkdir()
    config_dir = tmp_path / "config"
    made = sylk("sessions", "new", "errands", data_dir=data_dir, workspace=workspace,
                config_dir=config_dir)  # fmt: skip
    assert made.returncode == 0, made.stderr
    remount = ["mount", "-o", "remount,ro", str(small_disk)]
    subprocess.run(remount, check=True)
    ran = sylk("run", "--session", "errands", "/help", data_dir=data_dir, workspace=workspace,
               config_dir=config_dir)  # fmt: skip
    assert ran.returncode == EXIT_NOT_SAVED, ran.stderr
    assert f"cannot write the archive {data_dir / 'sylk.db'}" in ran.stderr
    assert "read-only" in ran.stderr and "SYLK_DATA_DIR" in ran.stderr
    assert "Traceback" not in ran.stderr and ran.stdout == ""


def test_run_help_documents_the_exit_codes(tmp_path: Path) -> None:
    shown = sylk("run", "--help", data_dir=tmp_path, workspace=tmp_path, config_dir=tmp_path)
    assert shown.returncode == 0
    assert (
        "exit status:" in shown.stdout and "4    the archive could not be written" in shown.stdout
    )


def test_a_key_never_reaches_the_terminal(llm_stub: LLMStub, tmp_path: Path) -> None:
    data_dir, workspace = tmp_path / "data", tmp_path / "workspace"
    workspace.mkdir()
    config_dir = configure(tmp_path / "config", llm_stub.base_url)
    half = len(KEY) // 2
    llm_stub.push(Reply(text=["Your key is ", KEY[:half], KEY[half:], ", keep it safe."]))
    streamed = sylk("run", "@architect what is my key?", data_dir=data_dir,
                    workspace=workspace, config_dir=config_dir)  # fmt: skip
    assert streamed.returncode == 0, streamed.stderr
    assert streamed.stdout.strip() == "Your key is [redacted], keep it safe."
    assert KEY not in streamed.stderr

    llm_stub.push(Status(401, message=f"invalid x-api-key: {KEY}"))
    failed = sylk("run", "@architect again", data_dir=data_dir, workspace=workspace,
                  config_dir=config_dir)  # fmt: skip
    assert failed.returncode == 1
    assert KEY not in failed.stdout + failed.stderr
    assert "invalid x-api-key: [redacted]" in failed.stderr

    remembered = sylk("run", f"/remember decision: rotate {KEY} monthly", data_dir=data_dir,
                      workspace=workspace, config_dir=config_dir)  # fmt: skip
    assert remembered.returncode == 0, remembered.stderr
    assert KEY not in remembered.stdout + remembered.stderr and "rotate" in remembered.stdout
