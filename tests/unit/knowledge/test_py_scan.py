"""The Python scanner gives the AST walk's symbols and imports, without the AST."""

from __future__ import annotations

from pathlib import Path

import pytest

from backend.knowledge.code.py_scan import scan
from backend.knowledge.code.symbols import Import, Symbol, _python, _python_ast

TRICKY = '''\
"""Module doc with def fake(): and class Fake: inside."""
import os, sys as system
from . import sibling
from ..pkg.mod import (a as b,  # comment
    c,
)
MAX_SIZE = 10; OTHER_ONE: int = 2
_PRIVATE = PUBLIC = 3
lower = 4
try: import fast
except ImportError: FAST = None
else: HAVE_FAST = True
finally: IGNORED_FINALLY = 1
if sys.platform == "x":
    def platform_only():
        """A docstring
at column zero, def not_a_symbol():
"""
        return (1,
  2)
elif True:
    class Inner:
        def method(self): return [
            1]
        class Nested:
            x = 1
else:
    WHATEVER = 1
for i in range(2):
    LOOP_CONST = 1
    def in_loop(): pass


@decorator(
    arg=1,
)
async def decorated(a: int = 1,
                    b="x:y") -> dict[str, int]:
    import inside_function
    s = """
def fake():
    pass
"""  # a comment
    return {}  # trailing


class Last(Base, metaclass=Meta):
    CONST_IN_CLASS = 1
    if True:
        def hidden(self): ...
    def last(self) -> None:
        x = lambda: 1
        y = {1: 2}[1]

        # a comment at the end
# a comment after
'''


def same(text: str) -> None:
    key = repr
    ast_found = _python_ast("pkg/sub/mod.py", text)
    scanned = _python("pkg/sub/mod.py", text)
    assert sorted(scanned.symbols, key=key) == sorted(ast_found.symbols, key=key)
    assert sorted(scanned.imports, key=key) == sorted(ast_found.imports, key=key)


def test_tricky_module_matches_the_ast_walk() -> None:
    assert scan(TRICKY) is not None
    same(TRICKY)
    names = {s.name for s in _python("m.py", TRICKY).symbols}
    assert {"MAX_SIZE", "OTHER_ONE", "PUBLIC", "FAST", "HAVE_FAST", "WHATEVER"} <= names
    assert not names & {"fake", "Fake", "not_a_symbol", "IGNORED_FINALLY", "LOOP_CONST"}


def test_end_lines_and_parents() -> None:
    found = {s.name: s for s in _python("m.py", TRICKY).symbols}
    assert found["platform_only"].end_line == 20
    assert found["method"] == Symbol(
        "method", "method", 23, 24, "Inner", "def method(self): return ["
    )
    assert found["Nested"].parent == "Inner"
    assert found["Last"].end_line == found["last"].end_line == 53
    assert "hidden" not in found


def test_imports_carry_candidate_paths() -> None:
    imports = {i.module: i for i in _python("pkg/sub/mod.py", TRICKY).imports}
    assert imports["..pkg.mod"] == Import(
        "..pkg.mod",
        4,
        (
            "pkg/pkg/mod.py", "pkg/pkg/mod/__init__.py", "pkg/pkg/mod.pyi",
            "pkg/pkg/mod/a.py", "pkg/pkg/mod/a/__init__.py", "pkg/pkg/mod/a.pyi",
            "pkg/pkg/mod/c.py", "pkg/pkg/mod/c/__init__.py", "pkg/pkg/mod/c.pyi",
        ),
    )  # fmt: skip
    assert "inside_function" in imports


@pytest.mark.parametrize(
    "text",
    [
        "try:\n    x = 1\nexcept* ValueError:\n    pass\n",  # except*: the AST decides
        "x = (1,\n",  # unbalanced: the AST decides (and finds nothing)
        "A = 1\r\nB = 2\r\n",
        "A = 1\fB = 2\n",
    ],
)
def test_what_it_cannot_follow_goes_to_the_ast(text: str) -> None:
    assert scan(text) is None
    same(text)


def test_the_backend_itself_scans_like_the_ast() -> None:
    root = Path(__file__).resolve().parents[3] / "backend"
    for path in sorted(root.rglob("*.py")):
        same(path.read_text(encoding="utf-8"))


@pytest.mark.parametrize(
    "text",
    [
        "class A:\n\tdef f(self):\n\t\treturn 1\n\tdef g(self):\n\t\tpass\n",  # tabs
        "def outer():\n    import json\n    def inner():\n        class Hidden:\n"
        "            pass\n    return inner\n\n\nLATER = 1\n",  # an import in a skipped body
        "def f():\n    s = '''\nclass NotReal:\n'''\n    return s\nclass Real:\n    pass\n",
        "if True:\n    def a(): pass\nelse:\n    def b(): pass\nfor x in y:\n    def c(): pass\n"
        "else:\n    def d(): pass\nwhile 0:\n    pass\nelse:\n    E = 1\n",
        "try:\n    pass\nfinally:\n    def hidden(): pass\nwith x:\n    def also_hidden(): pass\n",
        "def f(\n    a,\n    b,\n):\n    return (\n        a\n    )\n\n\n# trailing\n",
        "x = 1 \\\n    + 2\nY = [\n    1,  # comment ]\n]\nclass C: pass\n",
        "match = 1\ncase = 2\nmatch x:\n    case 1:\n        import inside_case\n",
    ],
)
def test_corner_cases_match_the_ast_walk(text: str) -> None:
    same(text)
