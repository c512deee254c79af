"""The builtin ops' parameter models are built on first use, not at every start.

An engine registers dozens of builtin ops; building each one's pydantic model (and
checking its examples, and hashing its JSON schema into the registry's version) at start
cost every ``sylk run`` and ``sylk mcp serve`` a tenth of their start-up. The registry
leaves a deferred model unbuilt; these tests hold what that must not lose.
"""

from __future__ import annotations

import subprocess
import sys
from typing import Any

from pydantic import Field

from backend.skills.builtin.catalog import register_builtins
from backend.skills.builtin.declare import Params
from backend.skills.models import Example, Skill, SkillContext
from backend.skills.registry import Registry, builds_late, check_examples


async def _noop(ctx: SkillContext, params: Any) -> Any:
    return None


def _skill(params: type[Params], *examples: Example) -> Skill:
    return Skill(
        op="a.b.c", agent="a", description="does", params=params, handler=_noop, examples=examples
    )


def test_every_builtin_example_validates_against_its_own_params() -> None:
    """What registration checked for every op, checked here for the deferred ones: an
    example a model copies from ``describe`` must be a call the op accepts."""
    reg = register_builtins()
    assert len(reg) > 50
    for skill in reg:
        check_examples(skill)  # raises ExampleMismatchError naming the op and example


UNBUILT_AFTER_START = """
from backend.skills.builtin.catalog import register_builtins
from backend.skills.registry import builds_late
reg = register_builtins()
version = reg.version
print(version, sum(builds_late(s.params) for s in reg), len(reg))
"""


def test_registering_the_builtins_and_hashing_their_version_builds_no_params_model() -> None:
    """In a fresh interpreter (another test may have built them here); and the version
    is the one this process computes with every model built, so building one later (a
    call, a describe) never moves it."""
    done = subprocess.run(
        [sys.executable, "-c", UNBUILT_AFTER_START], capture_output=True, text=True, check=True
    )
    version, unbuilt, total = done.stdout.split()
    assert int(unbuilt) > int(total) // 2, done.stdout
    reg = register_builtins()
    for skill in reg:
        skill.params.model_json_schema()
    assert register_builtins().version == reg.version == version


def test_a_deferred_models_fields_still_move_the_version() -> None:
    class One(Params):
        text: str

    class Two(Params):
        text: str = Field(min_length=1)

    first, second = Registry(), Registry()
    first.register(_skill(One))
    second.register(_skill(Two))
    assert first.version != second.version
    assert not One.__pydantic_complete__ and not Two.__pydantic_complete__


def test_a_deferred_model_is_built_and_validates_when_a_call_comes() -> None:
    class Late(Params):
        text: str

    reg = Registry()
    reg.register(_skill(Late, Example(description="fine", args={"text": "x"})))
    assert builds_late(Late)
    assert Late.model_validate({"text": "x"}).text == "x"
    assert not builds_late(Late)  # built now: registration would check its examples again
