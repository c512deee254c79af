"""The kernel calls the sandbox needs, through ctypes: Landlock, namespaces, mounts, prctl.

Stdlib only (the launcher imports it by path, with ``-I -S``, and must start fast).
Landlock's three calls (444-446) have the same number on every architecture with the
generic syscall table; each returns a negative value and sets errno on failure, which
:func:`check` turns into a :class:`SetupFailure` naming the step.
"""

from __future__ import annotations

import ctypes
import os
import stat
import sys

TYPE_CHECKING = False  # typing costs milliseconds at start-up; mypy reads this as True
if TYPE_CHECKING:
    from typing import Any

CLONE_NEWNS, CLONE_NEWUSER = 0x00020000, 0x10000000
CLONE_NEWPID, CLONE_NEWNET = 0x20000000, 0x40000000
MS_RDONLY, MS_NOSUID, MS_NODEV, MS_NOEXEC = 1, 2, 4, 8
MS_REMOUNT, MS_BIND, MS_REC, MS_PRIVATE = 32, 4096, 16384, 1 << 18
# statvfs flags that a read-only remount must keep (a user namespace may not drop them).
_KEPT_FLAGS = ((os.ST_NOSUID, MS_NOSUID), (os.ST_NODEV, MS_NODEV),
               (os.ST_NOEXEC, MS_NOEXEC), (os.ST_NOATIME, 1 << 10),
               (os.ST_NODIRATIME, 1 << 11), (os.ST_RELATIME, 1 << 21))  # fmt: skip
PR_SET_PDEATHSIG, PR_CAPBSET_DROP, PR_SET_CHILD_SUBREAPER, PR_SET_NO_NEW_PRIVS = 1, 24, 36, 38
SYS_CREATE_RULESET, SYS_ADD_RULE, SYS_RESTRICT_SELF = 444, 445, 446
RULESET_VERSION, RULE_PATH_BENEATH, RULE_NET_PORT = 1, 1, 2

# Landlock's filesystem rights by the names the plan uses, and the ABI that brought each.
FS_RIGHTS = {"execute": (1, 1), "write_file": (2, 1), "read_file": (4, 1), "read_dir": (8, 1),
             "remove_dir": (16, 1), "remove_file": (32, 1), "make_char": (64, 1),
             "make_dir": (128, 1), "make_reg": (256, 1), "make_sock": (512, 1),
             "make_fifo": (1024, 1), "make_block": (2048, 1), "make_sym": (4096, 1),
             "refer": (8192, 2), "truncate": (16384, 3), "ioctl_dev": (32768, 5)}  # fmt: skip
FILE_RIGHTS = frozenset({"execute", "write_file", "read_file", "truncate", "ioctl_dev"})
NET_TCP = 1 | 2  # bind and connect, ABI 4
SCOPES = 1 | 2  # abstract unix sockets and signals, ABI 6

libc = ctypes.CDLL(None, use_errno=True)
libc.syscall.restype = ctypes.c_long
libc.mount.argtypes = [ctypes.c_char_p, ctypes.c_char_p, ctypes.c_char_p, ctypes.c_ulong,
                        ctypes.c_char_p]  # fmt: skip


class SetupFailure(Exception):
    """A step of the set-up failed; the runner reports which, with the errno."""

    def __init__(self, step: str, errno: int) -> None:
        super().__init__(step, errno)
        self.step, self.errno = step, errno


def check(result: int, step: str) -> int:
    if result < 0:
        raise SetupFailure(step, ctypes.get_errno())
    return result


def prctl(option: int, value: int, step: str) -> None:
    check(libc.prctl(option, ctypes.c_ulong(value), 0, 0, 0), step)


def landlock_abi() -> int:
    """The kernel's Landlock ABI version; 0 where it has none (or it is disabled)."""
    if not sys.platform.startswith("linux"):
        return 0
    return max(0, int(libc.syscall(SYS_CREATE_RULESET, None, ctypes.c_size_t(0), RULESET_VERSION)))


def fs_mask(abi: int, names: list[str] | None = None) -> int:
    """The bits of ``names`` (default: every right) that the kernel's ABI knows."""
    chosen = FS_RIGHTS if names is None else names
    return sum(FS_RIGHTS[n][0] for n in chosen if FS_RIGHTS[n][1] <= abi)


class _PathBeneath(ctypes.Structure):
    _pack_ = 1
    _fields_ = (("allowed_access", ctypes.c_uint64), ("parent_fd", ctypes.c_int32))


def open_no_links(path: str) -> int:
    """An ``O_PATH`` fd of ``path``, walked from ``/`` without following any link.

    The plan names real paths; a component swapped for a link since then (by a
    command still running in the same workspace) must not move a grant onto the
    link's target. A link as the last component gives the link's own fd (the
    caller skips it); one in the middle ends the walk with ENOTDIR.
    """
    fd = os.open("/", os.O_PATH | os.O_CLOEXEC | os.O_DIRECTORY)
    for part in (p for p in path.split("/") if p):
        try:
            step = os.open(part, os.O_PATH | os.O_CLOEXEC | os.O_NOFOLLOW, dir_fd=fd)
        finally:
            os.close(fd)
        fd = step
    return fd


def build_ruleset(rules: list[list[Any]], network: bool) -> int:
    """A Landlock ruleset fd: every fs right handled, only the plan's rules allowed."""
    abi = landlock_abi()
    if abi < 1:
        raise SetupFailure("landlock_create_ruleset", 95)  # EOPNOTSUPP
    handled = fs_mask(abi)
    net = NET_TCP if abi >= 4 and not network else 0
    scopes = SCOPES if abi >= 6 else 0
    attr = (ctypes.c_uint64 * 3)(handled, net, scopes)
    size = 24 if abi >= 6 else 16 if abi >= 4 else 8
    fd = check(int(libc.syscall(SYS_CREATE_RULESET, attr, ctypes.c_size_t(size), 0)),
                "landlock_create_ruleset")  # fmt: skip
    for path, names in rules:
        try:
            target = open_no_links(path)
        except OSError:
            continue  # gone or a link somewhere since the plan was made: grant nothing
        try:
            info = os.fstat(target)
            mode = info.st_mode
            if stat.S_ISLNK(mode):
                continue  # swapped for a link: its target is ruled by its own path
            if not stat.S_ISDIR(mode) and info.st_nlink > 1:
                continue  # a rule holds the inode: it would grant the file's other names too
            wanted = names if stat.S_ISDIR(mode) else [n for n in names if n in FILE_RIGHTS]
            beneath = _PathBeneath(fs_mask(abi, wanted), target)
            if beneath.allowed_access:
                step = f"landlock_add_rule {path}"
                check(int(libc.syscall(SYS_ADD_RULE, fd, RULE_PATH_BENEATH,
                                         ctypes.byref(beneath), 0)), step)  # fmt: skip
        finally:
            os.close(target)
    return fd


def drop_privileges() -> None:
    """No capability survives the exec (root's included) and no exec can gain one.

    Run as root, a command would otherwise keep CAP_SYS_PTRACE (enough to read other
    processes' environ even under Landlock), CAP_SYS_MODULE and the rest.
    """
    if not sys.platform.startswith("linux"):
        return
    try:
        fd = os.open("/proc/sys/kernel/cap_last_cap", os.O_RDONLY | os.O_CLOEXEC)
        try:
            last = int(os.read(fd, 16))
        finally:
            os.close(fd)
    except (OSError, ValueError):
        last = 63
    for cap in range(last + 1):
        libc.prctl(PR_CAPBSET_DROP, ctypes.c_ulong(cap), 0, 0, 0)  # EPERM: had none to drop
    prctl(PR_SET_NO_NEW_PRIVS, 1, "no_new_privs")


def restrict(ruleset: int) -> None:
    check(int(libc.syscall(SYS_RESTRICT_SELF, ruleset, 0)), "landlockrestrict_self")


def mount(source: str | None, target: str, fstype: str | None, flags: int,
           data: str | None = None) -> None:  # fmt: skip
    enc = [s.encode() if s is not None else None for s in (source, target, fstype, data)]
    check(libc.mount(enc[0], enc[1], enc[2], ctypes.c_ulong(flags), enc[3]), f"mount {target}")


def bind_read_only(source: str, target: str) -> None:
    mount(source, target, None, MS_BIND | MS_REC)
    kept = os.statvfs(target).f_flag
    flags = sum(ms for st, ms in _KEPT_FLAGS if kept & st)
    mount(None, target, None, MS_BIND | MS_REMOUNT | MS_RDONLY | flags)


def write_text(path: str, text: str) -> None:
    fd = os.open(path, os.O_WRONLY)
    try:
        os.write(fd, text.encode())
    finally:
        os.close(fd)


def enter_namespaces(spec: dict[str, Any]) -> None:
    """New user/mount/pid(/net) namespaces, the caller mapped to an unprivileged id."""
    uid, gid = os.getuid(), os.getgid()
    flags = CLONE_NEWUSER | CLONE_NEWNS | CLONE_NEWPID | (0 if spec["network"] else CLONE_NEWNET)
    check(libc.unshare(flags), "unshare")
    try:
        write_text("/proc/self/setgroups", "deny")
        write_text("/proc/self/uid_map", f"{spec['inner_uid']} {uid} 1")
        write_text("/proc/self/gid_map", f"{spec['inner_gid']} {gid} 1")
    except OSError as exc:
        raise SetupFailure("uid_map", exc.errno or 0) from None


def mount_proc() -> bool:
    """A /proc of the new pid namespace: the command sees only its own processes."""
    try:
        mount("proc", "/proc", "proc", MS_NOSUID | MS_NODEV | MS_NOEXEC)
    except SetupFailure:
        return False
    return True
