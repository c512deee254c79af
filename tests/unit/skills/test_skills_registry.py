"""The skill registry: registration, listing, version hash, scope inheritance."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
from pydantic import BaseModel, ConfigDict

from backend.skills.builtin.catalog import register_builtins
from backend.skills.models import Example, OpKind, Skill, SkillContext, SkillTier
from backend.skills.registry import (
    DuplicateOpError,
    ExampleMismatchError,
    Registry,
    Resource,
    UnknownOpError,
)


class Args(BaseModel):
    model_config = ConfigDict(extra="forbid")
    text: str


class OtherArgs(BaseModel):
    model_config = ConfigDict(extra="forbid")
    text: str
    count: int = 1


async def _noop(ctx: SkillContext, params: Any) -> Any:
    return None


def skill(op: str, **kw: Any) -> Skill:
    fields: dict[str, Any] = {
        "op": op,
        "agent": op.split(".", maxsplit=1)[0],
        "description": f"{op} does things",
        "params": Args,
        "handler": _noop,
    }
    fields.update(kw)
    return Skill(**fields)


def ctx(scopes: set[str] | None = None, can_write: bool = False) -> SkillContext:
    return SkillContext(
        session_id="s1",
        agent="tester",
        workspace=Path("."),
        scopes=frozenset(scopes or ()),
        can_write=can_write,
    )


def test_register_get_list_and_duplicates() -> None:
    reg = Registry()
    reg.register(skill("lib.code.search", tier=SkillTier.CORE, agent="librarian"))
    reg.register(skill("lib.code.context", agent="librarian"))
    reg.register(skill("eng.file.read", agent="engineer", tier=SkillTier.CORE))
    with pytest.raises(DuplicateOpError):
        reg.register(skill("lib.code.search"))
    assert reg.require("eng.file.read").op == "eng.file.read"
    assert reg.get("nope.op") is None
    with pytest.raises(UnknownOpError):
        reg.require("nope.op")
    assert [s.op for s in reg.list(agent="librarian")] == ["lib.code.search", "lib.code.context"]
    assert [s.op for s in reg.list(tier=SkillTier.CORE)] == ["lib.code.search", "eng.file.read"]
    assert [s.op for s in reg.list(domain="eng")] == ["eng.file.read"]
    assert [s.op for s in reg.list(prefix="lib.code")] == ["lib.code.search", "lib.code.context"]
    assert reg.list(prefix="lib.co") == []  # prefixes match whole segments
    reg.unregister("lib.code.context")
    assert "lib.code.context" not in reg and len(reg) == 2
    with pytest.raises(UnknownOpError):
        reg.unregister("lib.code.context")


def test_version_changes_with_ops_and_schemas_only() -> None:
    reg = Registry()
    v0 = reg.version
    reg.register(skill("a.b.c"))
    v1 = reg.version
    assert v1 != v0 and reg.version == v1  # stable between changes
    reg.unregister("a.b.c")
    reg.register(skill("a.b.c", params=OtherArgs))
    assert reg.version not in (v0, v1)
    reg.unregister("a.b.c")
    reg.register(skill("a.b.c"))
    assert reg.version == v1  # same content, same hash
    reg.define_domain("a", scopes=("internal",))
    assert reg.version != v1


def test_scopes_inherit_domain_to_op_to_resource() -> None:
    reg = Registry()
    reg.define_domain("warehouse", scopes=("internal",))
    reg.register(skill("warehouse.sql.query", scopes=("sql",)))
    reg.register(skill("warehouse.docs.read"))
    reg.add_resource(
        Resource(
            uri="warehouse.sql.query/tables/salaries",
            op="warehouse.sql.query",
            name="salaries",
            scopes=("hr",),
        )
    )
    assert reg.effective_scopes("warehouse.docs.read") == {"internal"}
    assert reg.effective_scopes("warehouse.sql.query") == {"internal", "sql"}
    uri = "warehouse.sql.query/tables/salaries"
    assert reg.effective_scopes(uri) == {"internal", "sql", "hr"}
    assert not reg.allowed("warehouse.docs.read", ctx())
    assert reg.allowed("warehouse.docs.read", ctx({"internal"}))
    assert not reg.allowed("warehouse.sql.query", ctx({"internal"}))
    assert reg.allowed("warehouse.sql.query", ctx({"internal", "sql"}))
    assert not reg.allowed(uri, ctx({"internal", "sql"}))
    assert reg.allowed(uri, ctx({"internal", "sql", "hr"}))
    assert reg.missing(uri, ctx({"internal"})) == ["hr", "sql"]
    assert not reg.allowed("no.such.op", ctx({"internal"}))
    reg.unregister("warehouse.sql.query")  # its resources go with it
    assert reg.resource(uri) is None


def test_write_ops_also_need_write_permission() -> None:
    reg = Registry()
    reg.register(skill("eng.file.write", kind=OpKind.WRITE))
    assert not reg.allowed("eng.file.write", ctx())
    assert reg.allowed("eng.file.write", ctx(can_write=True))
    assert reg.missing("eng.file.write", ctx()) == ["write permission"]


def test_resources_need_a_registered_op_and_unique_uri() -> None:
    reg = Registry()
    with pytest.raises(UnknownOpError):
        reg.add_resource(Resource(uri="x.y.z/a", op="x.y.z", name="a"))
    reg.register(skill("x.y.z"))
    reg.add_resource(Resource(uri="x.y.z/a", op="x.y.z", name="a"))
    with pytest.raises(DuplicateOpError):
        reg.add_resource(Resource(uri="x.y.z/a", op="x.y.z", name="a"))
    with pytest.raises(ValueError, match="uri"):
        Resource(uri="no-slash", op="x.y.z", name="a")


def test_listeners_hear_every_change() -> None:
    reg = Registry()
    heard: list[tuple[str, bool]] = []
    stop = reg.subscribe(lambda change: heard.append((change.key, change.removed)))
    reg.register(skill("a.b.c"))
    reg.unregister("a.b.c")
    stop()
    reg.register(skill("a.b.d"))
    assert heard == [("a.b.c", False), ("a.b.c", True)]


def test_register_refuses_an_example_its_own_params_refuse() -> None:
    reg = Registry()
    good = Example(description="count twice", args={"text": "a", "count": 2})
    bad = Example(description="misspelt count", args={"text": "a", "cuont": 2})
    with pytest.raises(ExampleMismatchError) as caught:
        reg.register(skill("a.b.c", params=OtherArgs, examples=(good, bad)))
    error = caught.value
    assert error.op == "a.b.c" and error.example == "misspelt count"
    assert "'a.b.c'" in str(error) and "'misspelt count'" in str(error) and "cuont" in str(error)
    assert "a.b.c" not in reg  # nothing half-registered
    reg.register(skill("a.b.c", params=OtherArgs, examples=(good,)))
    assert reg.require("a.b.c").examples == (good,)


def test_every_builtin_registers_with_valid_examples_and_one_entry_point_per_domain() -> None:
    reg = register_builtins()
    for domain in reg.domains():
        entries = reg.entry_points(domain)
        assert len(entries) == 1, (domain, [s.op for s in entries])
        assert entries[0].searchable, entries[0].op


def test_entry_points_and_versions_count_in_the_version_hash() -> None:
    reg = Registry()
    reg.register(skill("a.b.c"))
    plain = reg.version
    reg.unregister("a.b.c")
    reg.register(skill("a.b.c", entry_point=True))
    assert reg.version != plain and [s.op for s in reg.entry_points("a")] == ["a.b.c"]
    flagged = reg.version
    reg.unregister("a.b.c")
    reg.register(skill("a.b.c", entry_point=True, version=2))
    assert reg.version not in (plain, flagged)
    assert reg.require("a.b.c").canonical_id == "a.b.c@2"
    assert reg.entry_points("x") == []
