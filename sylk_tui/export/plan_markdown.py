"""The parts of a Markdown export beyond the transcript: plans, their DAGs, usage.

Read from the whole-session document (:mod:`.document`), so Markdown, HTML and SVG say
what the JSON holds: each plan's latest version with its layers and nodes (agent,
dependencies, the node's state and attempts when it ran), and the tokens and cost
per agent.
"""

from __future__ import annotations

from typing import Any

from sylk_tui.export.markdown import one_line


def _latest_plans(rows: list[dict[str, Any]]) -> list[dict[str, Any]]:
    latest: dict[str, dict[str, Any]] = {}
    for row in rows:
        plan_id = str(row.get("plan_id", ""))
        if plan_id not in latest or int(row.get("version", 0)) >= int(
            latest[plan_id].get("version", 0)
        ):
            latest[plan_id] = row
    return list(latest.values())


def _node_states(dags: list[dict[str, Any]], plan_id: str) -> dict[str, dict[str, Any]]:
    for dag in dags:
        if dag.get("plan_id") == plan_id and isinstance(dag.get("nodes"), list):
            return {str(n.get("id")): n for n in dag["nodes"] if isinstance(n, dict)}
        if dag.get("plan_id") == plan_id and isinstance(dag.get("nodes"), dict):
            return {str(k): v for k, v in dag["nodes"].items() if isinstance(v, dict)}
    return {}


def plan_markdown(document: dict[str, Any]) -> list[str]:
    """Each plan's latest version: its prompt, layers and nodes; nothing when none."""
    lines: list[str] = []
    dags = [d for d in document.get("dags", []) if isinstance(d, dict)]
    for row in _latest_plans([r for r in document.get("plans", []) if isinstance(r, dict)]):
        plan = row.get("document") if isinstance(row.get("document"), dict) else {}
        assert isinstance(plan, dict)
        plan_id = str(row.get("plan_id", "?"))
        lines += [f"## Plan {one_line(plan_id)} · v{row.get('version')} · {row.get('status')}", ""]
        if plan.get("prompt"):
            lines += [f"> {one_line(str(plan['prompt']))}", ""]
        nodes = {str(n.get("id")): n for n in plan.get("nodes", []) if isinstance(n, dict)}
        states = _node_states(dags, plan_id)
        order = plan.get("execution_order") or [list(nodes)]
        for number, layer in enumerate(order, 1):
            lines.append(f"**Layer {number}**")
            lines.append("")
            for node_id in layer if isinstance(layer, list) else []:
                lines.append(_node_line(str(node_id), nodes.get(str(node_id), {}), states))
            lines.append("")
    return lines


def _node_line(node_id: str, node: dict[str, Any], states: dict[str, dict[str, Any]]) -> str:
    parts = [f"- `{one_line(node_id)}` ({one_line(str(node.get('agent', '?')))})"]
    state = states.get(node_id, {})
    if state.get("status"):
        parts.append(f"· {one_line(str(state['status']))}")
    if state.get("attempts"):
        parts.append(f"· attempts {state['attempts']}")
    if node.get("depends_on"):
        parts.append("· after " + ", ".join(one_line(str(d)) for d in node["depends_on"]))
    prompt = one_line(str(node.get("prompt", "")))
    return " ".join(parts) + (f": {prompt}" if prompt else "")


def usage_markdown(document: dict[str, Any]) -> list[str]:
    """Tokens and cost per agent; nothing when no model was called."""
    summary = document.get("usage_summary")
    agents = summary.get("agents") if isinstance(summary, dict) else None
    if not isinstance(agents, list) or not agents:
        return []
    lines = ["## Usage", "", "| agent | model | in | out | cost |", "|---|---|---|---|---|"]
    for agent in agents:
        if not isinstance(agent, dict):
            continue
        usage = agent.get("usage") if isinstance(agent.get("usage"), dict) else {}
        assert isinstance(usage, dict)
        cost = agent.get("cost_usd")
        lines.append(
            f"| {one_line(str(agent.get('agent', '?')))} | {one_line(str(agent.get('model', '')))} "
            f"| {usage.get('input_tokens', 0)} | {usage.get('output_tokens', 0)} "
            f"| {'-' if cost is None else f'${cost:.4f}'} |"
        )
    return [*lines, ""]
