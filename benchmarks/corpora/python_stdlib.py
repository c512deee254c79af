"""A corpus of Python standard-library functions, from their docstrings.

Source: the running interpreter's standard library (PSF licence), no install. Every
public function and method of public pure-Python modules (``os.path.join``,
``json.dumps``, ``shutil.copytree`` ...) whose docstring has a summary line and a body
becomes a tool: id ``json_dumps``, name ``json.dumps``, description = the docstring
*without its summary line*, then the signature's parameters. The query is the held-out
summary line ("Recursively copy a directory tree and return the destination directory.").

Weakness: summary lines are terse and in the library's own vocabulary; a docstring body
often restates the summary, which favours a lexical ranking more than real requests do.

    .venv/bin/python benchmarks/corpora/python_stdlib.py --out /work/bench-corpora/stdlib
"""

from __future__ import annotations

import argparse
import importlib
import inspect
import json
import pkgutil
import sys
import warnings
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent))

from corpus_io import clean, split_summary, tool_id, unique_queries, write_corpus

# Modules that start things, print, or are platform-specific when imported.
SKIP = {"antigravity", "this", "idlelib", "tkinter", "turtle", "turtledemo", "lib2to3", "test"}


def modules() -> list[Any]:
    found = []
    for info in sorted(pkgutil.iter_modules(), key=lambda i: i.name):
        name = info.name
        if name.startswith("_") or name in SKIP or name not in sys.stdlib_module_names:
            continue
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            try:
                found.append(importlib.import_module(name))
            except Exception:
                continue
    return found


def callables(module: Any) -> list[tuple[str, Any]]:
    out: list[tuple[str, Any]] = []
    names = getattr(module, "__all__", None) or [n for n in dir(module) if not n.startswith("_")]
    for name in sorted(set(names)):
        obj = getattr(module, name, None)
        if getattr(obj, "__module__", None) != module.__name__:
            continue
        if inspect.isfunction(obj):
            out.append((f"{module.__name__}.{name}", obj))
        elif inspect.isclass(obj):
            for attr, member in sorted(vars(obj).items()):
                if not attr.startswith("_") and inspect.isfunction(member):
                    out.append((f"{module.__name__}.{name}.{attr}", member))
    return out


def build(out: Path) -> dict[str, Any]:
    tools: list[dict[str, Any]] = []
    candidates: list[tuple[str, str]] = []
    seen: set[str] = set()
    for module in modules():
        for name, func in callables(module):
            doc = inspect.getdoc(func) or ""
            head, _, body = doc.partition("\n\n")
            if not body.strip() or tool_id(name) in seen:
                continue
            summary, _ = split_summary(head)
            if summary != clean(head):  # a multi-sentence first paragraph: keep it whole
                continue
            try:
                params = [p for p in inspect.signature(func).parameters if p != "self"]
            except (TypeError, ValueError):
                params = []
            seen.add(tool_id(name))
            description = f"{clean(body)} Parameters: {', '.join(params) or 'none'}."
            tools.append({"id": tool_id(name), "name": name, "description": description})
            candidates.append((summary, tool_id(name)))
    about = {
        "source": f"Python {sys.version.split()[0]} standard library docstrings (PSF licence)",
        "queries": "each function's docstring summary line, held out of the index",
    }
    return write_corpus(out, tools, unique_queries(candidates), about)


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--out", type=Path, required=True)
    summary = build(parser.parse_args().out)
    print(json.dumps({"n_tools": summary["n_tools"], "n_queries": summary["n_queries"]}))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
