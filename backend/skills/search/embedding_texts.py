"""What the embedding model reads of an op or a resource, whole and field by field.

An op is embedded as several fields (:func:`op_fields`): the whole text (name words,
description, examples), the description alone and the name words alone; a resource
likewise (:func:`resource_fields`), from its URI, name and description.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from backend.terms import split_identifier

if TYPE_CHECKING:
    from backend.skills.models import Skill
    from backend.skills.registry import Resource


def op_text(skill: Skill) -> str:
    """What the model reads of an op: its name as words, description, examples."""
    parts = [" ".join(split_identifier(skill.op)), skill.description]
    if skill.summary and skill.summary not in skill.description:
        parts.append(skill.summary)
    parts.extend(e.description for e in skill.examples)
    return ". ".join(p.strip().rstrip(".") for p in parts if p.strip())


def resource_text(resource: Resource) -> str:
    parts = [" ".join(split_identifier(resource.uri)), resource.name, resource.description]
    return ". ".join(p.strip().rstrip(".") for p in parts if p.strip())


def op_fields(skill: Skill) -> dict[str, str]:
    """The texts an op is embedded as: all of it, its description, its name words."""
    description = skill.description.strip()
    if skill.summary and skill.summary not in skill.description:
        description = f"{description.rstrip('.')}. {skill.summary.strip()}"
    return {
        "text": op_text(skill),
        "description": description,
        "name": " ".join(split_identifier(skill.op)),
    }


def resource_fields(resource: Resource) -> dict[str, str]:
    return {
        "text": resource_text(resource),
        "description": resource.description.strip(),
        "name": " ".join(split_identifier(f"{resource.uri} {resource.name}")),
    }
