"""Python symbols and imports from a logical-line scan, without building an AST.

``ast.parse`` cost the index five times a ``ctags -R`` of the same tree, nearly all
of it spent making objects for expressions the index never looks at. This scanner
splits the text into logical lines with one regular expression (strings, comments,
brackets and backslash continuations consumed inside the regex engine), then follows
block structure by indentation: the same symbols, lines, end lines and imports as
the AST walk in :mod:`~backend.knowledge.code.symbols` on valid code. What it cannot
follow (brackets nested deeper than it unrolls, ``except*``, a ``\\r``, a form
feed, unbalanced brackets) returns None and the caller parses with :mod:`ast`.
A file with a syntax error yields what its lines show, where the AST gave nothing.
"""

from __future__ import annotations

import posixpath
import re
from collections.abc import Iterable

from backend.knowledge.code.index_db import norm_name

_STR = (
    r"'''(?:[^'\\]++|\\.|'(?!''))*+'''"
    r'|"""(?:[^"\\]++|\\.|"(?!""))*+"""'
    r"|'(?:[^'\\\n]++|\\.)*+'"
    r'|"(?:[^"\\\n]++|\\.)*+"'
)
_IN = rf"[^()\[\]{{}}'\"#\\]++|{_STR}|#[^\n]*+|\\."


def _brackets(depth: int) -> str:
    inner = _IN if depth == 0 else f"{_IN}|{_brackets(depth - 1)}"
    return rf"[(\[{{](?:{inner})*+[)\]}}]"


_BRK = _brackets(7)
_LOGICAL = re.compile(
    r"(?:[ \t]*+(?:#[^\n]*+)?\n)*+"
    r"([ \t]*+)(?=([A-Za-z_]\w*+|))"
    rf"((?:[^\n'\"#\\()\[\]{{}} \t]++|[ \t]++(?=[^\s#])|{_STR}|\\\n|\\.|{_BRK})++)"
    r"[ \t]*+(?:#[^\n]*+)?(?:\n|\Z)",
    re.S,
)
_BODY_LINE = (
    rf"(?:[^\n'\"#\\()\[\]{{}} \t]++|[ \t]++(?=[^\s#])|{_STR}|\\\n|\\.|{_BRK})++"
    r"[ \t]*+(?:#[^\n]*+)?(?:\n|\Z)"
)
# A header line (its indent captured) and then every logical line indented deeper.
_DEEPER = re.compile(
    rf"( *+){_BODY_LINE}(?:(?:[ \t]*+(?:#[^\n]*+)?\n)*+\1 ++(?=[^\s#]){_BODY_LINE})*+", re.S
)


def _skip_block(text: str, header: int, after: int) -> int:
    """Where the logical lines indented deeper than the header line at ``header``
    (ending at ``after``) end, in one regex match; 0 when there are none, or when one
    is an ``import`` (which must be seen wherever it is)."""
    found = _DEEPER.match(text, header)
    end = found.end() if found else after
    if end <= after or text.find("import", after, end) != -1:
        return 0
    return end


_TAIL = re.compile(r"(?:[ \t]*+(?:#[^\n]*+)?(?:\n|\Z))*+\Z")
_TOP = re.compile(rf"{_STR}|{_BRK}|[;:=]|[^;:='\"()\[\]{{}}]++|.", re.S)
_HEAD = re.compile(r"(async[ \t]+)?(def|class)[ \t]+([A-Za-z_]\w*)")
_EXCEPT_STAR = re.compile(r"except\s*\*")
_UPPER = re.compile(r"[A-Z][A-Z0-9_]*")
_COMMENT = re.compile(r"#[^\n]*")
_NAME_ONLY = re.compile(r"\(*\s*([A-Za-z_]\w*)\s*\)*")
_COMPOUND = frozenset(
    {"if", "elif", "else", "try", "except", "finally", "for", "while", "with", "async"}
)
_DEFS = frozenset({"def", "class", "async"})
_KEYWORDS = _COMPOUND | _DEFS | {"match", "case"}
_MODULE_BLOCKS = frozenset({"if", "elif", "try", "except"})

# (kind, name, line, end_line, parent) and (module, line, level, names)
RawSymbol = tuple[str, str, int, int, "str | None"]
RawImport = tuple[str, int, int, tuple[str, ...] | None]
# The index's rows: (name, kind, path, line, end_line, parent, signature, norm) and
# (module, line, candidate paths)
SymbolRow = tuple[str, str, str, int, int | None, str | None, str, str]
ImportRow = tuple[str, int, tuple[str, ...]]
_MOD = object()  # the context of module-level statements (also inside if/try there)


def _top_split(body: str) -> list[tuple[str, int]]:
    """``body`` cut at top-level ``;``, ``:`` and ``=``: (piece or separator, offset)."""
    return [(m.group(), m.start()) for m in _TOP.finditer(body)]


def _statements(body: str) -> list[tuple[str, int]]:
    """The simple statements of ``body`` (split at top-level ``;``), with offsets."""
    if ";" not in body:
        return [(body, 0)]
    out, start = [], 0
    for tok, at in _top_split(body):
        if tok == ";":
            out.append((body[start:at], start))
            start = at + 1
    out.append((body[start:], start))
    return out


def _inline_body(body: str) -> tuple[str, int] | None:
    """What follows a compound header's colon on its own line, or None."""
    for tok, at in _top_split(body):
        if tok == ":" and not body.startswith("=", at + 1):
            return body[at + 1 :], at + 1
    return None


def _constants(stmt: str) -> list[str]:
    """The UPPER_CASE names an assignment statement binds (chained targets included)."""
    stripped = stmt.strip()
    if "=" not in stripped and ":" not in stripped:
        return []
    cuts: list[int] = []
    for tok, at in _top_split(stripped):
        if tok == ":" and not cuts:  # an annotated assignment: NAME: type [= value]
            m = _NAME_ONLY.fullmatch(stripped[:at])
            return [m[1]] if m and _UPPER.fullmatch(m[1]) else []
        if (
            tok == "="
            and stripped[at - 1] not in "=!<>:+-*/%&|^@~"
            and (not stripped.startswith("=", at + 1))
        ):
            cuts.append(at)
    names, start = [], 0
    for at in cuts:
        m = _NAME_ONLY.fullmatch(stripped[start:at])
        if m and _UPPER.fullmatch(m[1]):
            names.append(m[1])
        start = at + 1
    return names


def _import(stmt: str) -> list[tuple[str, int, tuple[str, ...] | None]]:
    """(module, level, names imported ``from`` it, or None for a plain ``import``)."""
    words = stmt.split(None, 1)
    if len(words) < 2 or words[0] not in ("import", "from"):
        return []
    rest = " ".join(_COMMENT.sub("", stmt).replace("\\\n", " ").split())
    if words[0] == "import":
        return [(p.split(" as ")[0].strip(), 0, None) for p in rest[7:].split(",")]
    head, sep, names = rest[5:].partition(" import")
    if not sep:
        return []
    head = head.strip()
    level = len(head) - len(head.lstrip("."))
    listed = names.strip().strip("()")
    return [
        (
            head[level:].strip(),
            level,
            tuple(n.strip().split(" as ")[0].strip() for n in listed.split(",") if n.strip()),
        )
    ]


def scan(text: str) -> tuple[list[RawSymbol], list[RawImport]] | None:
    """Symbols and imports of Python ``text``, or None when the AST must decide."""
    if "\r" in text or "\f" in text:
        return None
    symbols: list[RawSymbol] = []
    imports: list[RawImport] = []
    # open blocks: (indent, child context, symbol slot or -1, keyword)
    stack: list[tuple[int, object, int, str]] = []
    ends: dict[int, int] = {}
    line, pos, prev_end, n = 1, 0, 0, len(text)
    last_kw: dict[int, str] = {}
    match, count, tabs = _LOGICAL.match, text.count, "\t" in text
    while pos < n:
        m = match(text, pos)
        if m is None:
            if _TAIL.match(text, pos) is None:
                return None
            break
        indent, word, body = m.group(1, 2, 3)
        end = line + count("\n", pos, m.end(3))
        ind = len(indent.expandtabs(8)) if tabs else len(indent)
        while stack and stack[-1][0] >= ind:
            b_ind, _, slot, kw = stack.pop()
            if slot >= 0:
                ends[slot] = prev_end
            last_kw[b_ind] = kw
        ctx = stack[-1][1] if stack else _MOD
        if word in _KEYWORDS:
            if word == "except" and _EXCEPT_STAR.match(body):
                return None  # a TryStar, which the AST walk does not enter
            start = line + count("\n", pos, m.start(3))
            _keyword_line(
                word,
                body,
                ind,
                ctx,
                (start, end),
                stack=stack,
                last_kw=last_kw,
                out=(symbols, imports),
            )
        else:
            if ctx is _MOD or "import" in body:
                start = line + count("\n", pos, m.start(3))
                _simple(body, start, ctx, imports, symbols, inline=False)
            if body[-1] == ":":  # a header of a block the index does not follow
                stack.append((ind, None, -1, word))
        prev_end, line, pos = end, end + 1, m.end()
        if not tabs and stack and stack[-1][1] is None and stack[-1][0] == ind:
            skipped = _skip_block(text, m.start(1), pos)  # a body the index does not look into
            if skipped:
                _, _, slot, kw = stack.pop()
                prev_end = line + count("\n", pos, skipped) - (text[skipped - 1] == "\n")
                if slot >= 0:
                    ends[slot] = prev_end
                last_kw[ind] = kw
                line, pos = prev_end + 1, skipped
    while stack:
        _, _, slot, _ = stack.pop()
        if slot >= 0:
            ends[slot] = prev_end
    return _fill(symbols, ends), imports


def _keyword_line(
    word: str,
    body: str,
    ind: int,
    ctx: object,
    lines: tuple[int, int],
    *,
    stack: list[tuple[int, object, int, str]],
    last_kw: dict[int, str],
    out: tuple[list[RawSymbol], list[RawImport]],
) -> None:
    """A logical line opening with a keyword: a definition, a compound header (its
    block pushed on ``stack``, or its body on the same line), or a plain statement."""
    start, end = lines
    symbols, imports = out
    block = body[-1] == ":"
    head = _HEAD.match(body) if word in _DEFS else None
    if head is not None:
        child, slot = _definition(head, ctx, start, end, symbols)
        if block:
            stack.append((ind, child, slot, head[2]))
        else:
            _simple(body, start, None, imports, symbols, inline=True)
    elif word in _COMPOUND or block:
        kw, child_ctx = _header(word, last_kw.get(ind), ctx)
        if block:
            stack.append((ind, child_ctx, -1, kw))
        else:
            _simple(body, start, child_ctx, imports, symbols, inline=True)
        last_kw[ind] = kw
    else:
        _simple(body, start, ctx, imports, symbols, inline=False)


def _definition(
    head: re.Match[str], ctx: object, start: int, end: int, symbols: list[RawSymbol]
) -> tuple[object, int]:
    """A ``def``/``class`` line: its symbol (if the AST walk keeps one there) and the
    context its body gives: a class's name for its members, else nothing."""
    if ctx is None:
        return None, -1
    parent = None if ctx is _MOD else str(ctx)
    kind = "class" if head[2] == "class" else "method" if parent else "function"
    symbols.append((kind, head[3], start, end, parent))
    return (head[3] if head[2] == "class" else None), len(symbols) - 1


def _header(word: str, before: str | None, ctx: object) -> tuple[str, object]:
    """A compound header's keyword (``else`` told apart by what it follows) and its
    body's context: the module's only for if/elif/else/try/except at module level."""
    kw = word
    if word == "else":
        kw = "else-ok" if before in ("if", "elif", "try", "except") else "else"
    ok = ctx is _MOD and kw in (*_MODULE_BLOCKS, "else-ok")
    return kw, (_MOD if ok else None)


def _fill(symbols: list[RawSymbol], ends: dict[int, int]) -> list[RawSymbol]:
    return [
        (k, name, line, ends.get(i, end), parent)
        for i, (k, name, line, end, parent) in enumerate(symbols)
    ]


def _simple(
    body: str,
    start: int,
    ctx: object,
    imports: list[RawImport],
    symbols: list[RawSymbol],
    *,
    inline: bool,
) -> None:
    """The imports (anywhere) and module constants (where ``ctx`` is the module) of the
    simple statements in ``body``; ``inline``: the body after a compound header's colon."""
    if inline:
        found = _inline_body(body)
        if found is None:
            return
        rest, offset = found
        start += body.count("\n", 0, offset)
        body = rest
    want_const = ctx is _MOD
    if not want_const and "import" not in body:
        return
    for stmt, at in _statements(body):
        first = start + body.count("\n", 0, at + len(stmt) - len(stmt.lstrip()))
        if "import" in stmt and (found_imports := _import(stmt.strip())):
            imports.extend((mod, first, level, names) for mod, level, names in found_imports)
            continue
        if want_const:
            last = start + body.count("\n", 0, at + len(stmt.rstrip()))
            for name in _constants(stmt):
                symbols.append(("constant", name, first, last, None))


def py_targets(base: str, module: str) -> tuple[str, ...]:
    """The workspace paths ``module`` may be, below ``base`` (a directory or "")."""
    rel = "/".join(p for p in module.split(".") if p)
    stem = posixpath.join(base, rel) if base else rel
    if not stem:
        return ()
    return (f"{stem}.py", f"{stem}/__init__.py", f"{stem}.pyi")


def from_targets(
    package: str, level: int, mod: str, names: Iterable[str]
) -> tuple[str, ...] | None:
    """Candidate paths of ``from <level dots><mod> import <names>`` in ``package``;
    None when the dots climb above the workspace root."""
    base = ""
    if level:
        parts = package.split("/") if package else []
        up = level - 1
        if up > len(parts):
            return None
        base = "/".join(parts[: len(parts) - up])
    targets = list(py_targets(base, mod))
    targets += [t for name in names for t in py_targets(base, f"{mod}.{name}")]
    return tuple(targets)


def python_rows(path: str, text: str) -> tuple[list[SymbolRow], list[ImportRow]] | None:
    """:func:`scan`'s symbols and imports of the file at ``path`` as the index stores
    them, made straight from the scan (a build of the stdlib makes ~60 000 symbols);
    None when the AST must decide."""
    scanned = scan(text)
    if scanned is None:
        return None
    lines, package = text.splitlines(), posixpath.dirname(path)
    last = len(lines)
    symbols: list[SymbolRow] = [
        (n, k, path, ln, e, p, lines[ln - 1].strip()[:200] if 0 < ln <= last else "", norm_name(n))
        for k, n, ln, e, p in scanned[0]
    ]
    imports: list[ImportRow] = []
    for module, line, level, names in scanned[1]:
        targets = (
            py_targets("", module) if names is None else from_targets(package, level, module, names)
        )
        if targets is not None:
            imports.append(("." * level + module, line, targets))
    return symbols, imports
