"""Benchmark: what tool blocks cost the transcript's layout.

A 200-message tail (a third of them agent replies of one to three paragraphs) is laid
out by the real ``Transcript`` widget in a headless app at 120x40, with each reply
carrying no tool blocks and then N (a folded read, an edit with a 30-line diff, a
command with a 20-line output tail, in turn; as ``tui_switch_bench --tool-calls N``
builds them). Two figures per variant, caches emptied before each round:

- ``show``: ``Transcript.show`` (what a switch pays: the newest two screens wrapped,
  the rest estimated);
- ``full``: every message wrapped (what the background wrap pays in all), and
  ``step_max``: the longest single step of that wrap (one timer callback: the stall a
  frame may see; a step is at most 100 messages or about 800 lines).

Rounds alternate between the variants, so load on the machine hits both alike.

Then the live output relay: a real shell printing ``--flood-mb`` MiB of 80-column
lines as fast as it can, read in 64 KiB chunks into ``OutputRelay`` (what an agent's
command does): how many chunks arrived, how many batches (``tool_output`` events) were
sent and how many characters they carried.

Usage: python benchmarks/transcript_blocks_bench.py [--rounds 30] [--tool-calls 3]
       [--flood-mb 50].
Prints one JSON object.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import random
import statistics
import sys
import time
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

import machine_info  # benchmarks/machine_info.py, beside this script

ROOT = Path(__file__).resolve().parents[1]
if str(ROOT) not in sys.path:
    sys.path.insert(0, str(ROOT))

from tui_switch_bench import _payload  # noqa: E402 - the same messages as the switch bench

SIZE = (120, 40)
MESSAGES = 200


def _messages(tool_calls: int) -> list[Any]:
    from backend.messages import Message, MessageType

    rng = random.Random(1729)
    start = datetime(2026, 3, 14, tzinfo=UTC)
    kinds = {"user": MessageType.USER_INPUT, "agent": MessageType.AGENT_REPLY}
    made = []
    for n in range(MESSAGES):
        kind = ("user", "agent", "notice")[n % 3]
        made.append(
            Message[dict[str, Any]](
                id=f"m{n:04d}",
                session_id="bench",
                source={"user": "user", "agent": "engineer"}.get(kind, "sylk"),
                type=kinds.get(kind, MessageType.SYSTEM_NOTICE),
                payload=_payload(rng, kind, tool_calls),
                timestamp=start + timedelta(minutes=n),
            )
        )
    return made


def _summary(samples: list[float]) -> dict[str, Any]:
    ordered = sorted(samples)
    p95 = ordered[min(len(ordered) - 1, round(0.95 * (len(ordered) - 1)))]
    return {
        "n": len(ordered),
        "p50": round(statistics.median(ordered), 2),
        "p95": round(p95, 2),
        "min": round(ordered[0], 2),
    }


async def measure(rounds: int, tool_calls: int) -> dict[str, Any]:
    from textual.app import App, ComposeResult

    from widgets.transcript import Transcript
    from widgets.transcript.folds import ActionFolds

    class Bench(App[None]):
        def compose(self) -> ComposeResult:
            yield Transcript(tz=UTC)

    variants = {"plain": _messages(0), f"{tool_calls}_blocks": _messages(tool_calls)}
    times: dict[str, dict[str, list[float]]] = {
        v: {"show": [], "full": [], "step_max": []} for v in variants
    }
    lines: dict[str, int] = {}
    app = Bench()
    async with app.run_test(size=SIZE) as pilot:
        transcript = app.query_one(Transcript)
        await pilot.pause()
        for _ in range(rounds):
            for name, messages in variants.items():
                transcript._cache.clear()
                transcript.folds = ActionFolds()
                started = time.perf_counter()
                transcript.show("bench", messages)
                times[name]["show"].append((time.perf_counter() - started) * 1000)
                steps = []
                while not transcript.laid_out:  # the background wrap, step by step, at once
                    started = time.perf_counter()
                    transcript._wrap_older(transcript._generation)
                    steps.append((time.perf_counter() - started) * 1000)
                times[name]["full"].append(sum(steps))
                times[name]["step_max"].append(max(steps, default=0.0))
                lines[name] = transcript.line_count
                await pilot.pause()
    return {
        name: {"lines": lines[name], **{k: _summary(v) for k, v in parts.items()}}
        for name, parts in times.items()
    }


async def relay_flood(megabytes: int) -> dict[str, Any]:
    from backend.agents.command_output import OutputRelay

    sent = {"batches": 0, "chars": 0}

    async def emit(batch: dict[str, Any]) -> None:
        sent["batches"] += 1
        sent["chars"] += len(batch["text"])

    command = f"head -c {megabytes * 1024 * 1024} /dev/zero | tr '\\0' x | fold -w 80"
    started = time.perf_counter()
    relay = OutputRelay(emit)
    proc = await asyncio.create_subprocess_shell(command, stdout=asyncio.subprocess.PIPE)
    assert proc.stdout is not None
    read = 0
    while chunk := await proc.stdout.read(65536):
        read += len(chunk)
        relay("stdout", chunk.decode())
    await proc.wait()
    await relay.aclose()
    seconds = time.perf_counter() - started
    return {
        "printed_bytes": read,
        "seconds": round(seconds, 2),
        "chunks": relay.chunks,
        "batches_sent": sent["batches"],
        "chars_sent": sent["chars"],
        "batches_per_second": round(sent["batches"] / seconds, 1),
    }


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rounds", type=int, default=30)
    parser.add_argument("--tool-calls", type=int, default=3, help="tool blocks per agent reply")
    parser.add_argument("--flood-mb", type=int, default=50, help="output of the relay's flood")
    args = parser.parse_args()
    import textual

    result = asyncio.run(measure(args.rounds, args.tool_calls))
    relay = asyncio.run(relay_flood(args.flood_mb))
    print(
        json.dumps(
            {
                "benchmark": "transcript_blocks",
                "machine": machine_info.machine(textual=textual.__version__),
                "data": {"messages": MESSAGES, "terminal": list(SIZE), "rounds": args.rounds},
                "layout_ms": result,
                "relay_flood": relay,
            }
        )
    )


if __name__ == "__main__":
    main()
