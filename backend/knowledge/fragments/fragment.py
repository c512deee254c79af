"""Fragments: small markdown files of guidance with YAML frontmatter, and how to read one.

The Academic answers "what can be done" questions from a library of fragments in
the Orchestr8 style: each file says in its frontmatter what it is about (``tags``),
what it provides (``capabilities``) and when it helps (``useWhen``), so a query can
be matched without reading bodies. Parsing is strict about types and lenient about
omissions (``id`` defaults to the file name, ``category`` to the folder), because a
user's folder will hold hand-written files and one bad file must never take the
library down: :func:`parse_fragment` raises :class:`FragmentError` naming the file
and the problem, and the loader skips that file with a warning.
"""

from __future__ import annotations

import functools
import math
import re
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from backend.errors import SylkError

URI_PREFIX = "sylk://library/"
NAME = re.compile(r"^[a-z0-9][a-z0-9_-]{0,63}$")
CHARS_PER_TOKEN = 4
_FRONTMATTER = re.compile(r"\A---[ \t]*\r?\n(.*?)\r?\n---[ \t]*(?:\r?\n|\Z)", re.DOTALL)
_HEADING = re.compile(r"^#\s+(.+?)\s*$", re.MULTILINE)
_KNOWN_KEYS = frozenset(
    {"id", "category", "title", "tags", "capabilities", "useWhen", "estimatedTokens", "summary"}
)


class FragmentError(SylkError):
    """A fragment file cannot be used; the message names the file and the problem."""

    def __init__(self, path: Path, problem: str) -> None:
        super().__init__(
            f"{path}: {problem}",
            help_hint="a fragment starts with '---', a YAML mapping (id, tags, capabilities, "
            "useWhen, estimatedTokens), '---', then markdown",
        )
        self.path = path
        self.problem = problem


@dataclass(frozen=True)
class Fragment:
    """One unit of guidance, with the metadata a query is scored against."""

    id: str
    category: str
    title: str
    summary: str
    tags: tuple[str, ...]
    capabilities: tuple[str, ...]
    use_when: tuple[str, ...]
    estimated_tokens: int
    body: str
    path: Path
    builtin: bool = False
    # Lower-cased copies, so scoring does not re-normalise on every query.
    _tags_lc: tuple[str, ...] = field(default=(), repr=False, compare=False)
    _caps_lc: tuple[str, ...] = field(default=(), repr=False, compare=False)
    _use_lc: tuple[str, ...] = field(default=(), repr=False, compare=False)

    @property
    def uri(self) -> str:
        return fragment_uri(self.category, self.id)

    @property
    def key(self) -> str:
        """``category/id``: what makes a fragment unique in the library."""
        return f"{self.category}/{self.id}"


def fragment_uri(category: str, fragment_id: str) -> str:
    return f"{URI_PREFIX}{category}/{fragment_id}"


def estimate_tokens(text: str) -> int:
    """A model-free estimate (about four characters a token), never below one."""
    return max(1, math.ceil(len(text) / CHARS_PER_TOKEN))


def _str_list(path: Path, key: str, value: Any) -> tuple[str, ...]:
    if value is None:
        return ()
    if isinstance(value, str):
        value = [value]
    if not isinstance(value, list) or not all(isinstance(v, str | int | float) for v in value):
        raise FragmentError(path, f"'{key}' must be a list of strings, got {value!r}")
    out = tuple(str(v).strip() for v in value if str(v).strip())
    return out


def _name(path: Path, key: str, value: Any) -> str:
    if not isinstance(value, str) or not NAME.match(value):
        raise FragmentError(
            path,
            f"'{key}' must be lowercase letters, digits, '-' or '_' (at most 64), got {value!r}",
        )
    return value


def _section_bullets(body: str, heading: str) -> tuple[str, ...]:
    """Bullets under a ``## <heading>`` section: the seed's fallback for missing metadata."""
    match = re.search(
        rf"^##+\s+{heading}\s*$\n(.*?)(?=^#|\Z)", body, re.MULTILINE | re.DOTALL | re.IGNORECASE
    )
    if not match:
        return ()
    items = re.findall(r"^\s*[-*]\s+(.+?)\s*$", match.group(1), re.MULTILINE)
    return tuple(items)


def _first_paragraph(body: str) -> str:
    for block in re.split(r"\n\s*\n", body):
        text = block.strip()
        if text and not text.startswith(("#", "```", "-", "*", "|")):
            line = " ".join(text.split())
            sentence = re.split(r"(?<=[.!?])\s", line, maxsplit=1)[0]
            return sentence if len(sentence) <= 200 else sentence[:197].rstrip() + "..."
    return ""


@functools.cache
def _safe_loader() -> type[Any]:
    """libyaml's scanner when PyYAML was built with it (the same safe constructors, so the
    same values): the built-in library's frontmatter is parsed on its first read, ~8x
    faster. PyYAML itself loads then, not with every engine."""
    import yaml

    loader: type[Any] = getattr(yaml, "CSafeLoader", yaml.SafeLoader)
    return loader


def parse_fragment(
    text: str, path: Path, *, default_category: str, builtin: bool = False
) -> Fragment:
    """Read one fragment file's text; raise :class:`FragmentError` when it is unusable."""
    text = text.lstrip("\ufeff")
    match = _FRONTMATTER.match(text)
    if match is None:
        if text.startswith("---"):
            raise FragmentError(path, "the frontmatter is not closed by a '---' line")
        raise FragmentError(path, "no YAML frontmatter (the file must start with a '---' line)")
    import yaml  # loads with the first fragment read, not with the engine

    try:
        meta = yaml.load(match.group(1), Loader=_safe_loader())
    except yaml.YAMLError as exc:
        mark = getattr(exc, "problem_mark", None)
        where = f" at line {mark.line + 2}" if mark is not None else ""
        problem = getattr(exc, "problem", None) or str(exc).splitlines()[0]
        raise FragmentError(path, f"invalid YAML in the frontmatter{where}: {problem}") from exc
    if not isinstance(meta, dict):
        raise FragmentError(path, "the frontmatter must be a YAML mapping of fields")
    unknown = sorted(str(k) for k in meta if k not in _KNOWN_KEYS)
    if unknown:
        raise FragmentError(
            path, f"unknown field(s) {', '.join(unknown)}; known: {', '.join(sorted(_KNOWN_KEYS))}"
        )
    body = text[match.end() :].strip()
    if not body:
        raise FragmentError(path, "the fragment has no content after the frontmatter")

    frag_id = _name(path, "id", meta.get("id", path.stem.lower()))
    category = _name(path, "category", meta.get("category", default_category))
    heading = _HEADING.search(body)
    title = meta.get("title") or (heading.group(1) if heading else frag_id.replace("-", " "))
    if not isinstance(title, str):
        raise FragmentError(path, f"'title' must be a string, got {title!r}")
    tags = _str_list(path, "tags", meta.get("tags"))
    if not tags:  # the seed's fallback: words of the first heading
        tags = tuple(w for w in re.findall(r"[a-z0-9+#]+", title.lower()) if len(w) > 2)
    caps = _str_list(path, "capabilities", meta.get("capabilities"))
    caps = caps or _section_bullets(body, "capabilities")
    use = _str_list(path, "useWhen", meta.get("useWhen"))
    use = use or _section_bullets(body, "when to use")
    tokens = meta.get("estimatedTokens")
    if tokens is None:
        tokens = estimate_tokens(body)
    elif isinstance(tokens, bool) or not isinstance(tokens, int) or tokens <= 0:
        raise FragmentError(path, f"'estimatedTokens' must be a positive integer, got {tokens!r}")
    summary = meta.get("summary") or _first_paragraph(body) or (caps[0] if caps else title)
    if not isinstance(summary, str):
        raise FragmentError(path, f"'summary' must be a string, got {summary!r}")
    return Fragment(
        id=frag_id,
        category=category,
        title=title.strip(),
        summary=" ".join(summary.split()),
        tags=tags,
        capabilities=caps,
        use_when=use,
        estimated_tokens=tokens,
        body=body,
        path=path,
        builtin=builtin,
        _tags_lc=tuple(t.lower() for t in tags),
        _caps_lc=tuple(c.lower() for c in caps),
        _use_lc=tuple(u.lower() for u in use),
    )


def read_fragment(path: Path, *, default_category: str, builtin: bool = False) -> Fragment:
    """Read and parse a fragment file; any I/O or decoding problem is a FragmentError."""
    try:
        raw = path.read_bytes()
    except OSError as exc:
        raise FragmentError(path, f"cannot be read: {exc.strerror or exc}") from exc
    try:
        text = raw.decode("utf-8")
    except UnicodeDecodeError as exc:
        raise FragmentError(path, f"is not UTF-8 text (byte {exc.start})") from exc
    return parse_fragment(text, path, default_category=default_category, builtin=builtin)
