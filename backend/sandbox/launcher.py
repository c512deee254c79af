"""The sandbox launcher: the process between Sylk and a command, set up, confined, reaped.

Run by path as ``python -I -S launcher.py SPEC_FILE`` (or ``--probe``). It imports
nothing of Sylk's (stdlib and ctypes only; no json, whose import costs more than the
rest) so it starts in about 15 ms, and it reads everything it does from the spec
(a marshalled dict) the runner wrote
(:mod:`backend.sandbox.plan` decides what goes in it):

- ``full``: new user, mount, pid (and, without network, net) namespaces. The first
  child is PID 1 of the pid namespace and dies with the launcher (PDEATHSIG), so
  when either goes, the kernel kills every process the command started, ``setsid``
  and double-forked ones included. It mounts ``.git`` read-only, hides Sylk's
  protected paths under empty unreadable mounts, mounts a fresh ``/proc`` and a
  private ``/dev/shm``, then forks the command, which applies Landlock and execs.
- ``landlock``: no namespaces. The launcher is a child subreaper: after the command
  exits it SIGKILLs every remaining descendant (orphans are reparented to it).
- ``none``: the same reaping, no confinement.

SIGUSR1 or SIGTERM from the runner (timeout, cancel) kills the whole tree. A set-up
failure is written as one line (``step``, then the errno) to the status fd and the
launcher exits 125; the runner turns it into a typed error.
"""

from __future__ import annotations

# The C module: ``signal`` imports enum, which alone costs more than the rest of start-up.
import _signal as signal  # type: ignore[import-not-found]
import marshal
import os
import sys
import time

TYPE_CHECKING = False  # typing costs milliseconds too; mypy reads this as True
if TYPE_CHECKING:
    from typing import Any

    from backend.sandbox import kernel
else:  # run by path: its sibling, not the package (which would import Sylk)
    sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
    import kernel

SETUP_FAILED = 125


def _arrange_mounts(spec: dict[str, Any]) -> None:
    """Inside the namespaces: .git read-only, protected paths hidden, fresh /proc."""
    kernel.mount(None, "/", None, kernel.MS_REC | kernel.MS_PRIVATE)
    for path in spec["readonly"]:
        kernel.bind_read_only(path, path)
    for path in spec["hidden"]:
        if os.path.isdir(path):
            # Empty, read-only, mode 000: the unprivileged command can neither list nor chmod it.
            sealed = kernel.MS_RDONLY | kernel.MS_NOSUID | kernel.MS_NODEV | kernel.MS_NOEXEC
            kernel.mount("tmpfs", path, "tmpfs", sealed, "size=4k,nr_inodes=1,mode=000")
        else:
            kernel.bind_read_only("/dev/null", path)
    for path in spec["private_tmpfs"]:
        kernel.mount("tmpfs", path, "tmpfs", kernel.MS_NOSUID | kernel.MS_NODEV, "mode=1777")
    kernel.mount_proc()  # best effort: without it, Landlock keeps other processes' environ out


def _exec_command(spec: dict[str, Any], ruleset: int | None) -> None:
    """In the command's own process: confine, restore default signals, exec."""
    for sig in (signal.SIGPIPE, signal.SIGXFSZ, signal.SIGINT, signal.SIGUSR1, signal.SIGTERM):
        signal.signal(sig, signal.SIG_DFL)
    signal.pthread_sigmask(signal.SIG_SETMASK, set())
    kernel.drop_privileges()
    if ruleset is not None:
        kernel.restrict(ruleset)
    argv = spec["argv"]
    program, failure = argv[0], 2  # ENOENT unless a candidate says otherwise
    dirs = [""] if "/" in program else os.environ.get("PATH", os.defpath).split(os.pathsep)
    for directory in dirs:  # execvp's own search imports warnings: milliseconds
        try:
            os.execv(os.path.join(directory, program), argv)
        except OSError as exc:
            if exc.errno not in (2, 20):  # ENOENT, ENOTDIR: try the next directory
                failure = exc.errno or 0
    raise kernel.SetupFailure("exec", failure)


def _exit_code(status: int) -> int:
    return os.waitstatus_to_exitcode(status) if os.WIFEXITED(status) else 128 + os.WTERMSIG(status)


def _wait_for(main: int) -> int:
    """Reap every child (orphans land here too) until ``main`` exits; its exit code."""
    while True:
        try:
            pid, status = os.waitpid(-1, 0)
        except ChildProcessError:
            return SETUP_FAILED
        if pid == main:
            return _exit_code(status)


def _descendants(root: int) -> list[int]:
    children: dict[int, list[int]] = {}
    for entry in os.listdir("/proc"):
        if not entry.isdigit():
            continue
        try:
            with open(f"/proc/{entry}/stat", "rb") as f:
                ppid = int(f.read().rsplit(b")", 1)[1].split()[1])
        except (OSError, IndexError, ValueError):
            continue
        children.setdefault(ppid, []).append(int(entry))
    found, todo = [], list(children.get(root, ()))
    while todo:
        pid = todo.pop()
        found.append(pid)
        todo.extend(children.get(pid, ()))
    return found


def _reap_nonblocking() -> bool:
    """Reap what has exited; False once the launcher has no child left."""
    while True:
        try:
            pid, _ = os.waitpid(-1, os.WNOHANG)
        except ChildProcessError:
            return False
        if pid == 0:
            return True


def kill_descendants() -> None:
    """SIGKILL every process under this one, again until none is left (forks race)."""
    while _reap_nonblocking():
        for pid in _descendants(os.getpid()):
            try:
                os.kill(pid, signal.SIGKILL)
            except ProcessLookupError:
                continue
        time.sleep(0.001)


def _on_stop(kill: Any) -> None:
    def handler(signum: int, frame: object) -> None:
        kill()

    for sig in (signal.SIGUSR1, signal.SIGTERM):
        signal.signal(sig, handler)


def run_full(spec: dict[str, Any]) -> int:
    kernel.enter_namespaces(spec)
    alive_r, alive_w = os.pipe()
    init = os.fork()
    if init == 0:
        os.close(alive_w)
        _pid1(spec, alive_r)
    os.close(alive_r)
    _on_stop(lambda: os.kill(init, signal.SIGKILL))
    code = _wait_for(init)  # returns once the kernel has torn the pid namespace down
    os.close(alive_w)
    return code


def _pid1(spec: dict[str, Any], alive_r: int) -> None:
    """PID 1 of the namespace: set up, fork the command, reap, exit with its code."""
    try:
        kernel.prctl(kernel.PR_SET_PDEATHSIG, signal.SIGKILL, "pdeathsig")
        os.set_blocking(alive_r, False)
        try:
            if os.read(alive_r, 1) == b"":
                os._exit(128 + signal.SIGKILL)  # the launcher died before PDEATHSIG was set
        except BlockingIOError:
            pass
        os.close(alive_r)
        signal.signal(signal.SIGINT, signal.SIG_IGN)
        _arrange_mounts(spec)
        try:
            os.chdir(spec["cwd"])  # through the new mounts, not the dentry inherited
        except OSError as exc:
            raise kernel.SetupFailure("chdir", exc.errno or 0) from None
        ruleset = kernel.build_ruleset(spec["rules"], spec["network"])
        command = os.fork()
        if command == 0:
            _guarded(lambda: _exec_command(spec, ruleset), spec)
        os._exit(_wait_for(command))
    except kernel.SetupFailure as failure:
        _report(spec, failure)
    os._exit(SETUP_FAILED)


def run_reaped(spec: dict[str, Any]) -> int:
    if sys.platform.startswith("linux"):
        kernel.prctl(kernel.PR_SET_CHILD_SUBREAPER, 1, "subreaper")
    ruleset = (
        kernel.build_ruleset(spec["rules"], spec["network"]) if spec["level"] != "none" else None
    )
    _on_stop(kill_descendants)
    command = os.fork()
    if command == 0:
        _guarded(lambda: _exec_command(spec, ruleset), spec)
    code = _wait_for(command)
    kill_descendants()
    return code


def _report(spec: dict[str, Any], failure: kernel.SetupFailure) -> None:
    line = f"{failure.errno} {failure.step}\n"
    try:
        os.write(spec["status_fd"], line.encode())
    except OSError:
        return  # nobody listens: the exit code says it failed


def _guarded(action: Any, spec: dict[str, Any]) -> None:
    """Run a forked child's work; whatever happens, it never returns into the parent's code."""
    try:
        action()
    except kernel.SetupFailure as failure:
        _report(spec, failure)
    except BaseException:  # a forked child must not unwind into its parent's code
        _report(spec, kernel.SetupFailure("child", 0))
    os._exit(SETUP_FAILED)


def probe() -> dict[str, Any]:
    """What this machine allows: Landlock's ABI, and namespaces with a fresh /proc."""
    found: dict[str, Any] = {
        "landlock_abi": kernel.landlock_abi(),
        "userns": False,
        "proc": False,
    }
    if not sys.platform.startswith("linux"):
        return found
    read_end, write_end = os.pipe()
    child = os.fork()
    if child == 0:
        os.close(read_end)
        result: dict[str, object] = {"userns": False, "proc": False}
        try:
            spec = {"network": False, "inner_uid": 1000, "inner_gid": 1000}
            kernel.enter_namespaces(spec)
            result["userns"] = True
            inner = os.fork()
            if inner == 0:
                try:
                    kernel.mount(None, "/", None, kernel.MS_REC | kernel.MS_PRIVATE)
                    ok = kernel.mount_proc()
                except kernel.SetupFailure:
                    ok = False
                os._exit(0 if ok else 1)
            _, status = os.waitpid(inner, 0)
            result["proc"] = os.WIFEXITED(status) and os.WEXITSTATUS(status) == 0
        except kernel.SetupFailure as failure:
            result["failed"] = f"{failure.step}: {os.strerror(failure.errno)}"
        except BaseException:  # a forked child must not unwind into its parent's code
            result["failed"] = "probe"
        os.write(write_end, marshal.dumps(result))
        os._exit(0)
    os.close(write_end)
    with os.fdopen(read_end, "rb") as f:
        raw = f.read()
    os.waitpid(child, 0)
    if raw:
        found.update(marshal.loads(raw))
    return found


def main(argv: list[str]) -> int:
    if argv[1:] == ["--probe"]:
        sys.stdout.buffer.write(marshal.dumps(probe()))
        return 0
    with open(argv[1], "rb") as f:
        spec = marshal.load(f)
    os.set_inheritable(spec["status_fd"], False)  # the command never gets it
    try:
        return run_full(spec) if spec["level"] == "full" else run_reaped(spec)
    except kernel.SetupFailure as failure:
        _report(spec, failure)
    except Exception as exc:  # a bug here must still reach the runner as a typed error
        _report(spec, kernel.SetupFailure(f"launcher: {type(exc).__name__}", 0))
    return SETUP_FAILED


if __name__ == "__main__":
    code = main(sys.argv)
    sys.stdout.flush()
    os._exit(code)  # no interpreter tear-down: the command is already gone
