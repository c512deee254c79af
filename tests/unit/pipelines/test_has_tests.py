"""Whether a project has a test suite of its own, per framework: the pipeline asks the
engineer for tests only where the project already keeps them."""

from __future__ import annotations

from pathlib import Path

from backend.pipelines.checks.test_targets import has_tests


def test_each_framework_sees_only_its_own_tests(tmp_path: Path) -> None:
    (tmp_path / "pkg").mkdir()
    (tmp_path / "pkg" / "calc.py").write_text("X = 1\n")
    assert not has_tests(tmp_path, "pytest")
    (tmp_path / "web").mkdir()
    (tmp_path / "web" / "app.test.ts").write_text("test('x', () => {})\n")
    assert has_tests(tmp_path, "jest") and not has_tests(tmp_path, "pytest")
    (tmp_path / "tests").mkdir()
    (tmp_path / "tests" / "test_calc.py").write_text("def test_x() -> None: ...\n")
    assert has_tests(tmp_path, "pytest")
    assert not has_tests(tmp_path, "go test")
    (tmp_path / "calc_test.go").write_text("package calc\n")
    assert has_tests(tmp_path, "go test")


def test_vendored_and_linked_tests_do_not_count(tmp_path: Path) -> None:
    (tmp_path / "node_modules" / "lib").mkdir(parents=True)
    (tmp_path / "node_modules" / "lib" / "x.test.js").write_text("")
    elsewhere = tmp_path.parent / f"{tmp_path.name}-elsewhere"
    elsewhere.mkdir()
    (elsewhere / "test_far.py").write_text("")
    (tmp_path / "linked").symlink_to(elsewhere)
    assert not has_tests(tmp_path, "jest")
    assert not has_tests(tmp_path, "pytest")
