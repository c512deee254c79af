"""The Librarian's skills (local codebase knowledge).

Given a :class:`~backend.knowledge.code.hub.CodeKnowledgeHub` the code ops answer
from the workspace's index; without one they scan the workspace's files.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from backend.skills.builtin.declare import CONTEXTUAL, CORE, declare
from backend.skills.builtin.librarian_index import IndexedLibrarian, PatternParams
from backend.skills.builtin.workspace import read as ops
from backend.skills.models import Handler, Policy, Skill

if TYPE_CHECKING:
    from backend.knowledge.code.hub import CodeKnowledgeHub

AGENT = "librarian"
INDEX = "the Librarian's code index (given to the engine's skills)"


def librarian_skills(code: CodeKnowledgeHub | None = None) -> list[Skill]:
    indexed = IndexedLibrarian(code) if code is not None else None
    search: Handler = indexed.search_code if indexed else ops.search_code
    context: Handler = indexed.symbol_context if indexed else ops.symbol_context
    structure: Handler = indexed.structure if indexed else ops.structure
    dependencies: Handler = indexed.dependencies if indexed else ops.dependencies
    return [
        declare(
            "librarian.code.search", AGENT,
            "Search the codebase for text, a regex or symbol definitions. Returns file, line "
            "and the matching line for each hit.",
            ops.SearchCodeParams, search, tier=CORE, entry_point=True,
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
            ops.StructureParams, structure, tier=CORE,
            tags=("structure", "overview", "organization", "tree", "layout", "architecture"),
            examples=[("overview of the repository", {"depth": 2}),
                      ("tree of one package", {"path": "backend", "depth": 3})],
        ),
        declare(
            "librarian.code.context", AGENT,
            "Get context about code: where a function, class or constant is defined, with its "
            "source lines.",
            ops.SymbolContextParams, context, tier=CORE,
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
            "Analyse dependency relationships of a file: what it imports and which files "
            "import it (Python, JavaScript/TypeScript, Go and Rust with the code index).",
            ops.DependenciesParams, dependencies, tier=CONTEXTUAL,
            triggers=(r"\bdepend", r"\bimport", r"\buses\b", r"\brequires?\b"),
            tags=("dependencies", "imports", "imported by", "uses", "graph", "requires"),
            examples=[("who imports this module", {"path": "backend/engine.py",
                                                   "direction": "imported_by"})],
            notes=("without the code index only Python files are analysed",),
        ),
        declare(
            "librarian.code.patterns", AGENT,
            "Detect coding patterns and conventions in the codebase (naming, error handling, "
            "structure).",
            PatternParams, indexed.patterns if indexed else None, provider=INDEX,
            tier=CONTEXTUAL,
            triggers=(r"\bpattern", r"\bconvention", r"\bstyle\b", r"how do we"),
            tags=("patterns", "conventions", "style", "idioms"),
            examples=[("how errors are handled", {"topic": "error handling"})],
        ),
    ]  # fmt: skip
