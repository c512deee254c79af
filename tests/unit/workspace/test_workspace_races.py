"""A name swapped for a symlink to outside while an op runs never leads the op outside.

A thread swaps a directory (or a file) of the workspace for a link to a
directory (or file) outside, in a tight loop, while the same op runs a bounded
number of times. Every run either stays inside or fails with a typed error;
nothing outside is read, listed, written or created. Hard links (a second name
of an outside file) are refused for reads and writes.
"""

from __future__ import annotations

import ctypes
import os
import subprocess
import sys
from collections.abc import Callable, Iterator
from pathlib import Path

import pytest

from backend.workspace.files import HardLinkError, Workspace, WorkspaceError

RUNS = 400


# The attacker: another process (real parallelism, no GIL between it and the op) that
# swaps two names atomically with renameat2(RENAME_EXCHANGE), so the swapped name is
# always there, either the real thing or the link, until its stdin closes.
SWAP = """
import ctypes, os, sys, threading
libc = ctypes.CDLL(None, use_errno=True)
a, b = (os.fsencode(p) for p in sys.argv[1:3])
done = threading.Event()
threading.Thread(target=lambda: (sys.stdin.read(), done.set()), daemon=True).start()
flips = 0
while not done.is_set():
    for _ in range(50):
        if libc.renameat2(-100, a, -100, b, 2) or libc.renameat2(-100, a, -100, b, 2):
            sys.exit(f"renameat2: {os.strerror(ctypes.get_errno())}")
    if not flips:
        print("ready", flush=True)  # swapping already, however late it got the CPU
    flips += 50
print(flips, flush=True)
"""


class Swapper:
    """Swaps ``target`` with a link to ``outside`` and back, in a loop, while entered."""

    def __init__(self, target: Path, outside: Path) -> None:
        if getattr(ctypes.CDLL(None), "renameat2", None) is None:
            pytest.skip("the C library has no renameat2")
        self.target, self.link = target, target.with_name(f"{target.name}.link")
        self.outside = outside
        self.flips = 0

    def __enter__(self) -> Swapper:
        self.link.symlink_to(self.outside)
        self.proc = subprocess.Popen(
            [sys.executable, "-c", SWAP, str(self.target), str(self.link)],
            stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True,
        )  # fmt: skip
        assert self.proc.stdout is not None and self.proc.stdout.readline() == "ready\n"
        return self

    def __exit__(self, *_: object) -> None:
        out = self.proc.communicate("", timeout=30)[0]
        assert self.proc.returncode == 0, out
        self.flips = int(out.strip())
        os.unlink(self.link)  # the two names are back as they were (flips go in pairs)


@pytest.fixture
def tree(tmp_path: Path) -> Iterator[tuple[Workspace, Path]]:
    root = tmp_path / "ws"
    (root / "d").mkdir(parents=True)
    (root / "d" / "f.txt").write_text("inside")
    (root / "f.txt").write_text("inside")
    outside = tmp_path / "outside"
    outside.mkdir()
    (outside / "f.txt").write_text("OUTSIDE")
    (outside / "only-outside.txt").write_text("OUTSIDE")
    with Workspace(root) as ws:
        yield ws, outside


def _race(op: Callable[[int], object], swapper: Swapper) -> tuple[list[object], int]:
    """Run ``op`` RUNS times while ``swapper`` flips: (what it returned, typed refusals)."""
    seen: list[object] = []
    refused = 0
    with swapper:
        for i in range(RUNS):
            try:
                seen.append(op(i))
            except WorkspaceError:
                refused += 1
    assert swapper.flips > 0, "the swap never ran: the test proves nothing"
    print(f"{RUNS} runs, {swapper.flips} swaps, {refused} refused, {len(seen)} inside")
    return seen, refused


def test_reads_through_a_swapped_directory_never_read_outside(
    tree: tuple[Workspace, Path],
) -> None:
    ws, outside = tree
    seen, _ = _race(lambda _: ws.read_text("d/f.txt"), Swapper(ws.root / "d", outside))
    assert set(seen) <= {"inside"}


def test_reads_of_a_swapped_file_never_read_outside(tree: tuple[Workspace, Path]) -> None:
    ws, outside = tree
    seen, _ = _race(lambda _: ws.read_text("f.txt"), Swapper(ws.root / "f.txt", outside / "f.txt"))
    assert set(seen) <= {"inside"}
    bounded, _ = _race(
        lambda _: ws.read_bytes("f.txt", 64), Swapper(ws.root / "f.txt", outside / "f.txt")
    )
    assert set(bounded) <= {b"inside"}


def test_listings_of_a_swapped_directory_never_list_outside(
    tree: tuple[Workspace, Path],
) -> None:
    ws, outside = tree
    seen, _ = _race(lambda _: ws.list_dir("d"), Swapper(ws.root / "d", outside))
    assert all(isinstance(names, list) and "only-outside.txt" not in names for names in seen)
    walked, _ = _race(lambda _: list(ws.walk_files(".")), Swapper(ws.root / "d", outside))
    assert all("d/only-outside.txt" not in names for names in walked)  # type: ignore[operator]


def test_writes_and_new_directories_through_a_swapped_directory_stay_inside(
    tree: tuple[Workspace, Path],
) -> None:
    ws, outside = tree
    before = sorted(p.name for p in outside.iterdir())
    _, refused = _race(
        lambda i: ws.write_text(f"d/new-{i}.txt", "x"), Swapper(ws.root / "d", outside)
    )
    _race(lambda i: ws.write_text(f"d/sub-{i}/deeper/f.txt", "x"), Swapper(ws.root / "d", outside))
    assert sorted(p.name for p in outside.iterdir()) == before  # no file, no directory made
    assert (outside / "f.txt").read_text() == "OUTSIDE"
    written = sorted(p.name for p in (ws.root / "d").iterdir() if p.name.startswith("new-"))
    assert len(written) == RUNS - refused
    assert not list((ws.root / "d").glob(".*sylk-tmp"))


def test_writes_of_a_swapped_file_never_write_outside(tree: tuple[Workspace, Path]) -> None:
    ws, outside = tree
    _race(lambda i: ws.write_text("f.txt", f"v{i}"), Swapper(ws.root / "f.txt", outside / "f.txt"))
    assert (outside / "f.txt").read_text() == "OUTSIDE"
    kept = (ws.root / "f.txt").read_text()  # the last write that won, or none did
    assert kept == "inside" or kept.startswith("v")


def test_a_hard_link_to_an_outside_file_is_neither_read_nor_written(tmp_path: Path) -> None:
    outside = tmp_path / "shadow"
    outside.write_text("root:x:0:0\n")
    root = tmp_path / "ws"
    root.mkdir()
    os.link(outside, root / "passwd")
    with Workspace(root) as ws:
        for read in (ws.read_text, ws.read_bytes):
            with pytest.raises(HardLinkError, match="other name may be outside") as caught:
                read("passwd")
            assert caught.value.failure_word() == "hard_link"
        with pytest.raises(HardLinkError):
            ws.write_text("passwd", "pwned\n")
        (root / "link").symlink_to("passwd")  # a link inside to it changes nothing
        with pytest.raises(HardLinkError):
            ws.read_text("link")
    assert outside.read_text() == "root:x:0:0\n"


def test_links_inside_are_followed_and_loops_or_escapes_are_typed(tmp_path: Path) -> None:
    root = tmp_path / "ws"
    (root / "pkg" / "sub").mkdir(parents=True)
    (root / "pkg" / "sub" / "m.py").write_text("x = 1\n")
    (root / "alias").symlink_to("pkg/sub")  # relative, inside
    (root / "pkg" / "up").symlink_to("..")  # climbs, stays inside
    (root / "abs").symlink_to(root / "pkg")  # absolute, inside
    (root / "out").symlink_to("pkg/../../")  # climbs out
    (root / "self").symlink_to("self")
    with Workspace(root) as ws:
        assert ws.read_text("alias/m.py") == "x = 1\n"
        assert ws.read_text("pkg/up/pkg/up/alias/m.py") == "x = 1\n"
        assert ws.read_text("abs/sub/m.py") == "x = 1\n"
        assert ws.resolve("alias/m.py") == root.resolve() / "pkg/sub/m.py"
        assert ws.resolve("alias/..") == root.resolve() / "pkg"  # physical, as the kernel
        with pytest.raises(WorkspaceError, match="outside"):
            ws.read_text("out/ws/pkg/sub/m.py")
        with pytest.raises(WorkspaceError, match="symlink loop"):
            ws.read_text("self")
        ws.write_text("alias/n.py", "y = 2\n")  # a write through an inside link lands inside
        assert (root / "pkg" / "sub" / "n.py").read_text() == "y = 2\n"
