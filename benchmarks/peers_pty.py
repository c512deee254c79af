"""The terminal side of ``peers_bench.py``: any program on a 120x40 pseudo-terminal that
answers the queries a real terminal answers, and what its output put on the screen.

``tui_bench_pty.spawn`` runs a program from the repository's root and detects a frame by
the alternate screen being entered; the peers differ: Claude Code and aider draw inline
(no alternate screen), Codex and opencode ask the terminal questions first (cursor
position, device attributes, colours) and wait for answers, and every peer must start in
a workspace of its own, never in this repository. So this module spawns in a given
directory, answers those questions as xterm does, and takes a frame to be visible text
(anything but spaces once escape sequences are removed) written after the program set
up the terminal (its first ``CSI ? n h/l``), so a warning printed before the program's
interface starts does not count as its first frame.
"""

from __future__ import annotations

import fcntl
import os
import pty
import re
import struct
import termios
import time
from pathlib import Path

import tui_bench_pty as term

COLUMNS, LINES = term.COLUMNS, term.LINES
QUIET_S = term.QUIET_S
"""The pause (10 ms) that ends a frame's burst of writes, as in ``tui_bench_pty``."""
REST_S = 0.5
"""A pause this long after the first frame: the screen is at rest."""
PAGE = os.sysconf("SC_PAGE_SIZE")

ESCAPES = re.compile(
    rb"\x1b\[[0-?]*[ -/]*[@-~]"  # CSI
    rb"|\x1b\][^\x07\x1b]*(?:\x07|\x1b\\)"  # OSC
    rb"|\x1b[PX^_](?:\x1b\x1b|[^\x1b])*\x1b\\"  # DCS, SOS, PM, APC (ESC doubled inside)
    rb"|\x1b[()][0-9A-Za-z]"  # charset
    rb"|\x1b[ -~]"  # two-byte escapes
)
MODE_SET = re.compile(rb"\x1b\[\?[\d;]+[hl]")
ANSWERS: tuple[tuple[re.Pattern[bytes], bytes], ...] = (
    (re.compile(rb"\x1b\[0?c"), b"\x1b[?62;22c"),  # primary device attributes
    (re.compile(rb"\x1b\[>0?c"), b"\x1b[>41;388;0c"),  # secondary
    (re.compile(rb"\x1b\[6n"), b"\x1b[1;1R"),  # cursor position
    (re.compile(rb"\x1b\[>0?q"), b"\x1bP>|XTerm(388)\x1b\\"),  # name, version
    (re.compile(rb"\x1b\]10;\?(?:\x07|\x1b\\)"), b"\x1b]10;rgb:cccc/cccc/cccc\x1b\\"),
    (re.compile(rb"\x1b\]11;\?(?:\x07|\x1b\\)"), b"\x1b]11;rgb:0000/0000/0000\x1b\\"),
    (re.compile(rb"\x1b\]4;(\d+);\?(?:\x07|\x1b\\)"), b"\x1b]4;%s;rgb:0000/0000/0000\x1b\\"),
)
"""Queries answered as xterm answers them; others (kitty keyboard, DECRQM, pixel
sizes, XTGETTCAP) go unanswered, which the programs asking treat as "not supported"."""


def visible(data: bytes, drawing: bool = True) -> str:
    """The text ``data`` shows once escape sequences and control characters are gone
    (and, unless ``drawing``, box-drawing and block characters: what it says)."""
    text = ESCAPES.sub(b" ", data).decode("utf-8", "replace")
    kept = (
        c if c.isprintable() and (drawing or not 0x2500 <= ord(c) <= 0x259F) else " " for c in text
    )
    return " ".join("".join(kept).split())


class PeerRun(term.TerminalRun):
    """A program on a pseudo-terminal, answering the terminal's queries as it reads."""

    seen: bytes = b""
    answered_to: int = 0

    def read(self, timeout: float) -> bool:
        count = len(self.chunks)
        alive = super().read(timeout)
        if len(self.chunks) != count:
            self.seen += self.chunks[-1][1]
            self._answer()
        return alive

    def _answer(self) -> None:
        start = max(self.answered_to, len(self.seen) - len(self.chunks[-1][1]) - 32)
        found = []
        for pattern, reply in ANSWERS:
            for match in pattern.finditer(self.seen, start):
                if match.start() >= self.answered_to:
                    found.append((match.start(), match.end(), reply % match.groups()))
        for _, end, reply in sorted(found):
            try:
                os.write(self.fd, reply)
            except OSError:
                return
            self.answered_to = max(self.answered_to, end)

    def alive(self, grace_s: float = 0.0) -> bool:
        """Whether the program still runs; ``grace_s``: how long to wait for an exit
        under way (its terminal closed before the kernel reported the exit)."""
        until = time.perf_counter() + grace_s
        while self._running() and time.perf_counter() < until:
            time.sleep(0.01)
        return self._running()

    def _running(self) -> bool:
        try:
            done, _ = os.waitpid(self.pid, os.WNOHANG)
        except ChildProcessError:
            return False
        return done == 0

    def tree(self) -> list[int]:
        """The process and all its descendants (wrappers start the real program)."""
        parents: dict[int, int] = {}
        for entry in Path("/proc").iterdir():
            if entry.name.isdigit():
                try:
                    stat = (entry / "stat").read_text().rsplit(")", 1)[1].split()
                except OSError:
                    continue
                parents[int(entry.name)] = int(stat[1])
        family, grew = {self.pid}, True
        while grew:
            more = {pid for pid, parent in parents.items() if parent in family} - family
            family |= more
            grew = bool(more)
        return sorted(family)

    def tree_rss_mib(self) -> float:
        pages = 0
        for pid in self.tree():
            try:
                pages += int(Path(f"/proc/{pid}/statm").read_text().split()[1])
            except (OSError, IndexError):
                continue
        return round(pages * PAGE / 2**20, 1)

    def tree_cpu_seconds(self) -> float:
        """User + system time of the whole tree, reaped children included."""
        ticks = 0
        for pid in self.tree():
            try:
                stat = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
            except OSError:
                continue
            ticks += sum(int(stat[i]) for i in (11, 12, 13, 14))
        return ticks * term.TICK_S


def spawn(argv: list[str], env: dict[str, str], cwd: Path) -> PeerRun:
    started = time.perf_counter()
    pid, fd = pty.fork()
    if pid == 0:  # the child: the program on the terminal
        os.chdir(cwd)
        os.execve(argv[0], argv, {**env, "TERM": "xterm-256color"})
    fcntl.ioctl(fd, termios.TIOCSWINSZ, struct.pack("HHHH", LINES, COLUMNS, 0, 0))
    return PeerRun(pid, fd, started)


def first_frame(run: PeerRun, deadline_s: float) -> dict[str, object]:
    """Seconds to the end of the first burst showing text after the terminal's set-up,
    to the screen at rest (no write for ``REST_S`` after it), and the text shown."""
    frame_at = rest_at = None
    set_up_at = -1
    while time.perf_counter() - run.started < deadline_s:
        count = len(run.chunks)
        alive = run.read(QUIET_S)
        now = time.perf_counter() - run.started
        if len(run.chunks) == count:  # a pause, or the end
            last = run.chunks[-1][0] if run.chunks else 0.0
            if frame_at is None and _shows_text(run, set_up_at) and now - last >= QUIET_S:
                frame_at = last
            if frame_at is not None and (now - last >= REST_S or not alive):
                rest_at = last
                break
        elif set_up_at < 0 and (found := MODE_SET.search(run.seen)):
            set_up_at = found.start()
        if not alive:
            break
    return {
        "first_frame_s": frame_at,
        "at_rest_s": rest_at,
        "shown": visible(run.seen[max(set_up_at, 0) :], drawing=False)[:400],
        "exited": not run.alive(grace_s=0.5 if not alive else 0.0),
    }


def _shows_text(run: PeerRun, set_up_at: int) -> bool:
    return set_up_at >= 0 and bool(visible(run.seen[set_up_at:]))
