"""The instructions the server sends at initialize: what a client can reach, with counts.

A model reads these once per connection, before it has called anything, so they say
how the four tools are used and what is behind them: the domains this caller may use
(by op count, each with a short label) and how many sessions and library fragments it
can read. A domain's count is the one ``describe('')`` gives the same caller (the ops
offered to it); ops hidden behind an entry op (an MCP server's tools) are added as
``+N hidden``, so the two never disagree. They are computed when a client initializes,
from the registry and the caller's rights (a token's grant included); :func:`render`
caps the domain list so that many aggregated MCP servers cannot push the text past a
few hundred tokens (``describe('')`` lists every domain in full).
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Callable, Sequence
from dataclasses import dataclass

from backend.archive.records import SessionRecords
from backend.knowledge.fragments.library import FragmentLibrary
from backend.mcp.client.as_skills import MCP_AGENT
from backend.skills.models import SkillContext
from backend.skills.registry import Registry
from backend.skills.session_scope import may_read

MAX_DOMAINS = 8
LABEL_CHARS = 32

PREAMBLE = (
    "Sylk's {ops} ops sit behind 4 tools: `search` finds ops by what they do, `describe` "
    "gives an op's parameters ('' lists domains), `execute` runs one, `batch` several; "
    "results may name the next op."
)
HIDDEN = "Hidden ops are unveiled by running their domain's entry op (search finds it)."
RESOURCES = (
    "Resources: {sessions} at sylk://sessions (each with a transcript), {fragments} under "
    "sylk://library (sylk://library/match?query=...&maxTokens=... assembles a query's), "
    "indexed content under sylk://ops. Prompts: best-practice, where-is, briefing."
)


Offered = Callable[[str, SkillContext], bool]  # may this op show in the caller's listings?


@dataclass(frozen=True)
class DomainSummary:
    name: str
    ops: int  # offered: what describe('') counts
    label: str = ""
    hidden: int = 0  # within reach, unveiled by the domain's entry op


def label(description: str, limit: int = LABEL_CHARS) -> str:
    """The head of a domain description: up to its first colon (the built-in domains
    read 'Subject: details'), else its first words within ``limit`` characters."""
    head = description.strip().split(": ", 1)[0].rstrip(".")
    if len(head) <= limit:
        return head
    cut = head[: limit + 1].rsplit(" ", 1)[0].rstrip(",;")
    return f"{cut}..."


def domain_summaries(
    registry: Registry,
    context: SkillContext,
    offered: Offered | None = None,
    runnable: Offered | None = None,
) -> list[DomainSummary]:
    """Each domain with at least one op ``context`` may run, largest first.

    With ``offered`` (the gateway's), a domain's ``ops`` are those it offers the caller,
    as ``describe('')`` counts them, and the rest it may run are ``hidden``; without it
    every op the caller may run counts as offered. ``runnable`` (the gateway's: scopes,
    roles, a token's grant) decides what the caller may run; without it, its scopes and
    write permission."""
    may_run = runnable or registry.allowed
    allowed = [skill for skill in registry if may_run(skill.op, context)]
    counts = Counter(skill.domain for skill in allowed)
    shown = Counter(
        skill.domain for skill in allowed if offered is None or offered(skill.op, context)
    )
    rows = []
    for name, ops in counts.items():
        domain = registry.domain(name)
        description = domain.description if domain and domain.description else ""
        if not description and any(s.agent == MCP_AGENT for s in registry.entry_points(name)):
            description = "an MCP server"
        rows.append(DomainSummary(name, shown[name], label(description), ops - shown[name]))
    return sorted(rows, key=lambda row: (-(row.ops + row.hidden), row.name))


def _plural(count: int, noun: str) -> str:
    return f"{count} {noun}{'' if count == 1 else 's'}"


def render(
    domains: Sequence[DomainSummary],
    *,
    sessions: int,
    fragments: int,
    max_domains: int = MAX_DOMAINS,
) -> str:
    ops = sum(row.ops + row.hidden for row in domains)
    shown = [
        f"{row.name} {row.ops}"
        + (f" +{row.hidden} hidden" if row.hidden else "")
        + (f" ({row.label})" if row.label else "")
        for row in domains[:max_domains]
    ]
    rest = len(domains) - len(shown)
    if rest:
        shown.append(f"and {rest} more")
    parts = [PREAMBLE.format(ops=ops)]
    if shown:
        parts.append(f"Domains (ops): {'; '.join(shown)}.")
    if any(row.hidden for row in domains):
        parts.append(HIDDEN)
    parts.append(
        RESOURCES.format(
            sessions=_plural(sessions, "session"), fragments=_plural(fragments, "library fragment")
        )
    )
    return " ".join(parts)


def server_instructions(
    registry: Registry,
    context: SkillContext,
    archive: SessionRecords,
    library: FragmentLibrary,
    offered: Offered | None = None,
    *,
    own_session: bool = False,
    tool_servers: str = "",
    runnable: Offered | None = None,
) -> str:
    """The instructions for a caller with ``context``'s rights (``offered``: see
    :func:`domain_summaries`); ``own_session`` counts the session a client not bound to
    one gets on its first request. Reads the archive and the library once, so call it
    off the event loop. ``tool_servers`` says which aggregated MCP servers are not up."""
    sessions = sum(1 for s in archive.load_sessions() if may_read(context, s.id))
    text = render(
        domain_summaries(registry, context, offered, runnable),
        sessions=sessions + own_session,
        fragments=len(library.fragments()),
    )
    return f"{text} {tool_servers}" if tool_servers else text
