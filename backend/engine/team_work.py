"""Wires the team's parts (:mod:`backend.team`) into a built engine.

Called once at the end of :func:`backend.engine.build.build`, when every part exists:
each team part gets what it needs from the engine's parts and installs the real
handlers of the ops it serves.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from backend.engine.pipeline_work import install_pipelines
from backend.engine.quality_work import install_quality_ops
from backend.team.knowledge_ops import install_archivalist_analysis
from backend.team.messages import AgentMessages, install_messages
from backend.team.research_ops import install_academic_research

if TYPE_CHECKING:
    from backend.engine.build import EngineParts


def install_team(parts: EngineParts) -> None:
    """Give the team ops their handlers (each part below adds its own lines)."""
    # The Inspector's and the Tester's ops: the project's tools, a model where one is set.
    install_quality_ops(parts)
    # Agents talk through the Guide: consults, broadcasts, the engineer's question.
    messages = AgentMessages(
        guide=parts.guide,
        dispatcher=parts.dispatcher,
        session_of=parts.sessions.get,
        set_metadata=parts.sessions.set_metadata,
        consult=parts.knowledge.consult,
        questions=parts.questions,
    )
    install_messages(parts.gateway, messages)
    # The Archivalist's and the Academic's analysis ops (local data, no model).
    install_archivalist_analysis(parts.gateway, parts.knowledge.chronicle)
    knowledge = parts.knowledge
    install_academic_research(
        parts.gateway, knowledge.library, knowledge.desk, parts.config.data_dir
    )
    # Pipelines: /task and guide.task.interact steer them; @engineer runs as one.
    install_pipelines(parts)
