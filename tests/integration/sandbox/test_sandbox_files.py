"""From inside the sandbox, at each level: what a command may write, read and list.

Every attack is a real command through ``run_command_line``; every verdict is read
off the disk afterwards (the file is absent, the content unchanged), not off the
command's own word.
"""

from __future__ import annotations

import sys
from pathlib import Path

from tests.integration.sandbox.conftest import SECRET, Scene, git


async def test_nothing_is_written_outside_the_workspace(scene: Scene) -> None:
    target = scene.outside / "planted.txt"
    result = await scene.run(f"echo x > {target}; touch {scene.root}/beside.txt; mkdir ../up")
    assert result["exit_code"] != 0
    assert not target.exists() and not (scene.root / "beside.txt").exists()
    assert not (scene.root / "up").exists()


async def test_git_internals_cannot_be_written(scene: Scene) -> None:
    config = scene.workspace / ".git" / "config"
    before = config.read_text()
    command = (
        "echo 'echo pwned' > .git/hooks/pre-commit; chmod +x .git/hooks/pre-commit; "
        "printf '[core]\\n\\tfsmonitor = touch /tmp/pwned\\n' >> .git/config; "
        "git config core.hooksPath /tmp; rm -rf .git/refs; mv .git .git-old; "
        "rm -f .git/HEAD; ln -s /tmp .git/evil; "
        "ln .git/config src/cfg && echo '[alias] x = !touch /tmp/pwned' >> src/cfg; "
        "mv .git/config src/ ; cp -r .git src/g && echo y >> src/g/config"  # a copy is fine
    )
    await scene.run(command)
    hooks = scene.workspace / ".git" / "hooks"
    assert not (hooks / "pre-commit").exists()
    assert config.read_text() == before
    assert (scene.workspace / ".git" / "HEAD").is_file()
    assert not (scene.workspace / ".git-old").exists()
    assert not (scene.workspace / ".git" / "evil").exists()
    assert (scene.workspace / ".git" / "refs").is_dir()
    assert not (scene.workspace / "src" / "cfg").exists()  # no hard link out of .git


async def test_git_status_and_log_work_read_only(scene: Scene) -> None:
    (scene.workspace / "src" / "app.py").write_text("VALUE = 2\n")
    result = await scene.run("git status --porcelain && git log --oneline && git diff --stat")
    assert result["exit_code"] == 0, result["stderr"]
    assert "M src/app.py" in result["stdout"] and "first" in result["stdout"]


async def test_protected_paths_are_unreadable_inside_and_outside_the_workspace(
    scene: Scene,
) -> None:
    inner, outer = scene.inner_secret, scene.outer_secret
    command = (
        f"cat {inner}/sylk.db; cat .sylk-data/sylk.db; cat {outer}/config.toml; "
        f"grep -r {SECRET} . {outer} 2>&1; cp {outer}/config.toml src/; "
        f"tar cf - .sylk-data 2>&1 | strings; ls {outer}; ls .sylk-data; "
        f"cat sylk.toml; head -c 100 {scene.secret_file}; git show HEAD:src/app.py"
    )
    result = await scene.run(command)
    assert SECRET not in result["stdout"] + result["stderr"]
    assert not (scene.workspace / "src" / "config.toml").exists()
    if scene.level == "full":  # hidden under an empty, unreadable mount: not even names
        assert "sylk.db" not in result["stdout"] and "config.toml" not in result["stdout"]


async def test_protected_paths_cannot_be_written_or_replaced(scene: Scene) -> None:
    db, config = scene.inner_secret / "sylk.db", scene.outer_secret / "config.toml"
    command = (
        f"echo evil > {db}; echo 'base_url = \"http://evil\"' >> {config}; "
        f"rm -rf {scene.inner_secret}; mv .sylk-data gone; touch .sylk-data/new; "
        "echo 'base_url = \"http://evil\"' > sylk.toml; mv sylk.toml src/moved; "
        "rm -f sylk.toml"
    )
    result = await scene.run(command)
    assert result["exit_code"] != 0
    assert scene.secret_file.read_text() == f'api_key = "{SECRET}-file"\n'
    assert not (scene.workspace / "src" / "moved").exists()
    assert db.read_text() == SECRET + "-db"
    assert config.read_text() == f'api_key = "{SECRET}-key"\n'
    assert not (scene.workspace / "gone").exists()
    assert not (scene.inner_secret / "new").exists()


async def test_a_link_out_of_the_workspace_leads_nowhere_writable(scene: Scene) -> None:
    (scene.workspace / "src" / "out").symlink_to(scene.outside)
    (scene.workspace / "src" / "secret").symlink_to(scene.outer_secret / "config.toml")
    command = (
        "echo x > src/out/through-link.txt; ln -s "
        f"{scene.outside} src/mine && echo y > src/mine/through-new-link.txt; "
        f"cat src/secret; ln {scene.outer_secret}/config.toml src/hard; cat src/hard"
    )
    result = await scene.run(command)
    assert not any(scene.outside.iterdir())
    assert not (scene.workspace / "src" / "hard").exists()
    assert SECRET not in result["stdout"] + result["stderr"]


async def test_bash_c_wrapping_changes_nothing(scene: Scene) -> None:
    target = scene.outside / "wrapped.txt"
    config = scene.workspace / ".git" / "config"
    before = config.read_text()
    command = (
        f"bash -c 'bash -c \"echo x > {target}\"'; "
        f"sh -c 'echo y >> .git/config'; bash -lc 'cat {scene.outer_secret}/config.toml'"
    )
    result = await scene.run(command)
    assert not target.exists()
    assert config.read_text() == before
    assert SECRET not in result["stdout"] + result["stderr"]


async def test_ordinary_work_succeeds(scene: Scene) -> None:
    command = (
        "mkdir -p src/build/out && echo made > src/build/out/a.txt && "
        "mv src/build/out/a.txt src/ && "
        "echo edit >> README.md && rm src/a.txt && "
        f'{sys.executable} -c \'import pathlib; pathlib.Path("src/gen.py").write_text("x=1")\' '
        "&& echo tmp > $TMPDIR/t && cat $TMPDIR/t && echo hi > /dev/null && echo ok"
    )
    result = await scene.run(command)
    assert result["exit_code"] == 0, result["stderr"]
    assert result["stdout"].endswith("tmp\nok\n")
    assert (scene.workspace / "src" / "gen.py").read_text() == "x=1"
    assert (scene.workspace / "src" / "build" / "out").is_dir()
    assert (scene.workspace / "README.md").read_text() == "hello\nedit\n"


async def test_new_files_in_the_workspace_root(scene: Scene) -> None:
    # Full mode: anywhere. Landlock alone cannot grant a folder without what it holds,
    # so a root holding .git (or a protected dir) takes no new entry: the documented cost.
    result = await scene.run("touch new-in-root.txt")
    if scene.level == "full":
        assert result["exit_code"] == 0, result["stderr"]
        assert (scene.workspace / "new-in-root.txt").exists()
    else:
        assert result["exit_code"] != 0
        assert not (scene.workspace / "new-in-root.txt").exists()


async def test_pytest_runs_on_a_small_repository(scene: Scene) -> None:
    tests = scene.workspace / "tests"
    tests.mkdir()
    (tests / "test_app.py").write_text(
        "import sys\nsys.path.insert(0, 'src')\nfrom app import VALUE\n\n"
        "def test_value():\n    assert VALUE == 1\n\n"
        "def test_tmp(tmp_path):\n    (tmp_path / 'f').write_text('x')\n"
    )
    git(scene.workspace, "add", "tests")
    result = await scene.run(f"{sys.executable} -m pytest -q -p no:cacheprovider tests")
    assert result["exit_code"] == 0, result["stdout"] + result["stderr"]
    assert "2 passed" in result["stdout"]
    assert scene.level == result["sandbox"]


async def test_the_calls_temp_dir_is_gone_after_the_call(scene: Scene) -> None:
    result = await scene.run("echo $HOME; mkdir -p $TMPDIR/d && chmod 000 $TMPDIR/d")
    home = Path(result["stdout"].strip())
    assert home.name == "home" and home.parent.name.startswith("sylk-run-")
    assert not home.parent.exists()


async def test_files_beside_the_workspace_are_not_readable(scene: Scene) -> None:
    """Reads reach the system and the tools' installs, not the user's other files."""
    private = scene.outside / "id_rsa"
    private.write_text(SECRET + "-outside\n")
    result = await scene.run(f"cat {private}; cat ../outside/id_rsa; ls {scene.outside}")
    assert SECRET not in result["stdout"] + result["stderr"]
    assert "Permission denied" in result["stderr"]
    tools = await scene.run(f"{sys.executable} -c 'import json; print(json.dumps(1))'; ls /usr")
    assert tools["exit_code"] == 0, tools["stderr"]


async def test_a_hard_link_in_the_workspace_opens_no_other_name(scene: Scene) -> None:
    """Landlock rules hold inodes: a file rule on a hard-linked name would grant its other
    names, so such files get no rule (found by the escape corpus at the landlock level)."""
    original = scene.outside / "secret.txt"
    original.write_text(SECRET + "-linked\n")
    (scene.workspace / "src" / "linked.txt").hardlink_to(original)
    (scene.workspace / "rootlinked.txt").hardlink_to(original)
    result = await scene.run(f"cat {original}; echo pwned >> {original}")
    assert SECRET not in result["stdout"]
    assert original.read_text() == SECRET + "-linked\n"
