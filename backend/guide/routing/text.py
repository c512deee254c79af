"""Text work for the pattern tier: normalising input, time scopes, identifiers, subjects.

Everything here is pure and cheap (regexes compiled once, set look-ups), so the
pattern tier stays in the tens of microseconds per request.
"""

from __future__ import annotations

import re
from collections.abc import Iterable
from dataclasses import dataclass, field

from backend.guide.routing.decision import Target


def _words(text: str) -> frozenset[str]:
    return frozenset(text.split())


# -- normalisation ------------------------------------------------------------------
# Common slips of the keyboard. A general list, not one tuned to any data set.
_TYPOS = {
    "teh": "the",
    "hte": "the",
    "adn": "and",
    "swtich": "switch",
    "swich": "switch",
    "implment": "implement",
    "impelment": "implement",
    "implemnt": "implement",
    "revew": "review",
    "reveiw": "review",
    "refacter": "refactor",
    "refactr": "refactor",
    "fucntion": "function",
    "functoin": "function",
    "funtion": "function",
    "sesion": "session",
    "sessoin": "session",
    "sesison": "session",
    "tets": "tests",
    "tset": "test",
    "pls": "please",
    "plz": "please",
    "u": "you",
    "ur": "your",
    "wheres": "where is",
    "whats": "what is",
    "hows": "how is",
    "thats": "that is",
    "dont": "do not",
    "doesnt": "does not",
    "didnt": "did not",
    "im": "i am",
    "ive": "i have",
}
_CONTRACTIONS = {
    "'s": " is",
    "'re": " are",
    "'m": " am",
    "'ve": " have",
    "'ll": " will",
    "'d": " would",
    "n't": " not",
}
_QUOTES = str.maketrans({"\u2018": "'", "\u2019": "'", "\u201c": '"', "\u201d": '"', "`": " "})
# "let's" is not "let is".
_CONTRACTION_RE = re.compile(r"\b(?!let's\b)(\w+)('s|'re|'m|'ve|'ll|'d|n't)\b")
_NOISE = str.maketrans({c: " " for c in '"()[]{}<>!?;,:'})


def spaced(pattern: str) -> str:
    """Rewrite a rule written with ``\\b`` for text padded with one leading space.

    A ``\\b`` opening a top-level alternative becomes a literal space and ``^``
    becomes `` (?<=^ )``. Every alternative then starts with the same literal, which
    the regex engine turns into a fast scan from word start to word start: about
    five times quicker than trying each alternative at every character.
    """
    out: list[str] = []
    depth, i, at_start, in_class = 0, 0, True, False
    while i < len(pattern):
        c = pattern[i]
        if at_start:
            at_start = False
            if pattern.startswith("\\b", i):
                out.append(" ")
                i += 2
                continue
            if c == "^":
                out.append(" (?<=^ )")
                i += 1
                continue
        if c == "\\":
            out.append(pattern[i : i + 2])
            i += 2
            continue
        if in_class:
            in_class = c != "]"
        elif c == "[":
            in_class = True
        elif c == "(":
            depth += 1
        elif c == ")":
            depth -= 1
        elif c == "|" and depth == 0:
            at_start = True
        out.append(c)
        i += 1
    return "".join(out)


def normalise(text: str) -> str:
    """Lower-case, straight quotes, typos and contractions expanded, punctuation to spaces.

    Dots, slashes, hyphens, underscores and ``#`` survive: they belong to paths,
    identifiers, versions and session references.
    """
    out = text.translate(_QUOTES).lower()
    if "'" in out:
        out = _CONTRACTION_RE.sub(lambda m: m.group(1) + _CONTRACTIONS[m.group(2)], out)
        out = out.replace("'", "")  # quotes and "let's": the rules read "lets"
    words = out.translate(_NOISE).split()
    if words:
        words[-1] = words[-1].rstrip(".")
    return " ".join([_TYPOS.get(w, w) for w in words if w])


# -- time scopes ----------------------------------------------------------------------
_NUMBERS = {
    "a": 1,
    "an": 1,
    "one": 1,
    "two": 2,
    "three": 3,
    "four": 4,
    "five": 5,
    "six": 6,
    "seven": 7,
    "eight": 8,
    "nine": 9,
    "ten": 10,
    "a couple of": 2,
    "couple of": 2,
    "a couple": 2,
}
_NUM = (
    r"(?P<n>\d{1,3}|a couple(?: of)?|couple of|an?|one|two|three|four|five|six|seven|eight"
    r"|nine|ten|a few|few|several)"
)
_UNIT = r"(?P<u>hour|day|week|month|year)s?"
_WEEKDAY = r"(?:monday|tuesday|wednesday|thursday|friday|saturday|sunday)"
_TIME_RULES: tuple[tuple[re.Pattern[str], str], ...] = tuple(
    (re.compile(spaced(pattern)), kind)
    for pattern, kind in (
        (rf"\b{_NUM} {_UNIT} ago\b", "count"),
        (
            rf"\b(?:in |over |during |within )?(?:the )?(?:last|past|previous) {_NUM} {_UNIT}",
            "count",
        ),
        (
            r"\b(?:in |over |during )?(?:the )?(?P<rel>last|this|past|previous)"
            r" (?P<u>week|month|year|quarter|sprint)\b",
            "rel",
        ),
        (r"\b(?:yesterday|last night)\b", "yesterday"),
        (
            r"\b(?:(?:earlier )?today|this (?:morning|afternoon|evening)|tonight"
            r"|before lunch|after lunch)\b",
            "today",
        ),
        (rf"\b(?:on |last |this )?{_WEEKDAY}\b", "last_7_days"),
        (
            r"\b(?:recent(?:ly)?|lately|the other day"
            r"|(?:in )?the (?:last|past) (?:few|couple of) days)\b",
            "recently",
        ),
    )
)


def time_scope(text: str) -> tuple[str | None, tuple[int, int] | None]:
    """The normalised time scope named in ``text`` and its span.

    ``text`` is normalised and padded with one leading space (see :func:`spaced`).

    "yesterday" -> yesterday, "this morning" -> today, "2 days ago" -> last_2_days,
    "last week" -> last_week, "recently"/"lately" -> recently, a weekday -> last_7_days.
    "before", "last time" and "a while back" name no time range: None.
    """
    for pattern, kind in _TIME_RULES:
        m = pattern.search(text)
        if m is None:
            continue
        if kind == "count":
            return _count_scope(m.group("n"), m.group("u")), m.span()
        if kind == "rel":
            rel = "last" if m.group("rel") in ("last", "past", "previous") else "this"
            return f"{rel}_{m.group('u')}", m.span()
        return kind, m.span()
    return None, None


def _count_scope(number: str, unit: str) -> str:
    n = int(number) if number.isdigit() else _NUMBERS.get(number)
    if n is None:  # "a few", "several"
        return "recently"
    if n == 1:
        return "yesterday" if unit == "day" else f"last_{unit}"
    return f"last_{n}_{unit}s"


# -- identifiers ----------------------------------------------------------------------
_IDENT_RE = re.compile(
    r"`([^`\n]{1,80})`"
    r"|(?<![\w/.-])("
    r"[A-Za-z_]\w*(?:\.[A-Za-z_]\w*)+"  # dotted: ModelClient.run, client.py
    r"|[A-Z][a-z0-9]+(?:[A-Z][a-z0-9]*)+"  # CamelCase
    r"|_*[a-z][a-z0-9]*(?:_[a-z0-9]+)+"  # snake_case
    r"|_[a-z][a-z0-9]*"  # _private
    r")(?![\w/])"
)
_HAS_CAMEL = re.compile(r"[a-z][A-Z]|[A-Z][a-z]+[A-Z]")
_FILE_EXTS = _words(
    "py pyi md toml json yaml yml txt cfg ini go rs ts js tsx jsx tcss css html sh sql lock"
)
_CAMEL_RE = re.compile(r"(?<=[a-z0-9])(?=[A-Z])")
_NON_WORD_RE = re.compile(r"[^a-z0-9]+")


def identifiers(original: str) -> list[str]:
    """Code identifiers in the user's own text (not file names), in order."""
    if not any(c in original for c in "_`.") and not _HAS_CAMEL.search(original):
        return []
    found = []
    for m in _IDENT_RE.finditer(original):
        ident = m.group(1) or m.group(2)
        if "." in ident and ident.rsplit(".", 1)[1].lower() in _FILE_EXTS:
            continue
        found.append(ident)
    return found


def snake(text: str) -> str:
    """``CreateSession`` -> create_session, ``ModelClient.run`` -> model_client_run."""
    return _NON_WORD_RE.sub("_", _CAMEL_RE.sub("_", text).lower()).strip("_")


# -- subjects -------------------------------------------------------------------------
# Words that never make up a subject: function words, question and request
# frames, generic verbs, and chatter.
_STOP = _words(
    """
    a an the this that these those it its our my your their his her we us i you me they
    them one ones some any all every each there here everything anything something
    is are was were be been being am do does did done doing have has had having will would
    should could can may might must shall
    what which who whom whose where when why how whether if then than so also just only
    really actually maybe please thanks thank hi hey ok okay yes no not now still again
    ever even already yet very quite much many more most less few lot lots bit
    show tell give find locate see look grep list explain describe walk through remind
    want need like know think mean say says said
    use used uses using handle handled handles deal dealt parse parsed parses
    define defined defines definition live lives happen happens happened get gets got go
    goes went make makes made take takes took work works worked working write writes
    written writing read reads import imports call calls called put puts structure
    set keep kept end up out turn turned succeed succeeded pass passed fail failed
    resolved solved fixed decide decided choose chose chosen pick picked settle settled
    usually typically normally generally currently exactly overall
    codebase repo repository project code base app sylk
    summary summarize overview history result results status outcome
    similar same comparable kind sort type before previously past previous last time
    while back ago let lets s off stopped stop leave
    implemented invalidated wired computed stored built loaded enforced
    """
)
# Once a subject has begun, these words end it ("errors in the adapters").
_QUALIFIERS = _words(
    "in of from to for on at with by after under since inside within across into over "
    "about between and or but as via per during around behind"
)
# Generic heads dropped from either end ("CreateUser function", "caching strategy").
_GENERIC = _words(
    "function functions file files class classes method methods code struct structs "
    "definition implementation strategy strategies approach approaches pattern patterns "
    "convention conventions framework frameworks library libraries tool tools stuff thing "
    "things part parts bit bits setup problem problems"
)
# Heads that open a compound name when a content word follows at once ("the code
# index", "the file watcher", "the history cache"), though alone they are no subject.
_COMPOUND_HEADS = _GENERIC | _words("code history status result results")
_WORD_RE = re.compile(r"[a-z0-9][a-z0-9_+#-]*(?:\.[a-z0-9_]+)*")
_MAX_WORDS = 3


def subject_from(text: str, spans: Iterable[tuple[int, int]]) -> str | None:
    """The subject left in normalised ``text`` once the matched frame ``spans`` are cut out."""
    chars = list(text)
    for start, end in spans:
        chars[start:end] = " " * (end - start)
    words: list[str] = []
    compound = False  # the subject opens with a head word that names something with the next
    found = _WORD_RE.findall("".join(chars))
    for at, word in enumerate(found):
        if not words and word in _COMPOUND_HEADS and _opens_compound(found, at):
            words.append(word)
            compound = True
            continue
        if word in _QUALIFIERS or word in _STOP:
            if words:
                break
            continue
        if not words and word in _GENERIC:  # "the thing that ...", "the code for ..."
            continue
        words.append(word)
        if len(words) == _MAX_WORDS:
            break
    while words and words[-1] in _GENERIC:
        words.pop()
    while not compound and words and words[0] in _GENERIC:
        words.pop(0)
    return snake("_".join(words)) or None


def _opens_compound(found: list[str], at: int) -> bool:
    """A head word starts a name when the next word is a content word of its own."""
    if at + 1 >= len(found):
        return False
    after = found[at + 1]
    return after not in _STOP and after not in _QUALIFIERS and after not in _COMPOUND_HEADS


# -- rules ----------------------------------------------------------------------------
@dataclass(frozen=True, slots=True)
class Rule:
    """One trigger: a regex over normalised, space-padded text, worth ``weight`` to ``target``.

    The regex is compiled on the first route, not at import: the rule tables are a few
    hundred alternatives, and a command that routes nothing (``sylk mcp serve``, a
    slash command) should not pay for them."""

    target: Target
    weight: float
    source: str  # the regex, already :func:`spaced`
    intent: str | None = None
    # Targets whose score this match cancels ("write tests" is not an Architect job).
    suppresses: frozenset[Target] = frozenset()
    # Halve the weight unless the text points into the codebase ("how does raft work").
    needs_anchor: bool = False
    compiled: re.Pattern[str] | None = field(default=None, compare=False, repr=False)

    @property
    def regex(self) -> re.Pattern[str]:
        compiled = self.compiled
        if compiled is None:  # a race compiles twice, to the same pattern: harmless
            compiled = re.compile(self.source)
            object.__setattr__(self, "compiled", compiled)
        return compiled


def rule(
    target: Target,
    weight: float,
    *alternatives: str,
    intent: str | None = None,
    suppresses: tuple[Target, ...] = (),
    needs_anchor: bool = False,
) -> Rule:
    """A :class:`Rule` matching any of ``alternatives`` (regexes written with ``\\b``)."""
    source = spaced("|".join(alternatives))
    return Rule(target, weight, source, intent, frozenset(suppresses), needs_anchor)
