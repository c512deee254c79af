"""From inside the sandbox, at each level: environments, other processes, survivors, network.

Survivors are looked for on the host, by a marker only they carry on their command
line, after the call returned; nothing here asserts how long anything took.
"""

from __future__ import annotations

import asyncio
import json
import os
import shutil
import socket
import subprocess
import sys
import uuid
from collections.abc import Iterator
from dataclasses import replace
from pathlib import Path

import pytest

from backend.sandbox import CommandTimeoutError
from tests.integration.sandbox.conftest import SECRET, Scene
from tests.support.polling import finishes, until, until_sync

ALLOWED = {"PATH", "HOME", "TMPDIR", "USER", "LOGNAME", "SHELL", "TERM", "TZ", "LANG",
           "LANGUAGE", "COLORTERM", "NO_COLOR", "PWD", "SHLVL", "_", "OLDPWD"}  # fmt: skip


def survivors(marker: str) -> list[int]:
    """Host processes whose command line carries ``marker`` (zombies do not count)."""
    found = []
    for entry in Path("/proc").iterdir():
        if not entry.name.isdigit():
            continue
        try:
            cmdline = (entry / "cmdline").read_bytes()
            state = (entry / "stat").read_text().rsplit(")", 1)[1].split()[0]
        except OSError:
            continue
        if marker.encode() in cmdline and state != "Z":
            found.append(int(entry.name))
    return found


def marker() -> str:
    """A sleep duration no other process on the machine has: ``sleep 300.<random>``."""
    return f"300.{uuid.uuid4().int % 10**9:09d}"


@pytest.fixture
def bystander() -> Iterator[subprocess.Popen[bytes]]:
    """Another process of the user's, with the secret in its environment. Without any
    capability: as root it is then no harder to read than a user's own process is
    (the kernel's capability check would hide it from a capability-less reader)."""
    setpriv = shutil.which("setpriv")
    if setpriv is None:
        pytest.skip("setpriv (util-linux) is needed to start a capability-less bystander")
    proc = subprocess.Popen(
        [setpriv, "--bounding-set=-all", "--inh-caps=-all", "sleep", "600"],
        env={"SYLK_TEST_SECRET": SECRET, "PATH": os.defpath},
    )  # fmt: skip
    yield proc
    proc.kill()
    proc.wait()


async def test_no_other_process_environment_is_readable(
    scene: Scene, bystander: subprocess.Popen[bytes]
) -> None:
    # Sylk itself started with the secret in its environment (as a real Sylk started
    # from a shell holding keys would): a child Python runs the command for it.
    script = (
        "import asyncio, json, sys\n"
        "from pathlib import Path\n"
        "from backend.workspace.commands import run_command_line\n"
        "from backend.workspace.files import Workspace\n"
        "cmd = 'cat /proc/$PPID/environ; cat /proc/1/environ; "
        "for f in /proc/[0-9]*/environ; do cat $f; done; "
        f"cat /proc/{bystander.pid}/environ; strings /proc/$PPID/environ; env'\n"
        f"r = asyncio.run(run_command_line(Workspace(Path(sys.argv[1])), cmd, '.', 60, "
        f"level={scene.level!r}))\n"
        "print(json.dumps(r))\n"
    )
    env = {**os.environ, "SYLK_TEST_SECRET": SECRET}
    done = await asyncio.to_thread(
        subprocess.run, [sys.executable, "-c", script, str(scene.workspace)],
        env=env, capture_output=True, text=True, cwd=Path(__file__).parents[3], check=False,
    )  # fmt: skip
    assert done.returncode == 0, done.stderr
    result = json.loads(done.stdout)
    assert SECRET not in result["stdout"] + result["stderr"]
    assert "SYLK_TEST_SECRET" not in result["stdout"]


async def test_the_environment_is_the_allow_list(
    scene: Scene, monkeypatch: pytest.MonkeyPatch
) -> None:
    leaked = {"SYLK_TEST_SECRET": SECRET, "DB_PASSWD": "hunter2", "GH_PAT": "ghp_x",
              "DATABASE_URL": "postgres://u:pw@db/x", "PYTHONPATH": "/evil"}  # fmt: skip
    for name, value in leaked.items():
        monkeypatch.setenv(name, value)
    result = await scene.run("env")
    names = {line.split("=", 1)[0] for line in result["stdout"].splitlines() if "=" in line}
    assert names <= ALLOWED, names - ALLOWED
    assert not any(value in result["stdout"] for value in leaked.values())


async def test_setsid_and_double_forked_children_do_not_outlive_the_call(scene: Scene) -> None:
    a, b, c = marker(), marker(), marker()
    command = (
        f"setsid sleep {a} & (sleep {b} &) ; "
        f"{sys.executable} -c 'import os, subprocess; os.fork() or os.setsid(); "
        f'subprocess.Popen(["sleep", "{c}"], start_new_session=True)\'; echo started'
    )
    result = await scene.run(command)
    assert result["exit_code"] == 0 and "started" in result["stdout"]
    for mark in (a, b, c):
        assert survivors(mark) == [], f"sleep {mark} outlived its call"


async def test_at_the_limit_the_whole_tree_dies_even_with_its_output_closed(
    scene: Scene,
) -> None:
    mark = marker()
    command = f"setsid sleep {mark} & exec >&- 2>&-; sleep 600"
    with pytest.raises(CommandTimeoutError) as stopped:
        await finishes(scene.run(command, timeout_s=2), what="the command's limit")
    assert stopped.value.details and stopped.value.details["reason"] == "timeout"
    assert survivors(mark) == []


async def test_a_cancelled_call_leaves_nothing_behind(scene: Scene) -> None:
    mark = marker()
    started = scene.workspace / "src" / "started"
    task = asyncio.create_task(
        scene.run(f"setsid sleep {mark} & touch src/started; sleep 600", timeout_s=600)
    )
    await until(started.exists, what="the command to start")
    await until(lambda: survivors(mark), what="the setsid child to start")
    task.cancel()
    with pytest.raises(asyncio.CancelledError):
        await finishes(task, what="the cancelled call")
    assert survivors(mark) == []


def _launchers() -> list[int]:
    """This process's children that are sandbox launchers (exec'd once Popen returns)."""
    me = str(os.getpid())
    found = []
    for entry in Path("/proc").iterdir():
        try:
            if (
                entry.name.isdigit()
                and (entry / "stat").read_text().rsplit(")", 1)[1].split()[1] == me
                and b"launcher.py" in (entry / "cmdline").read_bytes()
            ):
                found.append(int(entry.name))
        except OSError:
            continue
    return found


async def test_a_call_cancelled_while_its_launcher_starts_leaves_nothing_behind(
    scene: Scene,
) -> None:
    """On a loaded machine the command can be running before the event loop has connected
    its pipes. A cancel in that window once SIGKILLed the launcher alone (at ``landlock``
    its tree lived on) and then waited, forever, for a pipe the survivors held open.
    The loop is held here exactly as load would hold it, deterministically."""
    mark = marker()
    started = scene.workspace / "src" / "started"
    loop = asyncio.get_running_loop()
    task = asyncio.create_task(
        scene.run(f"setsid sleep {mark} & touch src/started; sleep 600", timeout_s=600)
    )

    def hold_the_loop_once_spawned() -> None:
        if not _launchers():
            loop.call_soon(hold_the_loop_once_spawned)
            return
        until_sync(lambda: started.exists() and survivors(mark), what="the command to start")
        task.cancel()

    loop.call_soon(hold_the_loop_once_spawned)
    with pytest.raises(asyncio.CancelledError):
        await finishes(task, what="the call cancelled while its launcher started")
    assert survivors(mark) == []


@pytest.fixture
def listener() -> Iterator[int]:
    """A TCP listener on 127.0.0.1 (the test's own; nothing leaves the machine)."""
    with socket.socket() as server:
        server.bind(("127.0.0.1", 0))
        server.listen(8)
        yield server.getsockname()[1]


CONNECT = (
    "import socket, sys\n"
    "try:\n"
    "    socket.create_connection(('127.0.0.1', {port}), timeout=5).close()\n"
    "    print('connected')\n"
    "except OSError as e:\n"
    "    print('refused', e)\n"
)


async def test_no_network_by_default(scene: Scene, listener: int) -> None:
    script = CONNECT.format(port=listener)
    result = await scene.run(f'{sys.executable} -c "{script}"')
    assert "refused" in result["stdout"], result
    udp = (
        "import socket; s = socket.socket(socket.AF_INET, socket.SOCK_DGRAM); "
        "s.connect(('127.0.0.1', 9)); s.send(b'x'); print('udp-sent')"
    )
    result = await scene.run(f'{sys.executable} -c "{udp}"')
    if scene.level == "full":  # an empty network namespace: no interface at all
        assert "udp-sent" not in result["stdout"]


async def test_the_network_switch_allows_it(scene: Scene, listener: int) -> None:
    script = CONNECT.format(port=listener)
    allowed = replace(scene.confinement, network=True)
    result = await scene.run(f'{sys.executable} -c "{script}"', confinement=allowed)
    assert "connected" in result["stdout"], result
