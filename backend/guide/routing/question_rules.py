"""Trigger tables for questions: research (Academic), this codebase (Librarian), history
(Archivalist), with the Librarian and Archivalist intents from the architecture seed.

Weights and conventions are described in :mod:`backend.guide.routing.rules`.
"""

from __future__ import annotations

from backend.guide.routing.decision import ArchivalistIntent as AI
from backend.guide.routing.decision import LibrarianIntent as LI
from backend.guide.routing.decision import Target as T
from backend.guide.routing.text import Rule
from backend.guide.routing.text import rule as _r

# "did the fix work", but not "what did the team work on".
_DID_OUTCOME = r"(?:work(?! on)|works|succeed|succeeded|pass|passed|fail|failed|go|land|help|break)"
_LANGUAGE = (
    r"(?:python|go|golang|rust|java|kotlin|scala|javascript|js|typescript|ts|node|c|c\+\+|cpp"
    r"|c#|csharp|ruby|php|swift|elixir|haskell|bash|sql)"
)
# What a run produces: "did the tests pass" asks for a result already recorded.
_RUN_NOUN = r"(?:tests?|test suite|test run|suite|build|ci|checks?|pipeline|benchmarks?)"
_CHANGE_VERB = (
    r"(?:change|changed|modif(?:y|ied)|touch|touched|edit|edited|update|updated|create|created"
    r"|add|added|delete|deleted|remove|removed|write|wrote|written)"
)

QUESTION_RULES: tuple[Rule, ...] = (
    # -- Academic: research, external knowledge, comparisons -------------------------
    _r(
        T.ACADEMIC,
        4,
        r"\bbest (?:practices?|way|approach|option|library|tool|framework)\b",
        r"\brecommended (?:way|approach|practice|library|pattern)\b|\bindustry[- ]standard\b",
        r"\bstate of the art\b|\bidiomatic (?:way|approach)\b",
        r"\bgood (?:way|approach|library|libraries|resources?|practice|reading)\b",
        r"\bmost efficient way\b",
    ),
    _r(
        T.ACADEMIC,
        4,
        r"\bhow (?:should|would|could|might) (?:i|we|you|one)\b",
        r"\bhow do (?:other|big|most|large|people|teams|companies)\b",
    ),
    _r(
        T.ACADEMIC,
        3,
        r"\bhow (?:do|can) i\b",
    ),
    _r(
        T.ACADEMIC,
        4,
        r"\b(?:vs\.?|versus)\b|\bcompar(?:e|ed|ing|ison)\b|\bpros and cons\b|\btrade-?offs?\b",
        r"\balternatives? (?:to|for)\b|\bdownsides? of\b|\b(?:sse|rest|grpc|\w+) or \w+ for\b",
    ),
    _r(
        T.ACADEMIC,
        5,
        r"\bdifference between\b",
    ),
    _r(
        T.ACADEMIC,
        4,
        r"\b(?:papers?|articles?|literature|research(?:ing)?|whitepapers?|blog posts?|tutorials?"
        r"|primer|reading on)\b",
        r"\blook up\b|\bresources? (?:for|on|to)\b|\blearn about\b",
    ),
    _r(
        T.ACADEMIC,
        4,
        r"\b(?:docs|documentation|guidelines|spec|rfc|pep \d+)\b(?= (?:say|says|on|for|about"
        r"|recommend))",
        r"\b(?:what does|according to) (?:the )?(?:\S+ ){0,3}(?:docs|documentation|guidelines"
        r"|spec|rfc|pep)\b",
        r"\bwhat does pep \d+\b",
    ),
    _r(
        T.ACADEMIC,
        2,
        r"\b(?:docs|documentation|guidelines|owasp)\b",
    ),
    _r(
        T.ACADEMIC,
        3,
        r"\bshould i (?:use|pick|choose|go with)\b",
        r"\b(?:is|are|would be) (?:the )?(?:best|better)\b|\bis it better to\b",
        r"\bwhen (?:should|would|do) (?:i|you|we) use\b",
        r"\bwhich (?:one|is (?:better|best|faster))\b",
        r"\b(?:faster|slower|better|worse|safer) than\b|\bdecide between\b|\bthoughts\b",
    ),
    _r(
        T.ACADEMIC,
        3,
        r"\brecommend\b|\bsuggest (?:a|an|some)\b|\bwhat is new in\b|\bpitfalls\b|\bgotchas\b",
        r"\bwhat algorithms?\b|\bwell known\b|\b(?:algorithm|theorem|protocol) for\b",
    ),
    _r(
        T.ACADEMIC,
        2,
        r"^tell me about\b|^what (?:is|are) (?:a|an|the)\b(?! (?:current )?(?:status|state|plan"
        r"|result))",
    ),
    # "how should I X in python": the language says general knowledge, not this codebase,
    # even when X is a test or a build verb.
    _r(
        T.ACADEMIC,
        2,
        r"\b(?:how (?:should|would|could) (?:i|we|you|one)|how (?:do|can) (?:i|you|one)"
        rf"|best (?:practices?|way)|idiomatic|recommended)\b(?=.{{1,80}} in {_LANGUAGE}\b)",
        suppresses=(T.TESTER, T.ARCHITECT),
    ),
    # -- Librarian: LOCATE -----------------------------------------------------------
    _r(
        T.LIBRARIAN,
        4,
        r"\bwhere (?:is|are|does|do (?:we|i|you)|can i find|abouts)\b(?! (?:i|we) (?:was|were"
        r"|left)| (?:we|things|you) (?:at|now)\b| stand\b| (?:we|things) stand\b)",
        intent=LI.LOCATE,
    ),
    _r(
        T.LIBRARIAN,
        4,
        r"\b(?:which|what) (?:file|files|module|modules|package|directory|folder|class"
        r"|function)\b(?= (?!do we\b|should\b))",
        r"\bin (?:which|what) (?:file|module|package|directory|folder)\b",
        intent=LI.LOCATE,
    ),
    _r(
        T.LIBRARIAN,
        4,
        r"\blocate\b|\bgrep\b|\bdefined\b|\bdefinition of\b",
        r"\b(?:usages?|callers|references) (?:of|to)\b|\blives\b|\bget defined\b|\bkept\b",
        intent=LI.LOCATE,
    ),
    _r(
        T.LIBRARIAN,
        4,
        r"\bfind\b(?= (?:the |all |every )?(?:\S+ )?(?:function|class|method|module|file|struct"
        r"|definition|usages?|callers|references|implementation)\b)",
        intent=LI.LOCATE,
    ),
    _r(
        T.LIBRARIAN,
        2,
        r"\bfind\b|\bshow me (?:the|where)\b|\bopen the\b",
        intent=LI.LOCATE,
    ),
    # "show me the existing middleware": what is already in the code, not a change.
    _r(
        T.LIBRARIAN,
        4,
        r"\bshow me (?:the |our |all (?:the )?)?(?:existing|current)\b",
        intent=LI.LOCATE,
    ),
    # -- Librarian: PATTERN ----------------------------------------------------------
    _r(
        T.LIBRARIAN,
        4,
        r"\bhow do we(?: (?:usually|normally|typically))?(?: (?:handle|deal with|do|structure"
        r"|manage|organi[sz]e|name|write|test|approach))?\b",
        r"\bhow are\b(?= (?:\S+ ){1,3}usually\b)|\bwhat\b(?= (?:\S+ )?patterns?\b)",
        r"\bdesign patterns?\b|\bconventions? for\b|\bnaming conventions?\b|\bstandard way\b",
        r"\bdo we (?:have|use|follow)\b|\bwhat approach does\b",
        intent=LI.PATTERN,
    ),
    _r(
        T.LIBRARIAN,
        4,
        r"\b(?:our|the codebase|the project|the repo)\b(?= (?:\S+ ){0,2}(?:strategy|approach"
        r"|conventions?|patterns?|standards?)\b)",
        intent=LI.PATTERN,
    ),
    # -- Librarian: EXPLAIN ----------------------------------------------------------
    _r(
        T.LIBRARIAN,
        4,
        r"\bhow does\b(?=.{1,60}\bwork(?:s|ing)?\b)",
        intent=LI.EXPLAIN,
        needs_anchor=True,
    ),
    _r(
        T.LIBRARIAN,
        4,
        r"\bexplain\b|\bwalk (?:me )?through\b|\bunder the hood\b",
        r"\bwhat (?:does|do)\b(?=.{1,40}\bdo\b)|\bwhy does\b",
        r"\bhow does\b(?=.{1,60}\b(?:get|gets|enforced|decide|handle|know)\b)",
        intent=LI.EXPLAIN,
        needs_anchor=True,
    ),
    _r(
        T.LIBRARIAN,
        4,
        r"\bhow (?:is|are)\b(?=.{1,50}\b(?:implemented|invalidated|handled|wired|computed|stored"
        r"|built|structured|loaded|initiali[sz]ed|parsed|used|enforced|called)\b)",
        r"\bwhat is (?:\S+ ){1,4}for$",
        intent=LI.EXPLAIN,
    ),
    # -- Librarian: GENERAL ----------------------------------------------------------
    _r(
        T.LIBRARIAN,
        3,
        r"\bwhat\b(?= (?:languages|dependencies|frameworks|libraries|packages|modules|screens"
        r"|endpoints|entry points)\b)",
        r"\blist (?:all|the|every)\b",
        r"\bhow many\b(?= (?:modules|files|classes|functions|lines|tests)\b)|\boverview of\b",
        r"\bwhich\b(?= python version)|\bexist in the code\b",
        r"\b(?:codebase|repo|project) (?:structure|layout)\b",
        intent=LI.GENERAL,
    ),
    # -- Archivalist: HISTORICAL -----------------------------------------------------
    _r(
        T.ARCHIVALIST,
        5,
        r"\bhow did (?:we|i|you)(?: (?:end up|eventually|finally))?(?: (?:handle|handling|fix"
        r"|fixing|solve|solving|deal with|do|implement|approach|tackle|set up|get around"
        r"|work around))?\b",
        r"\bwhat (?:approach|solution|fix|workaround|decision) did (?:we|i)\b",
        r"\bwhat was the (?:solution|fix|approach|reasoning|decision|workaround|rationale"
        r"|reason)\b",
        r"\bwhy did (?:we|i|you)\b|\bwhat did (?:we|i) (?:decide|settle on|choose|pick)\b",
        r"\blast time\b|\bpreviously\b|\bremind me (?:how|why|what)\b",
        r"(?<=\bin the )(?:old|past)\b",
        intent=AI.HISTORICAL,
    ),
    # -- Archivalist: ACTIVITY -------------------------------------------------------
    _r(
        T.ARCHIVALIST,
        4,
        r"\bwhat (?:has|have) (?:\S+ ){0,3}(?:happened|changed|been (?:doing|done|happening"
        r"|going on))\b",
        r"\bwhat (?:changed|happened)\b",
        r"\bwhat (?:was|got|were|has been) (?:changed|modified|done|updated|touched|added"
        r"|merged)\b",
        r"\brecent (?:changes|work|activity|commits)\b",
        r"\bwho (?:last )?(?:worked on|changed|touched|wrote|modified|edited)\b|\bhistory of\b",
        r"\bwork done\b",
        r"\bwhat did (?:we|i|you|they) (?:do|change|touch|modify|merge|ship|break)\b",
        r"\bbeen doing\b|\banything new\b",
        intent=AI.ACTIVITY,
    ),
    # "what files did we change": which files, asked about the past, is the record's job.
    _r(
        T.ARCHIVALIST,
        5,
        r"\b(?:which|what) files? (?:did|have|has|were|was|got)(?: (?:we|i|you|they|been))?"
        rf" {_CHANGE_VERB}\b",
        rf"\bfiles? (?:that )?(?:we|i|you|they) (?:have |had )?{_CHANGE_VERB}\b",
        intent=AI.ACTIVITY,
        suppresses=(T.LIBRARIAN,),
    ),
    # -- Archivalist: OUTCOME --------------------------------------------------------
    _r(
        T.ARCHIVALIST,
        4,
        rf"\bdid\b(?<!what did)(?= (?:the|it|that|this|our"
        rf"|my) (?:[\w.-]+ ){{0,4}}?{_DID_OUTCOME}\b)",
        r"\bresults? of\b|\bturn(?:ed)? out\b|\bcame out of\b",
        r"\bstatus(?: update)? (?:of|on|for)\b",
        r"\b(?:ever|been) (?:resolved|fixed|solved)\b|\bgo ok\b|\boutcome\b|\ba success\b",
        r"\bhow did (?:the|it|that)\b(?= (?:\S+ ){0,3}go\b)",
        intent=AI.OUTCOME,
    ),
    # A yes/no question about a run that is over: the Tester runs tests, the record says
    # how the last run went.
    _r(
        T.ARCHIVALIST,
        6,
        rf"^did\b(?= (?:all |any )?(?:(?:the|my|our|your|those|these|its|last) )?(?:\S+ )?"
        rf"{_RUN_NOUN} (?:\S+ )?(?:pass|passed|fail|failed|succeed|succeeded|break|go green"
        r"|go red|go through)\b)",
        intent=AI.OUTCOME,
        suppresses=(T.TESTER,),
    ),
    # -- Archivalist: SIMILAR --------------------------------------------------------
    _r(
        T.ARCHIVALIST,
        4,
        r"\bsimilar\b|\blike (?:this|that|it) before\b|\blike before\b",
        r"\bsame (?:\S+ )?(?:issue|problem|error|bug|failure|thing) as\b",
        r"\bsame (?:kind|sort|type) of\b|\bcomparable\b",
        r"\b(?:seen|hit|had|encountered|faced)\b(?= (?:\S+ ){0,3}before\b)",
        r"\bever (?:hit|seen|had|encountered)\b|\bhappen(?:ed)? before\b",
        r"\b(?:anything|something|problems?|issues?|errors?) like (?:this|that)\b",
        r"\blooks familiar\b",
        intent=AI.SIMILAR,
    ),
    # -- Archivalist: RECORD (a statement to keep, not a question) -------------------
    # Only at the start of the line: "we decided to use X" states a decision, while
    # "implement what we decided" is a request for work.
    _r(
        T.ARCHIVALIST,
        6,
        r"^(?:so |ok |okay )?(?:we|i) (?:have |just |finally )?decided (?:to|that|on|against)\b",
        r"^(?:please )?(?:remember|note|keep in mind|for the record) that\b",
        r"^(?:lesson learned|for future reference)\b",
        intent=AI.RECORD,
        suppresses=(T.ARCHITECT,),
    ),
    # -- Archivalist: RESUME ---------------------------------------------------------
    _r(
        T.ARCHIVALIST,
        5,
        r"\bwhere (?:was i|were we|did (?:we|i) (?:leave|stop)|(?:we|i) left off)\b|\bleft off\b",
        r"\bpick (?:up|back up) (?:from )?where\b",
        r"\bcontinue (?:from|where|with|the|my|our|working)\b",
        r"\bresume (?:my|our|the) (?:work|task|progress)\b",
        r"\bwhat was i (?:doing|working on|in the middle of)\b|\blast session\b",
        r"\bwhere (?:we|i) stopped\b|\bcarry on\b",
        r"\bwhere (?:do|does) (?:we|things|it|the work) stand\b",
        r"\bwhere are (?:we|things) (?:at|now)\b",
        r"\bcurrent (?:status|state)\b|\bstatus update\b(?! (?:of|on|for)\b)",
        intent=AI.RESUME,
    ),
    # -- Archivalist: GENERAL --------------------------------------------------------
    _r(
        T.ARCHIVALIST,
        3,
        r"\b(?:in|from) the archive\b",
        r"\b(?:past|previous)\b(?= (?:sessions?|decisions|work|projects?|issues)\b)",
        r"\bwhat did (?:we|the team|everyone|i) (?:learn|work on)\b",
        r"\bhow many\b(?= sessions did\b)|\bwhat did the team\b",
        r"\b(?:everything|all) we (?:learned|know|did)\b|\bdecisions (?:were|have been) made\b",
        intent=AI.GENERAL,
    ),
)
