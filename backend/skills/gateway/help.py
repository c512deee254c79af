"""Help pages for ``describe``: three detail levels for an op, a directory view for a prefix.

``summary``: op, one line, a CLI-like usage string, kind and tier (cheap).
``schema``: adds the versioned id (``op@N``), the full description, an
argument table, the JSON schema and the effective scopes. ``full``: adds
examples, notes, the policy (do / don't / edge cases), the ops it guides to,
tags and triggers.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Iterable
from typing import Any, Literal

from backend.skills.models import OpKind, Skill
from backend.skills.registry import Registry, Resource

Level = Literal["summary", "schema", "full"]
LEVELS: tuple[str, ...] = ("summary", "schema", "full")


def _type_of(prop: dict[str, Any]) -> str:
    if "enum" in prop:
        return "|".join(repr(v) for v in prop["enum"])
    if "anyOf" in prop:
        kinds = [_type_of(p) for p in prop["anyOf"]]
        return "|".join(k for k in kinds if k != "null") or "null"
    kind = prop.get("type")
    if kind == "array":
        return f"list[{_type_of(prop.get('items', {}))}]"
    if isinstance(kind, str):
        return {"string": "str", "integer": "int", "number": "float", "boolean": "bool"}.get(
            kind, kind
        )
    if "$ref" in prop:
        return str(prop["$ref"]).rsplit("/", 1)[-1]
    return "any"


def arg_table(schema: dict[str, Any]) -> list[dict[str, Any]]:
    required = set(schema.get("required", []))
    rows = []
    for name, prop in schema.get("properties", {}).items():
        row: dict[str, Any] = {"name": name, "type": _type_of(prop), "required": name in required}
        if "default" in prop:
            row["default"] = prop["default"]
        if prop.get("description"):
            row["description"] = prop["description"]
        rows.append(row)
    return rows


def usage(skill: Skill) -> str:
    parts = []
    for row in arg_table(skill.input_schema()):
        if row["required"]:
            parts.append(f"{row['name']}: {row['type']}")
        else:
            default = f"={row['default']!r}" if "default" in row else ""
            parts.append(f"{row['name']}?: {row['type']}{default}")
    flag = ", dry_run=true by default" if skill.destructive else ""
    return f'execute(op="{skill.op}", args={{{", ".join(parts)}}}{flag})'


def op_doc(skill: Skill, level: str, registry: Registry) -> dict[str, Any]:
    doc: dict[str, Any] = {
        "op": skill.op,
        "summary": skill.one_line(),
        "usage": usage(skill),
        "kind": skill.kind.value,
        "tier": skill.tier.value,
        "agent": skill.agent,
    }
    if skill.destructive:
        doc["destructive"] = True
    if skill.entry_point:
        doc["entry_point"] = True
    if level == "summary":
        return doc
    schema = skill.input_schema()
    # ``op@N`` pins the contract this page describes; execute accepts it and refuses a
    # call made against a version the op has since left.
    doc["id"] = skill.canonical_id
    doc["version"] = skill.version
    doc["description"] = skill.description
    doc["args"] = arg_table(schema)
    doc["input_schema"] = schema
    scopes = sorted(registry.effective_scopes(skill.op))
    if scopes:
        doc["scopes"] = scopes
    if skill.kind is OpKind.WRITE:
        doc["requires_write"] = True
    if level == "schema":
        return doc
    doc["examples"] = [e.model_dump() for e in skill.examples]
    if skill.notes:
        doc["notes"] = list(skill.notes)
    if skill.policy:
        doc["policy"] = skill.policy.model_dump()
    if skill.guidance:
        doc["leads_to"] = [g.model_dump(exclude_defaults=True) for g in skill.guidance]
    if skill.tags:
        doc["tags"] = list(skill.tags)
    if skill.triggers:
        doc["triggers"] = list(skill.triggers)
    resources = registry.resources(skill.op)
    if resources:
        doc["resources"] = [r.uri for r in resources[:20]]
    return doc


def resource_doc(resource: Resource) -> dict[str, Any]:
    return {
        "uri": resource.uri,
        "name": resource.name,
        "description": resource.description,
        "read_with": {"op": resource.op, "args": resource.args},
    }


def directory_doc(path: str, skills: Iterable[Skill], level: str) -> dict[str, Any]:
    """Every visible op under ``path`` in one page, with the sub-groups it contains."""
    listed = list(skills)
    depth = path.count(".") + 1 if path else 0
    groups: Counter[str] = Counter()
    for skill in listed:
        parts = skill.op.split(".")
        if len(parts) > depth + 1:
            groups[".".join(parts[: depth + 1])] += 1
    ops = []
    for skill in listed:
        row: dict[str, Any] = {
            "op": skill.op,
            "summary": skill.one_line(),
            "kind": skill.kind.value,
        }
        if skill.destructive:
            row["destructive"] = True
        if skill.entry_point:
            row["entry_point"] = True
        if level != "summary":
            row["usage"] = usage(skill)
        ops.append(row)
    return {
        "path": path,
        "directory": True,
        "groups": [{"path": g, "ops": n} for g, n in sorted(groups.items())],
        "ops": ops,
        "hint": "describe(<op>, level='schema') for arguments; execute(<op>, args) to run",
    }


def root_doc(registry: Registry, counts: dict[str, int]) -> dict[str, Any]:
    domains = []
    for name in sorted(counts):
        domain = registry.domain(name)
        row: dict[str, Any] = {"domain": name, "ops": counts[name]}
        if domain and domain.description:
            row["description"] = domain.description
        domains.append(row)
    return {
        "path": "",
        "directory": True,
        "domains": domains,
        "hint": "describe(<domain>) lists a domain's ops; search(query) finds ops by meaning",
    }
