"""Descriptions for the domains of aggregated MCP servers, where nobody gave one.

A built-in domain is defined with a description ('Subject: details'); an MCP server's
tools arrive as ops of a domain nobody defined, so ``describe('')`` showed it bare and
the instructions could only say "an MCP server". While Sylk serves, each such domain
is described after its server, as soon as the server's entry op is registered (at
startup or later, when a server starts or re-lists its tools). A description someone
configured stays.
"""

from __future__ import annotations

from collections.abc import Callable

from backend.mcp.client.as_skills import ENTRY_NAME, MCP_AGENT
from backend.skills.models import Skill
from backend.skills.registry import Registry, RegistryChange


def server_of(skill: Skill) -> str | None:
    """The MCP server whose entry op ``skill`` is (its tags are ``("mcp", server, ...)``)."""
    if skill.agent != MCP_AGENT or not skill.op.endswith(f".{ENTRY_NAME}"):
        return None
    return skill.tags[1] if len(skill.tags) > 1 else skill.domain


def describe(registry: Registry, skill: Skill) -> None:
    server = server_of(skill)
    known = registry.domain(skill.domain)
    if server is None or (known is not None and known.description):
        return
    registry.define_domain(
        skill.domain,
        description=f"MCP server {server}: its tools, unveiled by {skill.op}",
        scopes=known.scopes if known is not None else (),
    )


def describe_server_domains(registry: Registry) -> Callable[[], None]:
    """Describe every MCP server domain now and as servers come; returns the unsubscribe."""
    for skill in list(registry):
        describe(registry, skill)

    def on_change(change: RegistryChange) -> None:
        if not change.removed and change.skill is not None:
            describe(registry, change.skill)

    return registry.subscribe(on_change)
