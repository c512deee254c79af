"""Name phrases: two adjacent words of an op's name, matched as one term.

An op named ``list_user_groups`` is found by "list users", by "user groups" and by "the
groups of a user" alike when its name is a bag of words. A request that says two of its
name's words *in its order* ("list user groups for a member") names it more precisely
than one that merely contains them, and catalogs of hundreds of similar operations
(``drive.files.list``, ``os.path.join``, ``delete_user`` / ``delete_user_policy``) depend
on that order. So each adjacent pair of an op's name words is indexed in the name field
as one joined term (``listus``, ``usergroup`` after stemming) and each adjacent pair of a
query's words is looked up the same way, at ``BM25Config.phrase_weight`` of a query word.

Pairs are formed after stop words and request filler are dropped ("list *the* users"
still pairs "list users"), from letters only (a digit would split the joined word again
when it is tokenised). Names of one or two words already carry their joined form as a
compound (``backend.terms.tokenize``) and get no pairs. Chosen on the tuning corpora
(benchmarks/RESULTS.md, "Generalisation across corpora").
"""

from __future__ import annotations

from itertools import pairwise

from backend.terms import QUERY_FILLER, STOP_WORDS, split_identifier, stem


def _pairs(words: list[str]) -> list[str]:
    return [a + b for a, b in pairwise(words) if (a + b).isalpha()]


def name_phrases(op: str) -> str:
    """The joined adjacent pairs of ``op``'s words after its domain, as one text for the
    name field ("" for a name of fewer than three words)."""
    words = [w for w in split_identifier(op.split(".", 1)[-1]) if w not in STOP_WORDS]
    return " ".join(_pairs(words)) if len(words) > 2 else ""


def query_phrases(query: str) -> list[str]:
    """The stemmed joined adjacent pairs of ``query``'s words, as the index holds them."""
    skip = STOP_WORDS | QUERY_FILLER
    words = [w for w in split_identifier(query) if w not in skip]
    return [stem(pair) for pair in _pairs(words)]
