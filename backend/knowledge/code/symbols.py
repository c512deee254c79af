"""Symbols and imports per language, for the code index.

Python goes through :mod:`ast`; JavaScript/TypeScript, Go and Rust through
line-anchored regexes plus a brace-depth scan that gives each definition its
enclosing class/impl/trait and its last line. Regexes can be fooled by
definitions inside strings or comments; the index trades that for speed and no
native dependencies. Import targets are candidate workspace paths worked out
from the importing file's path alone, so the index can resolve them in SQL.
"""

from __future__ import annotations

import ast
import posixpath
import re
import warnings
from bisect import bisect_right
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from typing import Any

from backend.knowledge.code.py_scan import from_targets, py_targets, python_rows

LANG_BY_EXT = {
    ".py": "python", ".pyi": "python",
    ".js": "javascript", ".jsx": "javascript", ".mjs": "javascript", ".cjs": "javascript",
    ".ts": "typescript", ".tsx": "typescript", ".mts": "typescript", ".cts": "typescript",
    ".go": "go", ".rs": "rust",
}  # fmt: skip
_UPPER = re.compile(r"^[A-Z][A-Z0-9_]*$")
_JS_EXTS = (".ts", ".tsx", ".js", ".jsx", ".mjs", ".d.ts")


@dataclass(frozen=True, slots=True)
class Symbol:
    name: str
    kind: str
    line: int
    end_line: int | None = None
    parent: str | None = None
    signature: str = ""


@dataclass(frozen=True, slots=True)
class Import:
    module: str
    line: int
    targets: tuple[str, ...] = ()


_ImportFn = Callable[[str, str, list[int]], list[Import]]


@dataclass(slots=True)
class Extracted:
    symbols: list[Symbol] = field(default_factory=list)
    imports: list[Import] = field(default_factory=list)


def extract(lang: str | None, path: str, text: str) -> Extracted:
    """Symbols and imports of ``text``, the file at workspace-relative ``path``."""
    if lang == "python":
        return _python(path, text)
    if lang in ("javascript", "typescript"):
        return _brace_lang(_JS, path, text, _js_imports)
    if lang == "go":
        return _brace_lang(_GO, path, text, _go_imports)
    if lang == "rust":
        return _brace_lang(_RUST, path, text, _rust_imports)
    return Extracted()


def _sig(lines: list[str], line: int) -> str:
    return lines[line - 1].strip()[:200] if 0 < line <= len(lines) else ""


# -- Python -----------------------------------------------------------------------


def _python(path: str, text: str) -> Extracted:
    found = python_rows(path, text)
    if found is None:
        return _python_ast(path, text)
    symbols = [Symbol(r[0], r[1], r[3], r[4], r[5], r[6]) for r in found[0]]
    return Extracted(symbols, [Import(*i) for i in found[1]])


def _python_ast(path: str, text: str) -> Extracted:
    try:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            tree = ast.parse(text)
    except (SyntaxError, ValueError):
        return Extracted()
    lines = text.splitlines()
    out = Extracted()
    _py_body(tree.body, None, lines, out.symbols)
    package = posixpath.dirname(path)
    for node in _statements(tree.body):
        if isinstance(node, ast.Import):
            for alias in node.names:
                out.imports.append(Import(alias.name, node.lineno, py_targets("", alias.name)))
        elif isinstance(node, ast.ImportFrom):
            names = [a.name for a in node.names]
            mod = node.module or ""
            if (targets := from_targets(package, node.level, mod, names)) is not None:
                out.imports.append(Import("." * node.level + mod, node.lineno, targets))
    return out


def _statements(body: list[Any]) -> Iterator[ast.AST]:
    """Every statement, nested blocks included; expressions are skipped (``ast.walk``
    visits them too and costs the index half its build time)."""
    for node in body:
        yield node
        for name in ("body", "orelse", "finalbody", "handlers", "cases"):
            block = getattr(node, name, None)
            if isinstance(block, list):
                yield from _statements(block)


def _py_body(body: list[ast.stmt], parent: str | None, lines: list[str], out: list[Symbol]) -> None:
    for node in body:
        if isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef):
            kind = "method" if parent else "function"
            line = node.lineno
            out.append(Symbol(node.name, kind, line, node.end_lineno, parent, _sig(lines, line)))
        elif isinstance(node, ast.ClassDef):
            sig = _sig(lines, node.lineno)
            out.append(Symbol(node.name, "class", node.lineno, node.end_lineno, parent, sig))
            _py_body(node.body, node.name, lines, out)
        elif parent is None and isinstance(node, ast.If | ast.Try):
            _py_body(node.body, None, lines, out)
            _py_body(node.orelse, None, lines, out)
            for handler in getattr(node, "handlers", []):
                _py_body(handler.body, None, lines, out)
        elif parent is None and isinstance(node, ast.Assign | ast.AnnAssign):
            targets = node.targets if isinstance(node, ast.Assign) else [node.target]
            for target in targets:
                if isinstance(target, ast.Name) and _UPPER.match(target.id):
                    sig = _sig(lines, node.lineno)
                    out.append(
                        Symbol(target.id, "constant", node.lineno, node.end_lineno, None, sig)
                    )


# -- brace languages ----------------------------------------------------------------


@dataclass(frozen=True, slots=True)
class _Lang:
    defs: tuple[tuple[re.Pattern[str], str], ...]
    containers: frozenset[str]
    tokens: re.Pattern[str]
    member: re.Pattern[str] | None = None
    top_level: tuple[tuple[re.Pattern[str], str], ...] = ()  # count only at brace depth 0


_M = re.MULTILINE
_PUB = r"(?:pub(?:\([^)\n]*\))?[ \t]+)?"
_JS_KEYWORDS = frozenset({"if", "for", "while", "switch", "catch", "return", "function", "with"})
_JS = _Lang(
    defs=(
        (re.compile(r"^[ \t]*(?:export[ \t]+)?(?:default[ \t]+)?(?:declare[ \t]+)?(?:async[ \t]+)?"
                    r"function\b[ \t]*\*?[ \t]*(?P<name>[A-Za-z_$][\w$]*)", _M), "function"),
        (re.compile(r"^[ \t]*(?:export[ \t]+)?(?:default[ \t]+)?(?:declare[ \t]+)?"
                    r"(?:abstract[ \t]+)?class[ \t]+(?P<name>[A-Za-z_$][\w$]*)", _M), "class"),
        (re.compile(r"^[ \t]*(?:export[ \t]+)?(?:declare[ \t]+)?interface[ \t]+(?P<name>[\w$]+)",
                    _M), "interface"),
        (re.compile(r"^[ \t]*(?:export[ \t]+)?(?:declare[ \t]+)?type[ \t]+(?P<name>[\w$]+)"
                    r"[ \t]*(?:<[^=\n]*>)?[ \t]*=", _M), "type"),
        (re.compile(r"^[ \t]*(?:export[ \t]+)?(?:declare[ \t]+)?(?:const[ \t]+)?enum[ \t]+"
                    r"(?P<name>[\w$]+)", _M), "enum"),
        (re.compile(r"^(?:export[ \t]+)?(?:const|let|var)[ \t]+(?P<name>[A-Za-z_$][\w$]*)[ \t]*"
                    r"(?::[^=\n]+)?=[ \t]*(?:async[ \t]+)?(?:function\b|\([^)\n]*\)[ \t]*"
                    r"(?::[^=\n]+)?=>|[A-Za-z_$][\w$]*[ \t]*=>)", _M), "function"),
        (re.compile(r"^(?:export[ \t]+)?const[ \t]+(?P<name>[A-Z][A-Z0-9_]*)\b", _M), "constant"),
    ),
    containers=frozenset({"class"}),
    tokens=re.compile(r"//[^\n]*|/\*.*?\*/|\"(?:\\.|[^\"\\\n])*\"|'(?:\\.|[^'\\\n])*'"
                      r"|`(?:\\.|[^`\\])*`|[{}\n]", re.S),
    member=re.compile(r"^[ \t]+(?:(?:public|private|protected|static|async|readonly|override|"
                      r"abstract|get|set)[ \t]+)*\*?[ \t]*(?P<name>#?[A-Za-z_$][\w$]*)[ \t]*"
                      r"(?:<[^>\n]*>)?[ \t]*\(", _M),
)  # fmt: skip
_GO = _Lang(
    defs=(
        (re.compile(r"^func[ \t]*\([ \t]*(?:\w+[ \t]+)?\*?[ \t]*(?P<parent>\w+)[^)\n]*\)[ \t]*"
                    r"(?P<name>\w+)", _M), "method"),
        (re.compile(r"^func[ \t]+(?P<name>\w+)", _M), "function"),
        (re.compile(r"^type[ \t]+(?P<name>\w+)(?:\[[^\]\n]*\])?[ \t]+"
                    r"(?P<kind>struct|interface)\b", _M), "type"),
        (re.compile(r"^type[ \t]+(?P<name>\w+)(?:\[[^\]\n]*\])?[ \t]+(?!struct\b|interface\b)",
                    _M), "type"),
        (re.compile(r"^const[ \t]+(?P<name>\w+)", _M), "constant"),
        (re.compile(r"^var[ \t]+(?P<name>\w+)", _M), "variable"),
    ),
    containers=frozenset(),
    top_level=(  # members of type ( ... ) / const ( ... ) / var ( ... ) blocks
        (re.compile(r"^\t(?P<name>\w+)(?:\[[^\]\n]*\])?[ \t]+(?P<kind>struct|interface)\b", _M),
         "type"),
        (re.compile(r"^\t(?P<name>[A-Za-z_]\w*)(?:[ \t]*,[ \t]*\w+)*(?:[ \t]+[\w.\[\]*]+)?"
                    r"[ \t]*=", _M), "constant"),
    ),
    tokens=re.compile(r"//[^\n]*|/\*.*?\*/|\"(?:\\.|[^\"\\\n])*\"|'(?:\\.|[^'\\\n])+'|`[^`]*`"
                      r"|[{}\n]", re.S),
)  # fmt: skip
_RUST = _Lang(
    defs=(
        (re.compile(rf"^[ \t]*{_PUB}(?:default[ \t]+)?(?:const[ \t]+)?(?:async[ \t]+)?"
                    r"(?:unsafe[ \t]+)?(?:extern[ \t]+\"[^\"\n]*\"[ \t]+)?fn[ \t]+(?P<name>\w+)",
                    _M), "function"),
        (re.compile(rf"^[ \t]*{_PUB}(?P<kind>struct|enum|trait|type|union)[ \t]+(?P<name>\w+)",
                    _M), "type"),
        (re.compile(rf"^[ \t]*{_PUB}(?:const|static)[ \t]+(?:mut[ \t]+)?(?P<name>\w+)[ \t]*:",
                    _M), "constant"),
        (re.compile(r"^[ \t]*(?:unsafe[ \t]+)?impl\b(?:[ \t]*<[^{\n]*?>)?[ \t]+(?:[\w:]+"
                    r"(?:<[^{\n]*?>)?[ \t]+for[ \t]+)?&?(?:dyn[ \t]+)?(?:\w+::)*(?P<name>\w+)", _M),
         "impl"),
        (re.compile(rf"^[ \t]*{_PUB}mod[ \t]+(?P<name>\w+)", _M), "module"),
        (re.compile(r"^[ \t]*macro_rules![ \t]*(?P<name>\w+)", _M), "macro"),
    ),
    containers=frozenset({"impl", "trait"}),
    tokens=re.compile(r"//[^\n]*|/\*.*?\*/|\"(?:\\.|[^\"\\])*\"|'(?:\\.|[^\\'\n])'|[{}\n]", re.S),
)  # fmt: skip


def _line_depths(lang: _Lang, text: str) -> list[int]:
    """Brace depth at the start of each line (index 0 = line 1), outside strings/comments."""
    depths = [0]
    depth = 0
    for m in lang.tokens.finditer(text):
        tok = m.group()
        if tok == "{":
            depth += 1
        elif tok == "}":
            depth = max(0, depth - 1)
        else:
            depths.extend([depth] * tok.count("\n"))
    return depths


def _end_line(depths: list[int], lines: list[str], line: int, stop: int) -> int:
    """Last line of the body opened at ``line``; ``line`` itself when no body opens before
    ``stop`` (the next definition) or within 30 lines."""
    start = depths[line - 1]
    if line < len(depths) and depths[line] == start and "{" in lines[line - 1]:
        return line  # a body opened and closed on its own line
    deeper = False
    for k in range(line, len(depths)):
        if depths[k] > start:
            deeper = True
        elif deeper:
            return k
        elif k + 1 >= stop or k - line > 30:
            return line
    return len(depths) if deeper else line


def _with_ends(found: dict[int, Symbol], depths: list[int], lines: list[str]) -> None:
    order = sorted(found)
    for here, after in zip(order, [*order[1:], len(depths) + 1], strict=False):
        sym = found[here]
        end = _end_line(depths, lines, here, after)
        found[here] = Symbol(sym.name, sym.kind, here, end, sym.parent, sym.signature)


def _brace_lang(lang: _Lang, path: str, text: str, imports: _ImportFn) -> Extracted:
    starts = [0] + [m.end() for m in re.finditer("\n", text)]
    lines = text.split("\n")
    depths = _line_depths(lang, text)
    found: dict[int, Symbol] = {}
    patterns = [(r, k, False) for r, k in lang.defs] + [(r, k, True) for r, k in lang.top_level]
    for regex, kind, top_only in patterns:
        for m in regex.finditer(text):
            line = bisect_right(starts, m.start())
            if line in found or (top_only and depths[line - 1] != 0):
                continue
            groups = m.groupdict()
            sym_kind = groups.get("kind") or kind
            parent = groups.get("parent")
            found[line] = Symbol(m["name"], sym_kind, line, None, parent, _sig(lines, line))
    _with_ends(found, depths, lines)
    containers = [s for s in found.values() if s.kind in lang.containers]
    for c in containers:
        if lang.member is None:
            break
        inner = depths[c.line - 1] + 1
        lo, hi = starts[c.line], starts[(c.end_line or c.line) - 1]
        for m in lang.member.finditer(text, lo, hi):
            line = bisect_right(starts, m.start())
            if line in found or depths[line - 1] != inner or m["name"] in _JS_KEYWORDS:
                continue
            found[line] = Symbol(m["name"], "method", line, None, c.name, _sig(lines, line))
    if lang.member is not None and containers:
        _with_ends(found, depths, lines)
    symbols = []
    for sym in sorted(found.values(), key=lambda s: s.line):
        parent = sym.parent
        if parent is None:
            depth = depths[sym.line - 1]
            for c in containers:
                if c.line < sym.line <= (c.end_line or 0) and depths[c.line - 1] == depth - 1:
                    parent = c.name
        kind = "method" if parent and sym.kind == "function" else sym.kind
        symbols.append(Symbol(sym.name, kind, sym.line, sym.end_line, parent, sym.signature))
    return Extracted(symbols, imports(path, text, starts))


# -- imports ------------------------------------------------------------------------

_JS_IMPORT = re.compile(
    r"^[ \t]*(?:import|export)\b[^'\";]*?(?:from[ \t]*)?['\"](?P<m>[^'\"\n]+)['\"]"
    r"|\b(?:require|import)\([ \t]*['\"](?P<r>[^'\"\n]+)['\"][ \t]*\)",
    _M,
)
_GO_IMPORT = re.compile(r"^import[ \t]+(?:[\w.]+[ \t]+)?\"(?P<m>[^\"]+)\"", _M)
_GO_BLOCK = re.compile(r"^import[ \t]*\((?P<body>.*?)^\)", _M | re.S)
_GO_SPEC = re.compile(r"^[ \t]*(?:[\w.]+[ \t]+)?\"(?P<m>[^\"]+)\"", _M)
_RUST_USE = re.compile(rf"^[ \t]*{_PUB}use[ \t]+(?P<m>[^;]+);", _M)
_RUST_MOD = re.compile(rf"^[ \t]*{_PUB}mod[ \t]+(?P<m>\w+)[ \t]*;", _M)


def _js_imports(path: str, text: str, starts: list[int]) -> list[Import]:
    out = []
    for m in _JS_IMPORT.finditer(text):
        module = m["m"] or m["r"]
        targets: tuple[str, ...] = ()
        if module.startswith("."):
            stem = posixpath.normpath(posixpath.join(posixpath.dirname(path), module))
            if not stem.startswith(".."):
                targets = (stem, *(stem + e for e in _JS_EXTS))
                targets += tuple(f"{stem}/index{e}" for e in _JS_EXTS)
        out.append(Import(module, bisect_right(starts, m.start()), targets))
    return out


def _go_targets(module: str) -> tuple[str, ...]:
    parts = module.split("/")
    return tuple("/".join(parts[k:]) + "/" for k in range(len(parts)))


def _go_imports(path: str, text: str, starts: list[int]) -> list[Import]:
    out = [
        Import(m["m"], bisect_right(starts, m.start()), _go_targets(m["m"]))
        for m in _GO_IMPORT.finditer(text)
    ]
    for block in _GO_BLOCK.finditer(text):
        for m in _GO_SPEC.finditer(text, block.start("body"), block.end("body")):
            out.append(Import(m["m"], bisect_right(starts, m.start()), _go_targets(m["m"])))
    return sorted(out, key=lambda i: i.line)


def _rust_dirs(path: str) -> tuple[str, str]:
    """(crate root dir, this file's module dir)."""
    parts = path.split("/")
    root = "/".join(parts[: len(parts) - parts[::-1].index("src")]) if "src" in parts[:-1] else ""
    here, name = posixpath.split(path)
    stem = name.removesuffix(".rs")
    moddir = here if stem in ("mod", "lib", "main") else posixpath.join(here, stem)
    return root or posixpath.dirname(path), moddir


def _rust_targets(path: str, module: str) -> tuple[str, ...]:
    root, moddir = _rust_dirs(path)
    head, _, rest = module.partition("::")
    base = {"crate": root, "self": moddir, "super": posixpath.dirname(moddir)}.get(head)
    if base is None:
        return ()
    prefix, _, group = rest.partition("{")
    segs = [s for s in prefix.split("::") if s and s != "*"]
    items = [g.strip().split("::")[0].split(" ")[0] for g in group.rstrip("}").split(",")]
    chains = [segs[:k] for k in range(1, len(segs) + 1)] + [[*segs, i] for i in items if i]
    out: list[str] = []
    for chain in chains:
        stem = posixpath.join(base, *chain) if base else "/".join(chain)
        out += [f"{stem}.rs", f"{stem}/mod.rs"]
    return tuple(out)


def _rust_imports(path: str, text: str, starts: list[int]) -> list[Import]:
    out = []
    for m in _RUST_USE.finditer(text):
        module = re.sub(r"\s+", "", m["m"])
        out.append(Import(module, bisect_right(starts, m.start()), _rust_targets(path, module)))
    _, moddir = _rust_dirs(path)
    for m in _RUST_MOD.finditer(text):
        stem = posixpath.join(moddir, m["m"])
        line = bisect_right(starts, m.start())
        out.append(Import(f"mod {m['m']}", line, (f"{stem}.rs", f"{stem}/mod.rs")))
    return sorted(out, key=lambda i: i.line)
