"""How much of a conversation's input the provider serves from its prompt cache.

A scripted 20-turn conversation with the engineer, run through the engine's real
agent turns (the Guide, the turn runner, the agent loop, the real SDKs) against
the model-API stub, which plays prefix caching as the vendors document it
(``tests/stubs/prompt_cache.py``: Anthropic's breakpoints, minimum length, 20-block
look-back and TTL; OpenAI's automatic 128-token steps from 1024). Each turn reads
``--reads`` source files of a temp workspace (real ``engineer.file.read``); every
third one also writes a notes file (a real ``engineer.file.write``, which changes
the session brief) and some ask for things that load contextual ops; then the
model answers.

The figure is the share of all input tokens (uncached + cache reads + cache
writes, summed from the archive's usage rows) that the stub reported as cache
reads; ``seen_before_share`` is the ceiling any prefix cache has on the same
requests (the share that repeats the start of an earlier request). Arms, in one
run: Anthropic with ``prompt_cache`` on and off, OpenAI Chat (automatic caching).
``--root PATH`` runs the engine code of another checkout (a git worktree of an
older commit) against this checkout's stub, for the figure before a change; the
``off`` arm needs the ``prompt_cache`` setting, so it is skipped where the code
has none.

    .venv/bin/python benchmarks/prompt_cache_bench.py [--turns 20] [--reads 1] [--root PATH]

Prints one JSON object.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))
sys.path.insert(0, str(Path(__file__).resolve().parent))

import machine_info  # benchmarks/machine_info.py, beside this script

# The stub comes from this checkout; the engine from --root (imported after it).
from tests.stubs.llm_script import Reply, StubToolCall
from tests.stubs.llm_stub import LLMStub
from tests.stubs.prompt_cache import PromptCache, prompt_text, seen_before_share

HERE = Path(__file__).resolve().parents[1]
KEY = "sk-bench-0123456789abcdef"
ASKS = [
    "walk me through {file}",
    "run the tests for {file} and tell me what fails",
    "search for the usages of the parser in {file}",
    "show the git diff of {file}",
    "explain the error handling in {file}",
]


def workspace(root: Path, files: int) -> list[str]:
    """A small project: ``files`` modules of ~3 KB each (about 750 tokens)."""
    names = []
    for n in range(files):
        name = f"src/module_{n}.py"
        body = "".join(
            f"def handler_{n}_{i}(value: int) -> int:\n"
            f'    """Step {i} of module {n}: scale, clamp and return the value."""\n'
            f"    return max(0, min(value * {i + 2}, {1000 + i}))\n\n\n"
            for i in range(20)
        )
        (root / name).parent.mkdir(parents=True, exist_ok=True)
        (root / name).write_text(body)
        names.append(name)
    return names


def script(turns: int, files: list[str], reads: int) -> tuple[list[str], list[Reply]]:
    """The user's lines and the model's replies, in order."""
    lines: list[str] = []
    replies: list[Reply] = []
    for turn in range(turns):
        file = files[turn % len(files)]
        lines.append("@engineer " + ASKS[turn % len(ASKS)].format(file=file))
        for n in range(reads):  # the file asked about, then its neighbours
            path = files[(turn + n) % len(files)]
            replies.append(Reply(tool_calls=[StubToolCall("engineer__file__read", {"path": path})]))
        if turn % 3 == 2:
            note = {"path": f"notes/turn_{turn}.md", "content": f"- read {file}\n"}
            write = {"op": "engineer.file.write", "dry_run": False, "args": note}
            replies.append(Reply(tool_calls=[StubToolCall("execute", write)]))
        answer = f"Turn {turn}: {file} scales, clamps and returns its value in 20 steps. "
        replies.append(Reply(text=[answer * 3]))
    return lines, replies


async def conversation(
    vendor: str, cache_on: bool | None, turns: int, reads: int
) -> dict[str, Any]:
    from backend.config.approvals import ApprovalMode
    from backend.config.settings import ProviderSettings, load_config
    from backend.engine import Engine, EngineConfig
    from backend.engine.build import build

    with tempfile.TemporaryDirectory() as tmp, LLMStub() as stub:
        stub.prompt_cache = PromptCache()
        root = Path(tmp) / "workspace"
        root.mkdir()
        lines, replies = script(turns, workspace(root, 6), reads)
        stub.push(*replies)
        stub.default = Reply(text=["(unscripted)"])  # counted below; should stay unused
        env = (
            {"ANTHROPIC_API_KEY": KEY, "ANTHROPIC_BASE_URL": stub.base_url}
            if vendor == "anthropic"
            else {"OPENAI_API_KEY": KEY, "OPENAI_BASE_URL": stub.openai_base_url}
        )
        settings = load_config(None, env=env)
        if cache_on is not None:
            provider = settings.providers[vendor].model_copy(update={"prompt_cache": cache_on})
            settings = settings.model_copy(
                update={"providers": {**settings.providers, vendor: provider}}
            )
        assert isinstance(settings.providers[vendor], ProviderSettings)
        config = EngineConfig(
            data_dir=Path(tmp) / "data",
            workspace=root,
            provider=vendor,
            approval_mode=ApprovalMode.AUTO_EDIT,
        )
        engine = Engine.from_parts(build(config, settings))
        started = time.perf_counter()
        try:
            session = await engine.ensure_session()
            for line in lines:
                await engine.submit(session.id, line)
            usage = engine.usage(session.id)
        finally:
            await engine.aclose()
        total = usage.total
        prompts = [prompt_text(r.vendor, r.body) for r in stub.requests if r.vendor]
        prompt = total.input_tokens + total.cache_read_tokens + total.cache_write_tokens
        return {
            "calls": usage.calls,
            "unscripted_calls": max(0, stub.count() - len(replies)),
            "input_tokens_total": prompt,
            "cache_read_tokens": total.cache_read_tokens,
            "cache_write_tokens": total.cache_write_tokens,
            "uncached_input_tokens": total.input_tokens,
            "cache_read_share": round(total.cache_read_tokens / prompt, 4) if prompt else 0.0,
            # What a perfect prefix cache would have read: each request's longest start
            # shared with an earlier request (tokens the conversation had never sent
            # before cannot be read by any cache).
            "seen_before_share": round(seen_before_share(prompts), 4),
            "wall_s": round(time.perf_counter() - started, 2),
        }


async def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--turns", type=int, default=20)
    parser.add_argument("--reads", type=int, default=1, help="file reads in each turn")
    parser.add_argument("--root", type=Path, default=HERE, help="the engine code's checkout")
    args = parser.parse_args()
    sys.path.insert(0, str(args.root.resolve()))
    from backend.config.settings import ProviderSettings

    switch = "prompt_cache" in ProviderSettings.model_fields
    arms: dict[str, tuple[str, bool | None]] = {
        "anthropic": ("anthropic", True if switch else None)
    }
    if switch:
        arms["anthropic_prompt_cache_off"] = ("anthropic", False)
    arms["openai_chat"] = ("openai", None)
    results = {
        name: await conversation(v, on, args.turns, args.reads) for name, (v, on) in arms.items()
    }
    print(
        json.dumps(
            {
                "benchmark": "prompt_cache",
                "turns": args.turns,
                "reads_per_turn": args.reads,
                "engine_root": str(args.root.resolve()),
                "token_count": "stub: ceil(chars / 4) of the compact JSON as sent",
                "arms": results,
                "target_share": 0.8,
                "machine": machine_info.machine(),
            },
            indent=2,
        )
    )


if __name__ == "__main__":
    asyncio.run(main())
