"""The structure of each role's checkpoint, field for field as the seed gives it.

A shape lists the fields an agent fills (the header fields, timestamp, session,
context usage and index, are added by the writer). The model is asked for exactly these
keys; :func:`conform` keeps what it returned to them, so a model's reply never adds a
field or leaves one out, and a value of the wrong type is replaced by an empty one.
"""

from __future__ import annotations

from typing import Any

# field -> an empty value of its type (str, list, dict or int) and what it holds
Shape = dict[str, tuple[Any, str]]

SHAPES: dict[str, Shape] = {
    "librarian": {
        "directory_structure": ("", "the top-level layout and what each part holds"),
        "key_paths": ([], "the files and folders that matter most"),
        "code_style": ("", "naming, formatting and typing conventions seen"),
        "architecture": ("", "how the parts fit together"),
        "testing_strategy": ("", "how the project is tested"),
        "tooling": ({}, "linters, formatters, type checkers and test runners by kind"),
        "package_managers": ([], "package managers in use"),
        "patterns": ([], "recurring code patterns"),
        "conventions": ([], "project conventions"),
        "new_discoveries": ([], "what was learned since the last checkpoint"),
    },
    "guide": {
        "known_routings": ({}, "request pattern -> agent"),
        "frequent_matches": ([], "common routes: {pattern, agent, confidence, usage_count}"),
        "failed_routings": ([], "routes that did not work: {pattern, agent, reason}"),
        "agent_capabilities": ({}, "agent -> capabilities observed"),
        "request_patterns": ([], "common request types: {pattern, count}"),
        "session_routing_stats": ({}, "counts of requests per agent"),
    },
    "academic": {
        "title": ("", "the research's title"),
        "abstract": ("", "what was found, in a paragraph"),
        "topics_researched": ([], "topics researched"),
        "key_findings": ([], "{topic, summary, confidence: high|medium|low, sources}"),
        "sources_cited": ([], "{title, url or path}"),
        "recommendations": ([], "recommendations"),
        "open_questions": ([], "questions still open"),
        "related_topics": ([], "related topics"),
    },
    "architect": {
        "original_request": ("", "the user's request, verbatim"),
        "implementation_plan": ("", "the plan as it stands"),
        "current_dag": ({}, "{id, total_nodes, completed_nodes, current_layer, execution_order}"),
        "completed_tasks": ([], "{id, description, status, assigned_to, result}"),
        "pending_tasks": ([], "{id, description, status, assigned_to}"),
        "blocked_tasks": ([], "{id, description, status, assigned_to}"),
        "architectural_decisions": ([], "decisions made and why"),
        "risks": ([], "risks seen"),
        "assumptions": ([], "assumptions made"),
    },
    "inspector": {
        "pipeline_id": ("", "the pipeline inspected, if any"),
        "checks_performed": ([], "checks run"),
        "issues_found": (0, "issues found in all"),
        "issues_resolved": (0, "issues resolved"),
        "issues_remaining": ([], "{issue_id, file, line, category, severity, description}"),
        "fixes_completed": ([], "{issue_id, file, line, description, fix_applied}"),
        "fixes_pending": (
            [],
            "{issue_id, file, line, category, severity, priority, description, suggested_fix}",
        ),
        "validation_state": ({}, "category -> passed (true/false)"),
    },
    "tester": {
        "pipeline_id": ("", "the pipeline tested, if any"),
        "tests_created": ([], "{file, test_name, type: unit|integration|e2e, for_task}"),
        "tests_run": ([], "{test_name, status: pass|fail|skip, duration}"),
        "pass_count": (0, "tests passed"),
        "fail_count": (0, "tests failed"),
        "skip_count": (0, "tests skipped"),
        "coverage_needed": ([], "what still needs tests"),
        "failure_descriptions": ([], "{test_name, error, expected, actual, suggestion}"),
    },
}

# Roles outside the seed's table compact with a plain summary of the conversation.
PLAIN: Shape = {
    "summary": ("", "what was asked and answered so far"),
    "open_items": ([], "what is still to do"),
}


def shape_for(role: str) -> Shape:
    return SHAPES.get(role, PLAIN)


def conform(role: str, values: dict[str, Any]) -> dict[str, Any]:
    """``values`` kept to ``role``'s fields, each of its shape's type (else empty)."""
    shaped: dict[str, Any] = {}
    for name, (empty, _) in shape_for(role).items():
        value = values.get(name, empty)
        if isinstance(empty, int) and not isinstance(empty, bool):
            ok = isinstance(value, int) and not isinstance(value, bool) and value >= 0
        else:
            ok = isinstance(value, type(empty))
        shaped[name] = value if ok else type(empty)()
    return shaped


def describe_fields(role: str) -> str:
    """The shape as the model is asked for it: one line a key."""
    return "\n".join(
        f'- "{name}" ({type(empty).__name__}): {what}'
        for name, (empty, what) in shape_for(role).items()
    )
