"""Which tests a pipeline's modified files call for, on a real tree of files."""

from __future__ import annotations

from pathlib import Path

import pytest

from backend.pipelines.checks.results import CheckPathError
from backend.pipelines.checks.test_targets import relevant_tests


def _tree(root: Path, files: dict[str, str]) -> None:
    for rel, text in files.items():
        path = root / rel
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(text)


def test_python_by_name_by_import_and_tests_themselves(tmp_path: Path) -> None:
    _tree(tmp_path, {
        "pkg/calc.py": "", "pkg/other.py": "",
        "tests/test_calc.py": "", "tests/test_uses.py": "from pkg.calc import add\n",
        "tests/test_from_pkg.py": "from pkg import calc, other\n",
        "tests/test_unrelated.py": "import json\n", "tests/test_dotted.py": "import pkg.calc\n",
        ".venv/lib/test_calc.py": "", "node_modules/x/test_calc.py": "",
    })  # fmt: skip
    assert relevant_tests(tmp_path, ["pkg/calc.py"], "pytest") == [
        "tests/test_calc.py",
        "tests/test_dotted.py",
        "tests/test_from_pkg.py",
        "tests/test_uses.py",
    ]
    assert relevant_tests(tmp_path, ["tests/test_unrelated.py"], "pytest") == [
        "tests/test_unrelated.py"
    ]


def test_javascript_siblings_and_importers(tmp_path: Path) -> None:
    _tree(tmp_path, {
        "src/sum.js": "", "src/sum.test.js": "", "src/__tests__/sum.spec.ts": "",
        "test/uses.test.js": "import { sum } from '../src/sum.js'\n",
        "test/other.test.js": "const x = require('./other')\n",
    })  # fmt: skip
    assert relevant_tests(tmp_path, ["src/sum.js"], "jest") == [
        "src/__tests__/sum.spec.ts",
        "src/sum.test.js",
        "test/uses.test.js",
    ]


def test_go_packages_and_paths_outside(tmp_path: Path) -> None:
    assert relevant_tests(tmp_path, ["calc/calc.go", "main.go", "README.md"], "go test") == [
        ".",
        "./calc",
    ]
    with pytest.raises(CheckPathError):
        relevant_tests(tmp_path, ["../outside.py"], "pytest")


def test_a_linked_test_file_or_folder_is_not_followed(tmp_path: Path) -> None:
    outside = tmp_path / "outside"
    _tree(outside, {"tests/test_calc.py": "import pkg.calc\n"})
    ws = tmp_path / "ws"
    _tree(ws, {"pkg/calc.py": ""})
    (ws / "tests").symlink_to(outside / "tests")
    (ws / "test_link.py").symlink_to(outside / "tests/test_calc.py")
    assert relevant_tests(ws, ["pkg/calc.py"], "pytest") == []
