"""The pattern tier's trigger tables (architecture seed, "The Guide: Universal Message Router").

Here: the Guide's own rules, requests for work (Architect, Inspector, Tester),
session commands typed as prose, and :data:`RULES`, everything in order. Questions
(Academic, Librarian, Archivalist) live in :mod:`backend.guide.routing.question_rules`.

Each rule is a regex over *normalised* text (see :func:`pattern_text.normalise`),
padded with one leading space (see :func:`pattern_text.spaced`), with a weight for
one target and, for the Librarian and Archivalist, one intent. A rule may also
*suppress* other targets: "write tests" matches the Architect's "write ..." too,
but the Tester rule cancels it.

Weights follow one scheme so the tables stay readable:

* 6 - greetings and help, and a session command (which stand alone);
* 5 - a frame that settles the question on its own ("how did we", "where was I");
* 4 - a question or request frame ("where is", "how does X work", "add ...");
* 3 - a topic word strongly tied to one agent ("coverage", "lint", "vs");
* 2 - a weaker topic or a frame that needs support;
* 1 - a faint cue.

A frame's span should cover only the frame words (lookaheads for the rest): the
spans are cut out of the text before the subject is read from what remains.
"""

from __future__ import annotations

import re

from backend.guide.routing.decision import Target as T
from backend.guide.routing.question_rules import QUESTION_RULES
from backend.guide.routing.text import Rule, spaced
from backend.guide.routing.text import rule as _r

_IMPERATIVE_PREFIX = (
    r"^(?:(?:please|kindly|ok|okay|so|now|then|also|and|actually|hey|right|alright|next)[ ,]+)*"
    r"(?:(?:can|could|would|will) you (?:please )?|lets |let us |"
    r"i (?:want|need|would like) (?:you )?to |we (?:need|want|should|have) to |"
    r"go ahead and |try to |help me |you should |time to )?"
)
_BUILD_VERBS = (
    r"(?:add|implement|refactor|fix|build|create|change|make(?! sure)|rename|remove|delete|"
    r"upgrade|migrate|set ?up|support|split|port|replace|generate|update|bump|extend|"
    r"integrate|convert|write|hook up|optimi[sz]e|move|wire|introduce|drop|enable|disable|"
    r"allow|plan|design|clean ?up|rewrite|restructure|improve|modify|adjust|tweak|use|"
    r"switch|install|deploy|ship|expose|speed up|do it)\b"
)
# Not followed by "/": "tests/" is a directory, not a request about tests.
_TEST_NOUN = (
    r"(?:tests?|test ?cases?|test suite|snapshots?|fixtures?|pytest\S*|coverage|specs?|"
    r"benchmarks?|unit tests?|e2e)\b(?!/)"
)

_GUIDE_RULES: tuple[Rule, ...] = (
    # -- Guide: greetings, help and capabilities ---------------------------------------
    _r(
        T.GUIDE,
        6,
        r"^(?:help|hi|hello|hey|yo|thanks|thank you|thx|ty|cheers|good (?:morning|afternoon"
        r"|evening))(?: (?:there|sylk|guide|me|please|a lot|so much))*$",
    ),
    _r(
        T.GUIDE,
        6,
        r"\bwhat can (?:you|this thing|sylk|this app) do\b",
        r"\bhow (?:do|can|should) i use (?:this|sylk|the app|you)\b|\bhow does sylk work\b",
        r"\b(?:which|what) agents (?:are|do you have)\b|^(?:show |what is the |system )?status$",
        r"\bwhat commands\b|\blist (?:the )?commands\b",
    ),
)

_REQUEST_RULES: tuple[Rule, ...] = (
    # -- Architect: implementation requests and plan flow ----------------------------
    _r(T.ARCHITECT, 4, _IMPERATIVE_PREFIX + _BUILD_VERBS),
    _r(
        T.ARCHITECT,
        3,
        r"\bplease (?:fix|add|implement|change|update|make|remove)\b",
        r"\b(?:can|could) you (?:\S+ ){0,2}(?:fix|add|implement|build|make|change)\b",
        r"\bneeds? (?:a|an|to be)\b|\bwe need\b|\bwe should\b|\band fix\b",
        r"\bfix (?:it|this|that|them)\b|\bbuild me\b",
    ),
    _r(
        T.ARCHITECT,
        3,
        r"^(?:stop|halt|cancel|abort|wait|go|continue)$|\bgo ahead\b|\bapprove(?:d)? the plan\b",
        r"\blooks good\b|\blgtm\b|\bproceed\b|\bship it\b|\btaking so long\b",
        r"\bwhat is the (?:progress|eta)\b|\bhow far along\b|\bi want to implement\b",
    ),
    _r(
        T.ARCHITECT,
        1,
        r"\b(?:bug|crash(?:es|ing)?|broken|feature|endpoint|button|flag|dashboard|shortcut"
        r"|off by one|too slow(?:ly)?)\b",
    ),
    # -- Inspector: review, lint, security, quality ----------------------------------
    _r(
        T.INSPECTOR,
        4,
        r"\b(?:review|code review|inspect|audit|lint|critique)\b",
        suppresses=(T.ARCHITECT,),
    ),
    _r(
        T.INSPECTOR,
        3,
        r"\b(?:linter|linting|ruff|mypy|pyright|flake8|pylint|type errors?|type[- ]check(?:ing)?"
        r"|strict[- ]clean|security|vulnerabilit(?:y|ies)|cve|injection|xss|csrf|secrets"
        r"|code quality|code smells?|static analysis|dead code|unused (?:imports?|variables?"
        r"|code|functions?)|race conditions?|thread[- ]safe|complexity|pep ?8|formatting"
        r"|findings|inspection|inspector|readability|style issues?|import contracts?|leak(?:ed"
        r"|ing|s)?|anti-?patterns?|docstrings?|correctness|any good)\b",
    ),
    _r(
        T.INSPECTOR,
        4,
        r"\bcheck (?:my|the|this|our) (?:code|changes|diff|work|implementation|pr)\b",
        r"\bcheck (?:for|the code for)\b",
        r"\bcheck\b(?= (?:the )?(?:\S+ ){0,3}(?:for|complexity|formatting)\b)|\blook over\b",
        r"\blook for\b|\bwhat is wrong\b",
        r"\bis (?:the|this|my) (?:\S+ ){0,4}(?:correct|safe|secure|clean|idiomatic)\b",
        r"\b(?:does|do) (?:this|the|my|it) (?:\S+ ){0,3}follow\b|\bmake sure\b|\bvalidate\b",
        r"\bverify\b|\bevaluate\b|\bscan (?:for|the)\b|\bany (?:bugs|issues|problems|concerns)\b",
        r"\bignore (?:the )?\S+ (?:\S+ )?for now\b|\blint pass\b",
        suppresses=(T.ARCHITECT,),
    ),
    # -- Tester: writing, running and reading tests ----------------------------------
    _r(
        T.TESTER,
        5,
        rf"\b(?:write|add|create|generate|make|run|rerun|re-run|execute|update|set ?up|configure"
        rf"|increase|improve|need|want|propose|mock)\b(?=(?: \S+){{0,5}}? {_TEST_NOUN})",
        r"^test\b",
        suppresses=(T.ARCHITECT, T.INSPECTOR),
    ),
    _r(
        T.TESTER,
        3,
        r"\b(?:tests?|testing|test suite|test plan|test cases?|pytest\S*|unittest|coverage"
        r"|covered|flaky|snapshots?|fixtures?|mocks?|fuzz(?:ing)?|e2e|end[- ]to[- ]end"
        r"|regression tests?|property[- ]based|test_\w+)\b(?!/)",
    ),
    _r(
        T.TESTER,
        4,
        r"\b(?:failing|failed|fail(?:s|ed)?|red|green|passing|pass(?:es)?"
        r"|broke)\b(?=.{0,30}\btest)",
        r"\b(?:tests?|test_\w+)\b(?= (?:\S+ ){0,3}(?:failing|fail|failed|pass|passing|red|green"
        r"|flaky|broken|broke))",
        r"\bis (?:the|this) (?:\S+ ){0,2}covered\b|\bskip (?:the )?tests\b|\brerun\b",
        r"\btest (?:plan|issue|failure)\b|\b(?:test|code) coverage\b",
        r"\bcoverage (?:report|of|for)\b",
        r"\b(?:verify|check|confirm) (?:\S+ ){0,4}(?:with|by) (?:a |some )?tests?\b",
        r"\btests? (?:\S+ ){0,2}pass\b",
        suppresses=(T.INSPECTOR,),
    ),
)

# Order matters only for ties between intents: the earlier rule wins.
RULES: tuple[Rule, ...] = (*_GUIDE_RULES, *QUESTION_RULES, *_REQUEST_RULES)


# Text that points into this codebase: "the", "our", paths, "in this repo".
ANCHOR = re.compile(
    spaced(r"\b(?:the|our|this|these|we|us|my|here|repo|codebase|project)\b|[/_]|\.py\b")
)

# -- session commands in free text ---------------------------------------------------
_REF = r"#?(?P<ref>[\w.-]+)"


def _verb(*alternatives: str) -> re.Pattern[str]:
    return re.compile(spaced("|".join(alternatives)))


SESSION_VERBS: tuple[tuple[str, re.Pattern[str]], ...] = (
    (
        "switch",
        _verb(
            rf"\b(?:switch|swap|change|go|jump|move|flip|return|head|take me)(?: back"
            rf"| over)? to (?:the )?(?:session(?: number)? {_REF}|(?P<sess>sess_\w+)"
            rf"|(?P<named>[\w.-]+) session\b)",
        ),
    ),
    (
        "new",
        _verb(
            r"(?<!the )\b(?:(?:a |an )?(?:new|fresh|another|separate) session\b(?! (?:flow|screen"
            r"|dialog|modal|button|tab|model|code|logic|command|manager|handling|parser|names?))"
            r"|(?:start|open|create|begin|spin up) (?:a |an )?session\b)(?: (?:called"
            r"|named) (?P<ref>[\w.-]+)| (?P<named>[\w.-]+)$)?",
        ),
    ),
    (
        "list",
        _verb(
            r"\b(?:list|show|see)(?: me)?(?: all| my| the)* sessions\b|\b(?:which|what) sessions\b",
            r"\bhow many sessions (?:do|are|have) i\b|^sessions$",
        ),
    ),
    (
        "suspend",
        _verb(
            rf"\b(?:suspend|pause|park|shelve)(?: (?:this|the|my|current))? session(?: {_REF})?\b",
            r"\b(?:put|leave) (?:this|the) session on hold\b",
            r"\b(?:suspend|park|shelve) (?:this|it)\b",
        ),
    ),
    (
        "resume",
        _verb(
            rf"\bresume (?:the )?(?:suspended |paused |last )?session(?: {_REF})?\b",
            r"\bresume (?:the )?(?P<named>[\w.-]+) session\b",
        ),
    ),
    (
        "complete",
        _verb(
            rf"\b(?:complete|finish|close|end|wrap up|done with|finished with)(?: (?:this|the|my"
            rf"|current))? session(?: {_REF})?\b",
            r"\bmark (?:this|the) session as (?:complete|done|finished)\b|\bclose it out\b",
        ),
    ),
)
