"""Which paths get which Landlock rights, decided without the kernel (real trees on disk)."""

from __future__ import annotations

import marshal
import os
from pathlib import Path

from backend.sandbox.kernel import FILE_RIGHTS, FS_RIGHTS, fs_mask
from backend.sandbox.plan import (
    ALL,
    READ,
    WRITE,
    Exclusion,
    PathRule,
    build_plan,
    carve,
    git_paths,
    read_roots,
)


def rights_of(rules: list[PathRule] | tuple[PathRule, ...]) -> dict[Path, frozenset[str]]:
    found: dict[Path, frozenset[str]] = {}
    for rule in rules:
        found[rule.path] = found.get(rule.path, frozenset()) | rule.rights
    return found


def repo(tmp_path: Path) -> Path:
    ws = tmp_path / "ws"
    (ws / ".git" / "hooks").mkdir(parents=True)
    (ws / "src" / "pkg").mkdir(parents=True)
    (ws / "README.md").write_text("x")
    (ws / "link").symlink_to(tmp_path)
    return ws


def test_a_grant_with_nothing_excluded_is_one_rule(tmp_path: Path) -> None:
    assert carve(tmp_path, ALL, [Exclusion(Path("/elsewhere"), ALL)]) == [PathRule(tmp_path, ALL)]


def test_git_keeps_reads_while_its_siblings_get_everything(tmp_path: Path) -> None:
    ws = repo(tmp_path)
    got = rights_of(carve(ws, ALL, [Exclusion(ws / ".git", WRITE)]))
    assert got[ws] == READ  # the root: readable and listable, no entry made or removed there
    assert got[ws / ".git"] == READ
    assert got[ws / "src"] == ALL
    assert got[ws / "README.md"] == ALL & FILE_RIGHTS  # edited in place, not replaced
    assert ws / "link" not in got  # a link gets nothing: its target is ruled by its own path
    assert ws / "src" / "pkg" not in got  # covered by src's rule


def test_a_protected_dir_gets_nothing_and_its_ancestors_only_listing(tmp_path: Path) -> None:
    ws = repo(tmp_path)
    data = ws / "src" / "data"
    data.mkdir()
    (data / "sylk.db").write_text("secret")
    got = rights_of(carve(ws, ALL, [Exclusion(data, ALL), Exclusion(ws / ".git", WRITE)]))
    assert data not in got and data / "sylk.db" not in got
    assert got[ws] == {"read_dir"} and got[ws / "src"] == {"read_dir"}
    assert got[ws / "src" / "pkg"] == ALL
    assert got[ws / ".git"] == READ


def test_reads_beneath_a_root_go_round_a_protected_file(tmp_path: Path) -> None:
    config = tmp_path / "home" / ".config" / "sylk"
    config.mkdir(parents=True)
    (config / "config.toml").write_text("key")
    (config.parent / "other.toml").write_text("fine")
    (tmp_path / "usr").mkdir()
    got = rights_of(carve(tmp_path, READ, [Exclusion(config / "config.toml", ALL)]))
    assert config / "config.toml" not in got
    assert got[config] == {"read_dir"} and got[tmp_path] == {"read_dir"}
    assert got[tmp_path / "usr"] == READ
    assert got[config.parent / "other.toml"] == READ & FILE_RIGHTS


def test_a_grant_inside_an_excluded_tree_loses_what_it_denies(tmp_path: Path) -> None:
    assert carve(tmp_path / "x", ALL, [Exclusion(tmp_path, ALL)]) == []
    assert rights_of(carve(tmp_path, ALL, [Exclusion(tmp_path, WRITE)])) == {tmp_path: READ}


def test_git_paths_follow_a_gitdir_file_and_a_link_but_only_inside(tmp_path: Path) -> None:
    ws = repo(tmp_path)
    assert git_paths(ws) == [ws / ".git"]
    (ws / ".git").rename(ws / "src" / "real-git")
    (ws / ".git").write_text("gitdir: src/real-git\n")
    assert git_paths(ws) == [ws / ".git", ws / "src" / "real-git"]
    (ws / ".git").unlink()
    (ws / ".git").symlink_to(ws / "src" / "real-git")
    assert git_paths(ws) == [ws / "src" / "real-git"]
    (ws / ".git").unlink()
    (ws / ".git").symlink_to(tmp_path)  # outside: writes there are refused anyway
    assert git_paths(ws) == []
    (ws / ".git").unlink()
    assert git_paths(ws) == []


def test_the_full_plan_mounts_instead_of_carving(tmp_path: Path) -> None:
    ws = repo(tmp_path)
    home = tmp_path / "home"
    home.mkdir()
    secret = tmp_path / "cfg"
    secret.mkdir()
    plan = build_plan("full", workspace=ws, home=home, protected=(secret, tmp_path / "missing"))
    got = rights_of(plan.rules)
    assert Path("/") not in got and got[Path("/usr")] == READ
    assert got[ws] == ALL and got[home] == ALL
    assert got[Path("/dev/null")] >= {"write_file", "truncate"}
    assert plan.readonly == (ws / ".git",) and plan.hidden == (secret,)
    assert not plan.network
    (secret / "sylk.db").write_text("archive")  # protected twice: the dir hides it
    nested = build_plan("full", workspace=ws, home=home, protected=(secret / "sylk.db", secret))
    assert nested.hidden == (secret,)


def test_the_landlock_plan_carves_and_none_plans_nothing(tmp_path: Path) -> None:
    ws, home = repo(tmp_path), tmp_path / "home"
    home.mkdir()
    (ws / "data").mkdir()
    plan = build_plan("landlock", workspace=ws, home=home, protected=(ws / "data",))
    got = rights_of(plan.rules)
    assert ws / "data" not in got and got[ws / ".git"] == READ and got[home] == ALL
    assert got[ws / "src"] == ALL and "make_reg" not in got[ws]
    assert not plan.readonly and not plan.hidden
    nothing = build_plan("none", workspace=ws, home=home)
    assert nothing.rules == () and nothing.network


def test_the_launchers_spec_is_plain_and_never_maps_to_root(tmp_path: Path) -> None:
    plan = build_plan("full", workspace=tmp_path, home=tmp_path)
    spec = plan.spec(["sh", "-c", "true"], tmp_path, 7)
    assert marshal.loads(marshal.dumps(spec)) == spec
    assert spec["inner_uid"] != 0 and spec["inner_gid"] != 0
    assert spec["inner_uid"] == (os.getuid() or 1000)


def test_rights_are_masked_to_the_kernels_abi() -> None:
    assert fs_mask(1) == (1 << 13) - 1
    assert fs_mask(2) == (1 << 14) - 1
    assert fs_mask(5) == fs_mask(7) == (1 << 16) - 1
    assert fs_mask(1, ["refer", "read_file"]) == 4
    assert set(FS_RIGHTS) == ALL and READ | WRITE == ALL and FILE_RIGHTS < ALL


def test_reads_reach_the_system_and_the_paths_installs_not_the_users_other_files(
    tmp_path: Path,
) -> None:
    ws = repo(tmp_path)
    tool = tmp_path / "tools" / "node-20"
    (tool / "bin").mkdir(parents=True)
    (tool / "lib").mkdir()
    path_env = os.pathsep.join([str(tool / "bin"), "relative/bin", "", "/usr/bin"])
    roots = read_roots(ws, path_env)
    assert tool in roots and tool / "bin" not in roots  # the prefix, once
    assert Path("/usr") in roots and Path("/usr/bin") not in roots
    assert Path("/") not in roots and tmp_path not in roots
    assert ws in roots
    plan = build_plan("full", workspace=ws, home=tmp_path / "h", path_env=path_env)
    readable = {r.path for r in plan.rules if "read_file" in r.rights}
    assert not any(tmp_path / "secrets" == p or p in (tmp_path / "secrets").parents
                   for p in readable)  # fmt: skip


def test_a_rule_path_with_a_link_in_it_opens_nothing(tmp_path: Path) -> None:
    """A component swapped for a link after the plan was made must not carry a grant."""
    from backend.sandbox.kernel import open_no_links

    (tmp_path / "real" / "sub").mkdir(parents=True)
    (tmp_path / "swapped").symlink_to(tmp_path / "real")
    fd = open_no_links(str(tmp_path / "real" / "sub"))
    os.close(fd)
    try:
        open_no_links(str(tmp_path / "swapped" / "sub"))
    except NotADirectoryError:
        pass
    else:
        raise AssertionError("walked through a link")
