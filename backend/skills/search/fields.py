"""The searchable fields of an op or a resource, as :class:`~.bm25.SkillIndex` indexes them.

A description is split in two fields: its **lead** (the first ``lead_words`` words, where
a tool says what it does) and its **details** (the rest: usage notes, caveats, examples,
environment notes, parameter lists), which weigh less. Without the split a long
description (a few hundred words about paths, shells and Docker) matched almost any query
on some word of its tail, and its length, barely normalised (``BM25Config.b`` is low
because tool descriptions are short), did little to hold it back; a one-line description
that says exactly what was asked then ranked below it. Measured in benchmarks/RESULTS.md
("Generalisation across corpora").
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from backend.skills.search.phrases import name_phrases

if TYPE_CHECKING:
    from backend.skills.models import Skill
    from backend.skills.registry import Resource

LEAD_WORDS = 40


def split_lead(text: str, lead_words: int = LEAD_WORDS) -> tuple[str, str]:
    """(the first ``lead_words`` white-space separated words, the rest); 0: no split."""
    words = text.split()
    if lead_words <= 0 or len(words) <= lead_words:
        return text, ""
    return " ".join(words[:lead_words]), " ".join(words[lead_words:])


def skill_fields(skill: Skill, lead_words: int = LEAD_WORDS) -> dict[str, list[str]]:
    lead, details = split_lead(skill.description, lead_words)
    return {
        "name": [skill.op, name_phrases(skill.op)],
        "description": [lead, skill.summary],
        "details": [details],
        "tags": list(skill.tags),
        "examples": [e.description for e in skill.examples],
        "params": param_names(skill),
    }


def param_names(skill: Skill) -> list[str]:
    """The op's parameter names: its model's fields, or, for a model that takes any
    object its JSON schema accepts (an MCP tool's, ``extra="allow"`` and no fields), the
    schema's top-level property names. Without them an MCP tool's ``path``, ``url`` or
    ``query`` argument was invisible to search while a built-in op's was not. Names only:
    the raw JSON (types, enums, ``required``) would add words every tool shares."""
    names = list(skill.params.model_fields)
    if names or skill.params.model_config.get("extra") != "allow":
        return names
    properties = skill.input_schema().get("properties")
    return [str(name) for name in properties] if isinstance(properties, dict) else []


def resource_fields(resource: Resource, lead_words: int = LEAD_WORDS) -> dict[str, list[str]]:
    lead, details = split_lead(resource.description, lead_words)
    return {
        "name": [resource.uri, resource.name],
        "description": [lead],
        "details": [details],
        "tags": list(resource.tags),
    }
