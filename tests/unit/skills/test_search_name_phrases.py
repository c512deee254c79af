"""Name phrases: a request that says two of an op's name words in the name's order finds
that op before one whose name holds the same words in another order.

Real catalogs are full of such neighbours (``list_user_policies`` / ``list_policy_users``,
``get_bucket_policy`` / ``put_bucket_policy_status``); a bag of words cannot tell them
apart, and their descriptions often share every word too.
"""

from __future__ import annotations

from typing import Any

from pydantic import BaseModel, ConfigDict

from backend.skills.models import Skill, SkillContext, SkillResult, SkillTier
from backend.skills.registry import Registry
from backend.skills.search.bm25 import BM25Config
from backend.skills.search.fields import skill_fields
from backend.skills.search.phrases import name_phrases, query_phrases
from backend.skills.search.skill_index import SkillIndex
from backend.terms import tokenize


class NoParams(BaseModel):
    model_config = ConfigDict(extra="forbid")


async def _noop(ctx: SkillContext, params: Any) -> SkillResult:
    return SkillResult(result=None)


def _skill(op: str, description: str) -> Skill:
    return Skill(
        op=op,
        agent="tester",
        description=description,
        params=NoParams,
        handler=_noop,
        tier=SkillTier.SPECIALISED,
    )


CATALOG = {
    "iam.list_user_policies": "Lists the policies of users in the account.",
    "iam.list_policy_users": "Lists the users of policies in the account.",
    "iam.delete_user": "Deletes a user of the account.",
    "iam.get_account_summary": "Counts users, groups, roles and policies of the account.",
}


def _index(config: BM25Config | None = None) -> SkillIndex:
    registry = Registry()
    registry.register_all([_skill(op, text) for op, text in CATALOG.items()])
    return SkillIndex(registry, config)


def _ranked(index: SkillIndex, query: str) -> list[str]:
    return [op for op, _ in index.search(query)]


def test_the_names_word_order_decides_between_two_ops_with_the_same_words() -> None:
    index = _index()
    assert _ranked(index, "list the user policies")[0] == "iam.list_user_policies"
    assert _ranked(index, "which policy users are there")[0] == "iam.list_policy_users"
    # Without phrases the two tie on words and the order is the ids' order.
    plain = _index(BM25Config(phrase_weight=0))
    first = _ranked(plain, "list the user policies")[:2]
    assert first == _ranked(plain, "which policy users are there")[:2]


def test_pairs_skip_stop_words_filler_and_the_domain_and_stem_like_the_index() -> None:
    assert query_phrases("please list the user policies") == ["listus", "userpolici"]
    # The name field's pairs tokenise to exactly the query's pair terms.
    indexed = set(tokenize(name_phrases("iam.list_user_policies")))
    assert set(query_phrases("list user policies")) <= indexed
    assert "iam" not in name_phrases("iam.list_user_policies")


def test_short_names_get_no_pairs_and_digits_form_none() -> None:
    assert name_phrases("git.status") == ""
    assert name_phrases("fs.read_file") == ""  # its compound "readfil" is indexed already
    assert name_phrases("auth.get_2fa_code") == "facode"
    assert skill_fields(_skill("fs.read_file", "Read a file."))["name"] == ["fs.read_file", ""]


def test_a_query_without_any_pair_in_the_index_ranks_as_before() -> None:
    query = "delete a user"
    assert query_phrases(query) == ["deleteus"]  # no op's name holds the pair
    assert _ranked(_index(), query) == _ranked(_index(BM25Config(phrase_weight=0)), query)
