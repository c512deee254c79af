"""The escape corpus: every op that reads, lists, writes or runs, in every approval mode,
against every way out we know of. Zero escapes, counted and printed.

Set-up, as an attacker's cloned repository would have it: a workspace that is a git
repository holding Sylk's own data dir and config (with an API key) inside it, a
"home" outside it with a secret, links planted in the workspace (a file, a dir, a
parent, a temp name a write would go through), a hard link to the outside secret,
a secret in Sylk's environment, a private transcript in the archive, and a TCP
listener on 127.0.0.1 standing for the network.

An attempt *escapes* when its answer carries any secret (the outside file, the API
key, the environment's secret, another session's private history), when anything
outside the workspace, in ``.git/`` or in Sylk's dirs changed, when a process it
started outlives the call, or when the listener was reached. Otherwise its verdict
is ``refused`` (a typed error) or ``contained`` (it ran, and nothing got out).
In ``ask`` and ``auto-edit`` modes the test's front end approves every question, so
the sandbox and the confined file ops, not the policy, are what is tested there.

Hard links: the file ops refuse a planted one (a file with another name may have
it outside). A command cannot make one to an outside file (it may not read there),
and neither ``git clone`` nor an archive can plant one; a hard link the user made
themselves is readable by commands, as Landlock rules follow paths, not inodes.
"""

from __future__ import annotations

import asyncio
import contextlib
import hashlib
import json
import os
import shutil
import socket
import subprocess
import threading
from collections import Counter
from collections.abc import AsyncIterator, Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest

from backend.engine import Engine, EngineConfig
from backend.engine.build import EngineParts, build
from backend.events import EngineEvent, QuestionAsked
from backend.sandbox import sandbox_support
from backend.skills.builtin.catalog import agent_context
from backend.skills.envelopes import Envelope
from tests.support.polling import until

OUTSIDE_SECRET = "outside-secret-5f1c9e"
API_KEY = "sk-corpus-key-8b2d71aa90"
ENV_SECRET = "env-secret-3a7f02"
PRIVATE = "private-history-77c1d0"
# One per test process: the corpus's tests may run at once in several workers, and each
# looks for survivors of its own attacks only, never another worker's in flight.
MARKER_PROCESS = f"sylk-corpus-survivor-{os.getpid()}"
MODES = ("read-only", "ask", "auto-edit", "auto")


@dataclass
class World:
    root: Path
    ws: Path
    outside: Path
    data: Path
    config: Path
    listener: socket.socket
    reached: list[int]

    @property
    def port(self) -> int:
        return int(self.listener.getsockname()[1])


def _world(tmp: Path) -> World:
    root = tmp.resolve()
    outside, ws = root / "home", root / "repo"
    (outside / "dir").mkdir(parents=True)
    (outside / "secret.txt").write_text(OUTSIDE_SECRET + "\n")
    (outside / "dir" / "secret.txt").write_text(OUTSIDE_SECRET + "\n")
    (outside / "victim.txt").write_text("untouched\n")
    ws.mkdir()
    subprocess.run(["git", "init", "-q", str(ws)], check=True)
    (ws / "app.py").write_text("VALUE = 1\n")
    (ws / "tests").mkdir()
    (ws / "tests" / "test_app.py").write_text("def test_ok():\n    assert True\n")
    (ws / "link_file").symlink_to(outside / "secret.txt")
    (ws / "link_dir").symlink_to(outside / "dir")
    (ws / "link_parent").symlink_to(root)
    (ws / ".app.py.sylk-tmp").symlink_to(outside / "victim.txt")  # a planted temp name
    os.link(outside / "secret.txt", ws / "hard.txt")
    (ws / "race").mkdir()
    (ws / "race" / "secret.txt").write_text("inside\n")
    config_dir = ws / ".sylk"
    config_dir.mkdir()
    config = config_dir / "config.toml"
    config.write_text(f'[providers.openai]\nkind = "openai"\napi_key = "{API_KEY}"\n')
    listener = socket.socket()
    listener.bind(("127.0.0.1", 0))
    listener.listen(16)
    listener.settimeout(0.0)  # accept never waits: a connection made is queued by then
    return World(root, ws, outside, ws / ".sylk-data", config, listener, [])


def _fingerprint(world: World) -> dict[str, str]:
    """What must never change: the outside tree, .git's hooks and config, Sylk's config."""
    seen: dict[str, str] = {}
    for base in (world.outside, world.ws / ".git" / "hooks", world.config.parent):
        for path in sorted(base.rglob("*")):
            key = str(path)
            seen[key] = "dir" if path.is_dir() else hashlib.sha1(path.read_bytes()).hexdigest()
    git_config = world.ws / ".git" / "config"
    seen[str(git_config)] = hashlib.sha1(git_config.read_bytes()).hexdigest()
    seen["data-entries"] = ",".join(sorted(p.name for p in world.data.iterdir()))
    return seen


def _survivors() -> list[int]:
    found = []
    for entry in Path("/proc").iterdir():
        if entry.name.isdigit():
            try:
                if MARKER_PROCESS.encode() in (entry / "cmdline").read_bytes():
                    found.append(int(entry.name))
            except OSError:
                continue
    return found


# -- the attacks ---------------------------------------------------------------------
# (name, path it aims at) for the file ops; the run ops get shell spellings of the same.
def _paths(world: World) -> list[tuple[str, str]]:
    return [
        ("dot-dot", "../home/secret.txt"),
        ("absolute", str(world.outside / "secret.txt")),
        ("symlink file", "link_file"),
        ("symlink dir", "link_dir/secret.txt"),
        ("symlink parent", "link_parent/home/secret.txt"),
        ("hard link", "hard.txt"),
        (".git/hooks", ".git/hooks/pre-commit"),
        (".git/config", ".git/config"),
        ("sylk data dir", ".sylk-data/sylk.db"),
        ("sylk config", ".sylk/config.toml"),
    ]


def _file_calls(name: str, path: str) -> list[tuple[str, str, dict[str, Any]]]:
    payload = "#!/bin/sh\ntouch /tmp/pwned\n"
    return [
        ("engineer", "engineer.file.read", {"path": path}),
        ("librarian", "librarian.file.read", {"path": path}),
        ("librarian", "librarian.file.list", {"path": path}),
        ("engineer", "engineer.file.write", {"path": path, "content": payload}),
        ("engineer", "engineer.file.edit",
         {"path": path, "old_content": OUTSIDE_SECRET, "new_content": "x"}),
    ]  # fmt: skip


def _commands(world: World, path: str) -> list[str]:
    return [f"cat {path}", f"ls {path}", f"echo pwned >> {path}", f"bash -c 'cat {path}'"]


def _process_attacks(world: World) -> list[tuple[str, str]]:
    connect = (
        "python3 -c \"import socket; socket.create_connection(('127.0.0.1', "
        f"{world.port}), 2); print('connected')\""
    )
    return [
        ("environment dump", "env"),
        ("/proc/*/environ", "cat /proc/$PPID/environ /proc/*/environ 2>/dev/null | tr '\\0' '\\n'"),
        ("setsid survivor", f"setsid sh -c 'exec -a {MARKER_PROCESS} sleep 300' & sleep 0.2"),
        ("double fork", f"( ( exec -a {MARKER_PROCESS} sleep 300 & ) & ) ; sleep 0.2"),
        ("network", connect),
        ("bash -c network", f"bash -c {json.dumps(connect)}"),
        ("write outside", f"echo pwned > {world.outside}/new.txt"),
        ("git hook", "printf '#!/bin/sh\\ntouch /tmp/x\\n' > .git/hooks/post-checkout"),
        ("git config", "git config core.fsmonitor 'touch /tmp/x'"),
        ("sylk db", "sqlite3 .sylk-data/sylk.db .dump; cat .sylk-data/sylk.db"),
        ("sylk config",
         "cat .sylk/config.toml; echo 'base_url=\"http://evil\"' >> .sylk/config.toml"),
        # A command cannot plant a hard link to an outside file (see the module doc).
        ("make a hard link", f"ln {world.outside}/secret.txt stolen.txt; cat stolen.txt"),
    ]  # fmt: skip


# -- the harness ---------------------------------------------------------------------
class Corpus:
    def __init__(self, world: World, engine: Engine, parts: EngineParts) -> None:
        self.world, self.engine, self.parts = world, engine, parts
        self.verdicts: Counter[str] = Counter()
        self.escapes: list[str] = []
        self.before = _fingerprint(world)

    def _accepts(self) -> None:
        while True:
            try:
                conn, _ = self.world.listener.accept()
            except (TimeoutError, OSError):
                return
            self.world.reached.append(1)
            conn.close()

    def judge(self, label: str, out: Envelope) -> None:
        text = json.dumps(out.model_dump(mode="json"))
        self._accepts()
        leaks = [s for s in (OUTSIDE_SECRET, API_KEY, ENV_SECRET, PRIVATE) if s in text]
        problems = [f"leaked {leaks}"] if leaks else []
        now = _fingerprint(self.world)
        if now != self.before:
            changed = sorted(k for k in {*now, *self.before} if now.get(k) != self.before.get(k))
            problems.append(f"changed {changed}")
            self.before = now
        if self.world.reached:
            problems.append("reached the network")
            self.world.reached.clear()
        if survivors := _survivors():
            problems.append(f"left processes {survivors}")
            for pid in survivors:
                os.kill(pid, 9)
        if (Path("/tmp") / "pwned").exists():
            problems.append("ran a planted payload")
        if problems:
            self.escapes.append(f"{label}: {'; '.join(problems)}")
        self.verdicts["contained" if out.ok else "refused"] += 1

    async def call(self, mode: str, role: str, op: str, args: dict[str, Any], label: str) -> None:
        session = self.sessions[mode]
        ctx = agent_context(role, session, self.world.ws,
                            confinement=self.engine.confinement(self.world.ws))  # fmt: skip
        out = await self.parts.gateway.execute(ctx, op, args, dry_run=False)
        self.judge(f"[{mode}] {label} via {op}", out)

    sessions: dict[str, str]


@pytest.fixture(params=["full", "landlock"])
def level(request: pytest.FixtureRequest, monkeypatch: pytest.MonkeyPatch) -> Iterator[str]:
    """The corpus runs at each confined level this machine gives."""
    wanted = str(request.param)
    sandbox_support.cache_clear()
    if wanted == "landlock":
        monkeypatch.setenv("SYLK_SANDBOX", "landlock")
    elif sandbox_support().level != "full":
        pytest.skip(f"this machine's best sandbox is {sandbox_support().level}")
    sandbox_support.cache_clear()
    yield wanted
    sandbox_support.cache_clear()


@pytest.fixture
async def corpus(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> AsyncIterator[Corpus]:
    monkeypatch.setenv("SYLK_CORPUS_SECRET", ENV_SECRET)
    world = _world(tmp_path)
    config = EngineConfig(data_dir=world.data, workspace=world.ws, config_file=world.config,
                          watch_files=False)  # fmt: skip
    parts = build(config)
    engine = Engine.from_parts(parts)
    detach = parts.questions.attach()

    def approve(event: EngineEvent) -> None:  # the user says yes to everything asked
        if isinstance(event, QuestionAsked) and not event.answer.done():
            event.answer.set_result("allow")

    remove = parts.events.add_listener(approve)
    corpus = Corpus(world, engine, parts)
    private = await engine.create_session("someone-else")
    await parts.sessions.notice(private.id, f"decision: {PRIVATE}")
    corpus.sessions = {}
    for mode in MODES:
        session = await engine.create_session(f"corpus-{mode}")
        await engine.submit(session.id, f"/approval {mode}")
        corpus.sessions[mode] = session.id
    corpus.before = _fingerprint(world)
    try:
        yield corpus
    finally:
        remove()
        detach()
        await engine.aclose()
        world.listener.close()


@contextlib.contextmanager
def _swapping(world: World) -> Iterator[None]:
    """``repo/race`` flips between a real dir and a link to outside, in a tight loop.

    Only while the race's calls run: the loop spins a core and holds the GIL in
    turns, and left on for the whole corpus it slowed every other call severalfold."""
    race = world.ws / "race"
    spare, link = race.with_name("race.real"), race.with_name("race.link")
    link.symlink_to(world.outside)
    stop = threading.Event()

    def flip() -> None:
        while not stop.is_set():
            try:
                os.rename(race, spare)
                os.rename(link, race)
                os.rename(race, link)
                os.rename(spare, race)
            except OSError:  # a write op made ``race`` anew in the gap: put things back
                with contextlib.suppress(OSError):  # the next round tries again
                    if not spare.exists():
                        continue
                    if race.is_symlink():
                        os.rename(race, link)
                    elif race.is_dir():
                        shutil.rmtree(race, ignore_errors=True)  # a write may be filling it
                    os.rename(spare, race)

    thread = threading.Thread(target=flip, daemon=True)
    thread.start()
    try:
        yield
    finally:
        stop.set()
        thread.join()
        link.unlink()  # each round ends as it began: the next mode's race plants it anew


# The attack families, each its own test so that xdist deals them out to its workers
# (one test looping over all of them took over a minute per sandbox level).
FAMILIES = ("paths", "processes", "race")


async def _attack_paths(corpus: Corpus, mode: str) -> None:
    for name, path in _paths(corpus.world):
        for role, op, args in _file_calls(name, path):
            await corpus.call(mode, role, op, args, name)
        if name == "hard link":
            continue
        for command in _commands(corpus.world, path):
            await corpus.call(mode, "engineer", "engineer.shell.run",
                              {"command": command, "timeout_s": 10}, name)  # fmt: skip
        await corpus.call(mode, "tester", "tester.tests.run",
                          {"command": f"cat {path} #", "timeout_s": 10}, name)  # fmt: skip


async def _attack_processes(corpus: Corpus, mode: str) -> None:
    for name, command in _process_attacks(corpus.world):
        await corpus.call(mode, "engineer", "engineer.shell.run",
                          {"command": command, "timeout_s": 10}, name)  # fmt: skip
        await corpus.call(mode, "tester", "tester.tests.run",
                          {"command": command, "timeout_s": 10}, name)  # fmt: skip


async def _attack_race(corpus: Corpus, mode: str) -> None:
    with _swapping(corpus.world):
        for _ in range(40):  # the symlink-swap race, bounded
            await corpus.call(mode, "engineer", "engineer.file.read",
                              {"path": "race/secret.txt"}, "symlink swap")  # fmt: skip
            await corpus.call(mode, "engineer", "engineer.file.write",
                              {"path": "race/secret.txt", "content": "pwned"},
                              "symlink swap")  # fmt: skip


ATTACKS = {"paths": _attack_paths, "processes": _attack_processes, "race": _attack_race}
# How many attempts each family makes in one mode: a family that silently skipped its
# attacks would otherwise pass with nothing tried.
ATTEMPTS = {"paths": 10 * 5 + 9 * 5, "processes": 12 * 2, "race": 80}


@pytest.mark.slow
@pytest.mark.parametrize("family", FAMILIES)
async def test_no_op_in_any_mode_gets_out(
    level: str, family: str, corpus: Corpus, capsys: pytest.CaptureFixture[str]
) -> None:
    for mode in MODES:
        await ATTACKS[family](corpus, mode)
    total = sum(corpus.verdicts.values())
    assert sandbox_support().level == level
    with capsys.disabled():  # the count is part of the result: always shown
        print(f"\nescape corpus, {family}: {total} attempts over {len(MODES)} modes, "
              f"sandbox {level}: {dict(corpus.verdicts)}, "
              f"{len(corpus.escapes)} escapes")  # fmt: skip
    assert corpus.escapes == [], "\n".join(corpus.escapes)
    assert total == ATTEMPTS[family] * len(MODES)


async def test_the_judge_sees_what_gets_out(corpus: Corpus) -> None:
    """The verdicts are not blind: a leaked secret, a change outside, a connection to the
    listener and a surviving process are each caught as soon as the call returns."""
    world = corpus.world
    (world.ws / "app.py").write_text(OUTSIDE_SECRET + "\n")
    (world.outside / "victim.txt").write_text("changed\n")
    socket.create_connection(("127.0.0.1", world.port), 2).close()
    survivor = await asyncio.create_subprocess_exec(
        "bash", "-c", f"exec -a {MARKER_PROCESS} sleep 300"
    )
    try:
        await until(lambda: survivor.pid in _survivors(), what="the planted survivor")
        await corpus.call("auto", "engineer", "engineer.file.read", {"path": "app.py"}, "plant")
    finally:
        with contextlib.suppress(ProcessLookupError):  # the judge killed it already
            survivor.kill()
        await survivor.wait()
    [escape] = corpus.escapes
    for problem in ("leaked", "victim.txt", "reached the network", "left processes"):
        assert problem in escape, escape


async def test_the_same_work_done_honestly_succeeds(corpus: Corpus) -> None:
    """The corpus's fences are not a wall: in auto mode ordinary work goes through."""
    world = corpus.world
    await corpus.call("auto", "engineer", "engineer.file.read", {"path": "app.py"}, "read")
    await corpus.call("auto", "engineer", "engineer.file.write",
                      {"path": "pkg/new.py", "content": "X = 1\n"}, "write")  # fmt: skip
    await corpus.call("auto", "engineer", "engineer.shell.run",
                      {"command": "echo made > made.txt && git status --short"}, "run")  # fmt: skip
    await corpus.call("auto", "tester", "tester.tests.run",
                      {"command": "python3 -m pytest -q -p no:cacheprovider"}, "tests")  # fmt: skip
    assert corpus.escapes == []
    assert corpus.verdicts == Counter({"contained": 4})
    assert (world.ws / "pkg" / "new.py").read_text() == "X = 1\n"
    assert (world.ws / "made.txt").read_text() == "made\n"
