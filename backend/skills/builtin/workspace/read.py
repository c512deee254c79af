"""Read-only workspace ops: read, list, text search, structure, Python imports, definitions.

Real handlers over the session's workspace (``ctx.workspace``), confined by
:class:`~backend.workspace.files.Workspace` with the session's protected paths
(Sylk's own data) left out. The code search is a plain Python
scan of text files (no index) until the Librarian's index lands.
"""

from __future__ import annotations

import ast
import asyncio
import re
import stat
from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field

from backend.skills.builtin.workspace.scan import glob_match, read_text_file, walk_files
from backend.skills.envelopes import ErrorCode, SkillError
from backend.skills.models import Guidance, SkillContext, SkillResult
from backend.workspace.files import FileTooLargeError, Workspace


class _Params(BaseModel):
    model_config = ConfigDict(extra="forbid")


class ReadFileParams(_Params):
    path: str = Field(description="file path relative to the workspace root")
    start_line: int | None = Field(default=None, ge=1)
    end_line: int | None = Field(default=None, ge=1)


class ListFilesParams(_Params):
    pattern: str | None = Field(default=None, description="glob such as '*.py' or 'src/**/*.ts'")
    path: str = Field(default=".", description="directory to list under")
    limit: int = Field(default=200, ge=1, le=2000)


class SearchCodeParams(_Params):
    query: str = Field(min_length=1, description="text (or regex) to find")
    file_glob: str | None = Field(default=None, description="only files matching this glob")
    symbol_type: Literal["function", "type", "const", "var", "all"] = "all"
    regex: bool = False
    case_sensitive: bool = False
    limit: int = Field(default=50, ge=1, le=500)


class StructureParams(_Params):
    path: str = "."
    depth: int = Field(default=2, ge=1, le=6)


class DependenciesParams(_Params):
    path: str = Field(description="a Python file relative to the workspace root")
    direction: Literal["imports", "imported_by", "both"] = "both"


class SymbolContextParams(_Params):
    symbol: str = Field(min_length=1, description="a function, class or constant name")
    path: str | None = Field(default=None, description="limit the search to this file")
    max_lines: int = Field(default=40, ge=1, le=400)


def _ws(ctx: SkillContext) -> Workspace:
    return Workspace(ctx.workspace, protected=ctx.confinement.protected)


def _not_found(what: str) -> SkillError:
    return SkillError(ErrorCode.NOT_FOUND, f"{what!r} is not a file in the workspace")


def _existing_file(ws: Workspace, path: str) -> str:
    """``path``'s workspace-relative real name, if it is a regular file there."""
    st = ws.stat(path)
    if st is None or not stat.S_ISREG(st.st_mode):
        raise _not_found(path)
    return ws.relative(ws.resolve(path))


async def read_file(ctx: SkillContext, p: ReadFileParams) -> SkillResult:
    ws = _ws(ctx)
    rel = ws.relative(ws.resolve(p.path))
    try:
        text = await asyncio.to_thread(
            ws.read_text, p.path, start_line=p.start_line, end_line=p.end_line
        )
    except FileTooLargeError as exc:
        raise SkillError(
            ErrorCode.VALIDATION_ERROR,
            exc.message,
            details={"reason": "too_large", "size": exc.size,
                     "field_errors": [{"field": "start_line", "message": "required here"}]},
        ) from None  # fmt: skip
    return SkillResult(result={"path": rel, "content": text})


def _list(ctx: SkillContext, p: ListFilesParams) -> dict[str, Any]:
    files: list[str] = []
    truncated = False
    for rel in walk_files(_ws(ctx), p.path):
        if glob_match(rel, p.pattern):
            if len(files) == p.limit:
                truncated = True
                break
            files.append(rel)
    return {"files": files, "count": len(files), "truncated": truncated}


async def list_files(ctx: SkillContext, p: ListFilesParams) -> dict[str, Any]:
    return await asyncio.to_thread(_list, ctx, p)


_DEFINITIONS = {
    "function": r"\b(?:def|function|func|fn)\s+(?:\([^)]*\)\s*)?{name}",
    "type": r"\b(?:class|interface|type|struct|enum|trait)\s+{name}",
    "const": r"(?:\bconst\s+{name}|^\s*{name}\s*(?::[^=]+)?=)",
    "var": r"(?:\b(?:let|var)\s+{name}|^\s*{name}\s*(?::[^=]+)?=)",
}


def _matcher(p: SearchCodeParams) -> re.Pattern[str]:
    flags = 0 if p.case_sensitive else re.IGNORECASE
    needle = p.query if p.regex else re.escape(p.query)
    try:
        if p.symbol_type != "all":
            needle = _DEFINITIONS[p.symbol_type].format(name=f"\\w*(?:{needle})\\w*")
        return re.compile(needle, flags)
    except re.error as exc:
        raise SkillError(
            ErrorCode.VALIDATION_ERROR,
            f"bad regular expression: {exc}",
            details={"field_errors": [{"field": "query", "message": str(exc)}]},
        ) from None


def _search(ctx: SkillContext, p: SearchCodeParams) -> dict[str, Any]:
    matcher = _matcher(p)
    hits: list[dict[str, Any]] = []
    files = 0
    ws = _ws(ctx)
    for rel in walk_files(ws):
        if not glob_match(rel, p.file_glob):
            continue
        text = read_text_file(ws, rel)
        if text is None:
            continue
        files += 1
        for number, line in enumerate(text.splitlines(), 1):
            if matcher.search(line):
                hits.append({"path": rel, "line": number, "text": line.strip()[:240]})
                if len(hits) == p.limit:
                    return {"hits": hits, "files_scanned": files, "truncated": True}
    return {"hits": hits, "files_scanned": files, "truncated": False}


async def search_code(ctx: SkillContext, p: SearchCodeParams) -> SkillResult:
    found = await asyncio.to_thread(_search, ctx, p)
    guidance = []
    if found["hits"]:
        first = found["hits"][0]
        guidance.append(
            Guidance(
                op="librarian.file.read",
                prose="Read the surrounding lines of a hit",
                args={
                    "path": first["path"],
                    "start_line": max(1, first["line"] - 20),
                    "end_line": first["line"] + 40,
                },
            )
        )
    return SkillResult(result=found, guidance=guidance)


def _structure(ctx: SkillContext, p: StructureParams) -> dict[str, Any]:
    ws = _ws(ctx)
    base = ws.relative(ws.resolve(p.path))
    prefix = "" if base == "." else base + "/"
    dirs: dict[str, int] = {}
    shown: list[str] = []
    for rel in walk_files(ws, p.path):
        inner = rel[len(prefix) :].split("/")
        for depth in range(1, len(inner)):
            key = "/".join(inner[:depth]) + "/"
            dirs[key] = dirs.get(key, 0) + (1 if depth == len(inner) - 1 else 0)
        if len(inner) <= p.depth:
            shown.append("/".join(inner))
    lines = sorted(
        [d for d in dirs if d.count("/") <= p.depth] + shown, key=lambda s: s.rstrip("/")
    )
    tree = [
        f"{'  ' * (e.rstrip('/').count('/'))}{e.rstrip('/').rsplit('/', 1)[-1]}"
        + (f"/  ({dirs[e]} files)" if e.endswith("/") else "")
        for e in lines[:500]
    ]
    return {"root": base, "tree": tree, "truncated": len(lines) > 500}


async def structure(ctx: SkillContext, p: StructureParams) -> dict[str, Any]:
    return await asyncio.to_thread(_structure, ctx, p)


def _module_name(rel: str) -> str:
    parts = rel.removesuffix(".py").split("/")
    if parts[-1] == "__init__":
        parts = parts[:-1]
    return ".".join(parts)


def _imports(tree: ast.AST) -> list[str]:
    found: list[str] = []
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            found.extend(a.name for a in node.names)
        elif isinstance(node, ast.ImportFrom) and node.module and not node.level:
            found.extend(f"{node.module}.{a.name}" for a in node.names)
            found.append(node.module)
    return sorted(set(found))


def _parse(ws: Workspace, rel: str) -> ast.AST | None:
    text = read_text_file(ws, rel)
    if text is None:
        return None
    try:
        return ast.parse(text, filename=rel)
    except SyntaxError:
        return None


def _dependencies(ctx: SkillContext, p: DependenciesParams) -> dict[str, Any]:
    ws = _ws(ctx)
    rel = _existing_file(ws, p.path)
    if not rel.endswith(".py"):
        raise SkillError(
            ErrorCode.VALIDATION_ERROR,
            "only Python files are analysed so far; other languages need the Librarian's "
            "code index, which is not built yet",
            details={"reason": "unsupported_language"},
        )
    out: dict[str, Any] = {"path": rel, "module": _module_name(rel)}
    if p.direction in ("imports", "both"):
        tree = _parse(ws, rel)
        out["imports"] = sorted({i for i in _imports(tree)}) if tree else []
    if p.direction in ("imported_by", "both"):
        module, users = out["module"], []
        for other in walk_files(ws):
            if other.endswith(".py") and other != rel:
                tree = _parse(ws, other)
                if tree and any(i == module or i.startswith(module + ".") for i in _imports(tree)):
                    users.append(other)
        out["imported_by"] = users
    return out


async def dependencies(ctx: SkillContext, p: DependenciesParams) -> dict[str, Any]:
    return await asyncio.to_thread(_dependencies, ctx, p)


def _python_definitions(text: str, symbol: str) -> list[tuple[int, int]]:
    try:
        tree = ast.parse(text)
    except SyntaxError:
        return []
    spans = []
    for node in ast.walk(tree):
        if isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef | ast.ClassDef):
            if node.name == symbol:
                start = min([node.lineno, *(d.lineno for d in node.decorator_list)])
                spans.append((start, node.end_lineno or node.lineno))
        elif isinstance(node, ast.Assign | ast.AnnAssign):
            targets = node.targets if isinstance(node, ast.Assign) else [node.target]
            if any(isinstance(t, ast.Name) and t.id == symbol for t in targets):
                spans.append((node.lineno, node.end_lineno or node.lineno))
    return spans


def _symbol_context(ctx: SkillContext, p: SymbolContextParams) -> dict[str, Any]:
    ws = _ws(ctx)
    files = [_existing_file(ws, p.path)] if p.path is not None else list(walk_files(ws))
    pattern = re.compile(
        "|".join(d.format(name=re.escape(p.symbol)) + r"\b" for d in _DEFINITIONS.values())
    )
    found: list[dict[str, Any]] = []
    for rel in files:
        text = read_text_file(ws, rel)
        if text is None or p.symbol not in text:
            continue
        lines = text.splitlines()
        if rel.endswith(".py"):
            spans = _python_definitions(text, p.symbol)
        else:
            spans = [
                (i, i + p.max_lines - 1) for i, ln in enumerate(lines, 1) if pattern.search(ln)
            ]
        for start, stop in spans:
            last = min(stop, start + p.max_lines - 1)
            snippet = "\n".join(lines[start - 1 : last])
            found.append({"path": rel, "start_line": start, "end_line": last, "code": snippet})
        if len(found) >= 10:
            break
    return {"symbol": p.symbol, "definitions": found[:10]}


async def symbol_context(ctx: SkillContext, p: SymbolContextParams) -> dict[str, Any]:
    return await asyncio.to_thread(_symbol_context, ctx, p)
