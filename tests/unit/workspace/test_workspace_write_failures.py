"""A full disk, a read-only filesystem or a refused permission is a typed answer that loses nothing.

These conditions are reproduced for real, not mocked: each write runs in a child
process inside a private mount namespace (``unshare``), on a tmpfs mounted there
(64 KiB for a full disk; remounted read-only; a directory made immutable, which
stops even root). The mount exists only in that namespace and ends with the
child, so nothing is left mounted whatever happens. Where namespaces are not
allowed (no ``unshare``, no user namespaces) these tests skip and say why; a
plain ``chmod`` cannot stand in, since root ignores it (as a non-root user the
permission test uses it instead).
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

from backend.workspace.file_errors import FilePermissionError
from backend.workspace.files import Workspace

ROOT = Path(__file__).resolve().parents[3]

# Runs in the namespace: sets the scratch filesystem up, tries the writes, reports.
CHILD = r"""
import fcntl, json, os, struct, subprocess, sys
from pathlib import Path
from backend.workspace.files import Workspace, WorkspaceError

mount, mode = Path(sys.argv[1]), sys.argv[2]
size = "64k" if mode == "disk_full" else "1m"
subprocess.run(["mount", "-t", "tmpfs", "-o", f"size={size}", "sylk-test", str(mount)], check=True)
ws = mount / "ws"
ws.mkdir()
(ws / "keep.txt").write_text("original\n")
if mode == "read_only":
    subprocess.run(["mount", "-o", "remount,ro", str(mount)], check=True)
elif mode == "immutable":
    fd = os.open(ws, os.O_RDONLY)
    flags = struct.unpack("i", fcntl.ioctl(fd, 0x80086601, struct.pack("i", 0)))[0]
    fcntl.ioctl(fd, 0x40086602, struct.pack("i", flags | 0x10))  # FS_IMMUTABLE_FL
results = []
with Workspace(ws) as workspace:
    for path in ("keep.txt", "new.txt", "new/dir/file.txt"):
        try:
            workspace.write_text(path, "changed\n" * 20000)  # 160 KiB: more than the disk
            results.append({"path": path, "ok": True})
        except WorkspaceError as exc:
            results.append({"path": path, "error": type(exc).__name__,
                            "kind": exc.error_kind.value, "reason": exc.failure_word(),
                            "message": str(exc)})
print(json.dumps({"results": results, "keep": (ws / "keep.txt").read_text(),
                  "names": sorted(os.listdir(ws))}))
"""


def in_scratch_fs(tmp_path: Path, mode: str) -> dict[str, Any]:
    if shutil.which("unshare") is None or shutil.which("mount") is None:
        pytest.skip("needs unshare and mount (util-linux) to make a scratch filesystem")
    if os.geteuid() == 0:
        namespace = ["unshare", "--mount", "--propagation", "private"]
    else:  # a user namespace lets a non-root user mount a tmpfs of its own
        namespace = ["unshare", "--user", "--map-root-user", "--mount"]
    mount = tmp_path / "mnt"
    mount.mkdir()
    done = subprocess.run(
        [*namespace, sys.executable, "-c", CHILD, str(mount), mode],
        capture_output=True, text=True, timeout=60, check=False,
        env={**os.environ, "PYTHONPATH": str(ROOT)},
    )  # fmt: skip
    if done.returncode != 0 and ("unshare" in done.stderr or "mount" in done.stderr):
        pytest.skip(f"no private mount namespace here: {done.stderr.strip()[-200:]}")
    assert done.returncode == 0, done.stderr
    assert "sylk-test" not in Path("/proc/mounts").read_text()  # gone with the namespace
    result: dict[str, Any] = json.loads(done.stdout)
    return result


def verdicts(result: dict[str, Any]) -> dict[str, tuple[str, str, str]]:
    return {
        r["path"]: (r.get("error", "ok"), r.get("kind", ""), r.get("reason", ""))
        for r in result["results"]
    }


def test_a_full_disk_is_a_typed_error_and_the_file_is_kept(tmp_path: Path) -> None:
    result = in_scratch_fs(tmp_path, "disk_full")
    expected = ("DiskFullError", "conflict", "disk_full")
    assert verdicts(result) == {p: expected for p in ("keep.txt", "new.txt", "new/dir/file.txt")}
    assert "the disk (or your quota) is full" in result["results"][0]["message"]
    assert result["keep"] == "original\n"  # the old content, not a truncated new one
    assert result["names"] == ["keep.txt", "new"]  # no temp file left behind


def test_a_read_only_filesystem_is_a_typed_error(tmp_path: Path) -> None:
    result = in_scratch_fs(tmp_path, "read_only")
    expected = ("ReadOnlyFilesystemError", "conflict", "read_only_filesystem")
    assert verdicts(result) == {p: expected for p in ("keep.txt", "new.txt", "new/dir/file.txt")}
    assert "mounted read-only" in result["results"][0]["message"]
    assert result["keep"] == "original\n" and result["names"] == ["keep.txt"]


def test_a_refused_permission_is_a_typed_error(tmp_path: Path) -> None:
    if os.geteuid() != 0:  # permissions stop a non-root user; root needs the immutable flag
        ws = tmp_path / "ws"
        ws.mkdir()
        (ws / "keep.txt").write_text("original\n")
        ws.chmod(0o555)
        try:
            with Workspace(ws) as workspace, pytest.raises(FilePermissionError):
                workspace.write_text("keep.txt", "changed\n")
        finally:
            ws.chmod(0o755)
        assert (ws / "keep.txt").read_text() == "original\n"
        return
    result = in_scratch_fs(tmp_path, "immutable")
    expected = ("FilePermissionError", "denied", "permission_denied")
    assert verdicts(result) == {p: expected for p in ("keep.txt", "new.txt", "new/dir/file.txt")}
    assert "permission denied" in result["results"][0]["message"]
    assert result["keep"] == "original\n" and result["names"] == ["keep.txt"]
