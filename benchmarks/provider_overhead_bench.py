"""Our overhead per streamed turn: ModelClient + adapter against the bare SDK call.

Both sides stream the same scripted reply (``--deltas`` text deltas) from the
same local stub, with the same SDK, in the same run. "direct" is the SDK's own
streaming call (``messages.create(stream=True)`` / ``chat.completions.create(
stream=True)``) consumed by a loop that joins the text; "ours" is
``ModelClient.run`` over the adapter with an event callback, as the agent loop
uses it. Turns alternate direct/ours so drift on a shared machine hits both.

The stub runs in a subprocess so its work neither competes for our GIL nor
shows up in tracemalloc. Wall time is measured without tracemalloc; peak
memory (tracemalloc peak above the baseline, per turn) in a second pass.

    .venv/bin/python benchmarks/provider_overhead_bench.py [--turns 30] [--deltas 200]

Prints one JSON object.
"""

from __future__ import annotations

import argparse
import asyncio
import gc
import json
import statistics
import subprocess
import sys
import time
import tracemalloc
from collections.abc import Awaitable, Callable
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

import anthropic
import machine_info  # benchmarks/machine_info.py, beside this script
import openai

from backend.llm.anthropic_adapter import AnthropicProvider
from backend.llm.client import ModelClient
from backend.llm.openai_chat import OpenAIProvider
from backend.llm.provider import Provider
from backend.llm.types import ChatMessage, ChatOptions, ChatRequest, StreamEvent

ROOT = Path(__file__).resolve().parents[1]
KEY = "sk-bench"
MODEL = "bench-model"
Turn = Callable[[], Awaitable[str]]


def machine() -> dict[str, Any]:
    return machine_info.machine(anthropic=anthropic.__version__, openai=openai.__version__)


def start_stub(deltas: int) -> tuple[subprocess.Popen[str], str]:
    proc = subprocess.Popen(
        [
            sys.executable,
            "-c",
            "from tests.stubs.llm_stub import main; main()",
            "--text-deltas",
            str(deltas),
        ],
        cwd=ROOT,
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        text=True,
    )
    assert proc.stdout is not None
    return proc, proc.stdout.readline().strip()


def request() -> ChatRequest:
    return ChatRequest(
        messages=[ChatMessage.user("stream me some words")],
        options=ChatOptions(model=MODEL, max_tokens=1024, deadline_s=60),
    )


def ours(provider: Provider) -> Turn:
    client = ModelClient(provider)
    seen = [0]

    def on_event(event: StreamEvent) -> None:  # keeps nothing alive between turns
        seen[0] += 1

    async def turn() -> str:
        result = await client.run(request(), on_event)
        return result.text

    return turn


def direct_anthropic(base_url: str) -> Turn:
    sdk = anthropic.AsyncAnthropic(api_key=KEY, base_url=base_url, max_retries=0, timeout=60)

    async def turn() -> str:
        parts: list[str] = []
        stream = await sdk.messages.create(
            model=MODEL,
            max_tokens=1024,
            messages=[{"role": "user", "content": "stream me some words"}],
            stream=True,
        )
        async for event in stream:
            if event.type == "content_block_delta" and event.delta.type == "text_delta":
                parts.append(event.delta.text)
        return "".join(parts)

    return turn


def direct_openai(base_url: str) -> Turn:
    sdk = openai.AsyncOpenAI(api_key=KEY, base_url=f"{base_url}/v1", max_retries=0, timeout=60)

    async def turn() -> str:
        parts: list[str] = []
        stream = await sdk.chat.completions.create(
            model=MODEL,
            max_tokens=1024,
            messages=[{"role": "user", "content": "stream me some words"}],
            stream=True,
            stream_options={"include_usage": True},
        )
        async for chunk in stream:
            if chunk.choices and chunk.choices[0].delta.content:
                parts.append(chunk.choices[0].delta.content)
        return "".join(parts)

    return turn


async def timed(turn: Turn) -> float:
    gc.collect()
    started = time.perf_counter()
    await turn()
    return time.perf_counter() - started


async def peak(turn: Turn) -> int:
    gc.collect()
    tracemalloc.reset_peak()
    base = tracemalloc.get_traced_memory()[0]
    await turn()
    return tracemalloc.get_traced_memory()[1] - base


async def compare(direct: Turn, mine: Turn, turns: int, warmup: int, deltas: int) -> dict[str, Any]:
    text_direct, text_ours = await direct(), await mine()
    assert text_direct == text_ours and text_ours.count(" ") == deltas, "the two paths differ"
    for _ in range(warmup):
        await direct()
        await mine()
    wall: dict[str, list[float]] = {"direct": [], "ours": []}
    for i in range(turns):
        order = [("direct", direct), ("ours", mine)]
        for name, turn in order if i % 2 == 0 else order[::-1]:
            wall[name].append(await timed(turn))
    mem: dict[str, list[int]] = {"direct": [], "ours": []}
    tracemalloc.start()
    try:
        for _ in range(max(5, turns // 3)):
            mem["direct"].append(await peak(direct))
            mem["ours"].append(await peak(mine))
    finally:
        tracemalloc.stop()
    d_ms = statistics.median(wall["direct"]) * 1000
    o_ms = statistics.median(wall["ours"]) * 1000
    d_kib = statistics.median(mem["direct"]) / 1024
    o_kib = statistics.median(mem["ours"]) / 1024
    return {
        "direct_ms_median": round(d_ms, 3),
        "ours_ms_median": round(o_ms, 3),
        "ratio_wall": round(o_ms / d_ms, 3),
        "overhead_ms_per_turn": round(o_ms - d_ms, 3),
        "overhead_us_per_delta": round((o_ms - d_ms) * 1000 / deltas, 2),
        "direct_ms_p90": round(sorted(wall["direct"])[int(turns * 0.9) - 1] * 1000, 3),
        "ours_ms_p90": round(sorted(wall["ours"])[int(turns * 0.9) - 1] * 1000, 3),
        "direct_peak_kib_median": round(d_kib, 1),
        "ours_peak_kib_median": round(o_kib, 1),
        "ratio_peak_memory": round(o_kib / d_kib, 3),
    }


async def main_async(turns: int, warmup: int, deltas: int, base_url: str) -> dict[str, Any]:
    out: dict[str, Any] = {}
    a_provider = AnthropicProvider(KEY, base_url, timeout_s=60)
    out["anthropic"] = await compare(
        direct_anthropic(base_url), ours(a_provider), turns, warmup, deltas
    )
    await a_provider.aclose()
    o_provider = OpenAIProvider(KEY, f"{base_url}/v1", timeout_s=60)
    out["openai"] = await compare(direct_openai(base_url), ours(o_provider), turns, warmup, deltas)
    await o_provider.aclose()
    return out


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--turns", type=int, default=30, help="measured turns per side")
    parser.add_argument("--warmup", type=int, default=3)
    parser.add_argument("--deltas", type=int, default=200, help="text deltas per reply")
    args = parser.parse_args()
    proc, base_url = start_stub(args.deltas)
    try:
        results = asyncio.run(main_async(args.turns, args.warmup, args.deltas, base_url))
    finally:
        assert proc.stdin is not None
        proc.stdin.close()
        proc.wait(10)
    report = {
        "benchmark": "provider_overhead",
        "turns": args.turns,
        "text_deltas": args.deltas,
        "machine": machine(),
        **results,
    }
    print(json.dumps(report, indent=2))


if __name__ == "__main__":
    main()
