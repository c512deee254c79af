"""The Librarian's skills (local codebase knowledge), with real workspace handlers."""

from __future__ import annotations

from pydantic import Field

from backend.skills import workspace_read_ops as ops
from backend.skills.builtin_base import CONTEXTUAL, CORE, Params, declare
from backend.skills.models import Policy, Skill

AGENT = "librarian"
INDEX = "the Librarian's code index (pattern detection over the codebase)"


class PatternParams(Params):
    topic: str = Field(description="what kind of convention, e.g. 'error handling'")
    path: str = "."


def librarian_skills() -> list[Skill]:
    return [
        declare(
            "librarian.code.search", AGENT,
            "Search the codebase for text, a regex or symbol definitions. Returns file, line "
            "and the matching line for each hit.",
            ops.SearchCodeParams, ops.search_code, tier=CORE,
            tags=("search", "find", "grep", "where", "locate", "code", "symbol", "usage"),
            examples=[
                ("find where a function is defined", {"query": "def route", "file_glob": "*.py"}),
                ("grep TypeScript files for a word", {"query": "useState", "file_glob": "*.tsx"}),
                ("find class definitions named like Session",
                 {"query": "Session", "symbol_type": "type"}),
            ],
            policy=Policy(
                do=["narrow with file_glob when you know the language"],
                dont=["read whole files to find one symbol: search first"],
                edge_cases=["regex=true treats query as a Python regular expression"],
            ),
            guidance=[("librarian.file.read", "Read the file around a hit")],
        ),
        declare(
            "librarian.file.read", AGENT,
            "Get a file's contents from the workspace, optionally a line range.",
            ops.ReadFileParams, ops.read_file, tier=CORE,
            tags=("read", "file", "open", "cat", "view", "show", "contents"),
            examples=[("read a file", {"path": "README.md"}),
                      ("read lines 10 to 40", {"path": "src/app.py", "start_line": 10,
                                               "end_line": 40})],
            notes=("files over 256 KiB must be read by line range",),
        ),
        declare(
            "librarian.file.list", AGENT,
            "List workspace files matching a glob pattern (ignored and generated directories "
            "are skipped).",
            ops.ListFilesParams, ops.list_files, tier=CORE,
            tags=("list", "files", "ls", "glob", "directory", "show files"),
            examples=[("list Python files", {"pattern": "*.py"}),
                      ("list files under src", {"path": "src"})],
        ),
        declare(
            "librarian.code.structure", AGENT,
            "Get an overview of the codebase structure: a directory tree to a given depth with "
            "file counts.",
            ops.StructureParams, ops.structure, tier=CORE,
            tags=("structure", "overview", "organization", "tree", "layout", "architecture"),
            examples=[("overview of the repository", {"depth": 2}),
                      ("tree of one package", {"path": "backend", "depth": 3})],
        ),
        declare(
            "librarian.code.context", AGENT,
            "Get context about code: where a function, class or constant is defined, with its "
            "source lines.",
            ops.SymbolContextParams, ops.symbol_context, tier=CORE,
            tags=("context", "explain", "definition", "what is", "how does", "symbol", "source"),
            examples=[("show the definition of a class", {"symbol": "Gateway"}),
                      ("a function in one file", {"symbol": "main", "path": "app.py"})],
            notes=("Python definitions are exact (parsed); other languages match definition "
                   "keywords line by line",),
            guidance=[("librarian.code.dependencies", "See what the file imports and who "
                       "imports it")],
        ),
        declare(
            "librarian.code.dependencies", AGENT,
            "Analyse dependency relationships of a Python file: what it imports and which "
            "files import it.",
            ops.DependenciesParams, ops.dependencies, tier=CONTEXTUAL,
            triggers=(r"\bdepend", r"\bimport", r"\buses\b", r"\brequires?\b"),
            tags=("dependencies", "imports", "imported by", "uses", "graph", "requires"),
            examples=[("who imports this module", {"path": "backend/engine.py",
                                                   "direction": "imported_by"})],
            notes=("Python only for now; other languages need the code index",),
        ),
        declare(
            "librarian.code.patterns", AGENT,
            "Detect coding patterns and conventions in the codebase (naming, error handling, "
            "structure).",
            PatternParams, provider=INDEX, tier=CONTEXTUAL,
            triggers=(r"\bpattern", r"\bconvention", r"\bstyle\b", r"how do we"),
            tags=("patterns", "conventions", "style", "idioms"),
            examples=[("how errors are handled", {"topic": "error handling"})],
        ),
    ]  # fmt: skip
