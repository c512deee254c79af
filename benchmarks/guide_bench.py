"""Guide bus throughput and routing latency against a bare asyncio.Queue hand-off.

50 sessions x 20 agents (1,000 inboxes), a consumer task draining every inbox, one
producer per session sending round-robin to its 20 agents (a burst of one message
per agent, then a yield to the loop). Latency is send -> consumer receives, stamped
with ``time.perf_counter`` in the message's metadata just before the send.

Sides, in the same run and interleaved round by round so drift hits all of them:

* ``queue``  — the baseline: ``asyncio.Queue(maxsize=256)`` per (session, agent),
  looked up by ``(session_id, target)``; ``await queue.put(m)`` / ``await queue.get()``.
* ``bus``    — ``Bus`` with agent breakers and its flow log (the Guide's setup):
  ``await bus.send(m)`` / ``await inbox.get()``.
* ``bus_consumers`` — the same bus drained by ``AgentConsumers`` (breaker permit,
  handler call and outcome per message), as the Guide will run agents.

Two loads: *loaded* (all 50 producers flat out; msgs/s and latency under load, which
is mostly time spent waiting behind the other 999 consumers in the event loop) and
*unloaded* (one message in flight at a time, hopping across the 1,000 inboxes: the
bare cost of one hop).

Messages are built once (a pool per inbox, reused only after the consumer took them)
so neither side pays for constructing pydantic envelopes. Memory per idle session is
tracemalloc's traced growth for registering 20 agents in each of N sessions, / N.

    .venv/bin/python benchmarks/guide_bench.py [--messages 100000] [--rounds 5]

Prints one JSON object.
"""

from __future__ import annotations

import argparse
import asyncio
import gc
import json
import statistics
import sys
import time
import tracemalloc
from collections.abc import Awaitable, Callable
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

import machine_info  # benchmarks/machine_info.py, beside this script

from backend.bus.breakers import AgentBreakers
from backend.bus.bus import Bus
from backend.bus.consumer import AgentConsumers
from backend.messages import Message, MessageType

POOL = 32  # messages per inbox; one is reused only once its consumer has taken it
Send = Callable[[Message[Any]], Awaitable[None]]


def machine() -> dict[str, Any]:
    return machine_info.machine()


def names(sessions: int, agents: int) -> tuple[list[str], list[str]]:
    return [f"s{n:03d}" for n in range(sessions)], [f"agent{n:02d}" for n in range(agents)]


def pct(ordered: list[float], p: float) -> float:
    return ordered[min(len(ordered) - 1, max(0, round(p / 100 * len(ordered)) - 1))]


class Run:
    """Counters shared by one side's producers and consumers."""

    def __init__(self, inboxes: int, total: int) -> None:
        self.sent = [0] * inboxes
        self.received = [0] * inboxes
        self.latencies: list[float] = []
        self.remaining = total
        self.done = asyncio.Event()

    def took(self, message: Message[Any]) -> None:
        meta = message.metadata
        self.latencies.append(time.perf_counter() - meta["t"])
        self.received[meta["i"]] += 1
        self.remaining -= 1
        if self.remaining == 0:
            self.done.set()


def pools(sids: list[str], agents: list[str]) -> list[list[Message[Any]]]:
    out: list[list[Message[Any]]] = []
    for s in sids:
        for a in agents:
            index = len(out)
            out.append(
                [
                    Message[Any](
                        session_id=s,
                        source="bench",
                        target=a,
                        type=MessageType.CONTEXT_REQUEST,
                        payload={"text": "route me"},
                        metadata={"t": 0.0, "i": index},
                    )
                    for _ in range(POOL)
                ]
            )
    return out


async def yield_until(done: Callable[[], bool]) -> None:
    while True:
        if done():
            return
        await asyncio.sleep(0)


async def produce(
    run: Run, pool: list[list[Message[Any]]], *, first: int, agents: int, count: int, send: Send
) -> None:
    n = 0
    while n < count:
        for a in range(agents):
            i = first + a
            if run.sent[i] - run.received[i] >= POOL:
                await yield_until(lambda i=i: run.sent[i] - run.received[i] < POOL)  # type: ignore[misc]
            message = pool[i][run.sent[i] % POOL]
            message.metadata["t"] = time.perf_counter()
            await send(message)
            run.sent[i] += 1
            n += 1
            if n == count:
                break
        await asyncio.sleep(0)


class Side:
    """One side's inboxes and running consumers, ready to be sent to."""

    def __init__(self, side: str, sids: list[str], anames: list[str], run: Run) -> None:
        self.tasks: list[asyncio.Task[Any]] = []
        self.consumers: AgentConsumers | None = None
        if side == "queue":
            queues: dict[tuple[str, str], asyncio.Queue[Message[Any]]] = {
                (s, a): asyncio.Queue(maxsize=256) for s in sids for a in anames
            }

            def put(m: Message[Any]) -> Awaitable[None]:
                return queues[(m.session_id, m.target or "")].put(m)

            async def drain_queue(q: asyncio.Queue[Message[Any]]) -> None:
                while True:
                    run.took(await q.get())

            self.send: Send = put
            self.tasks = [asyncio.create_task(drain_queue(q)) for q in queues.values()]
            return
        bus = Bus(breakers=AgentBreakers())
        inboxes = [bus.register(s, a) for s in sids for a in anames]
        self.send = bus.send
        if side == "bus":

            async def drain_inbox(inbox: Any) -> None:
                while True:
                    run.took(await inbox.get())

            self.tasks = [asyncio.create_task(drain_inbox(i)) for i in inboxes]
            return
        self.consumers = AgentConsumers(bus)

        async def handler(message: Message[Any]) -> None:
            run.took(message)

        for s in sids:
            for a in anames:
                self.consumers.start(s, a, handler)

    async def close(self) -> None:
        for task in self.tasks:
            task.cancel()
        await asyncio.gather(*self.tasks, return_exceptions=True)
        if self.consumers is not None:
            await self.consumers.aclose()


async def loaded(side: str, sessions: int, agents: int, total: int) -> dict[str, Any]:
    """Every session's producer sending flat out; throughput and latency under load."""
    sids, anames = names(sessions, agents)
    pool = pools(sids, anames)
    per_session = total // sessions
    total = per_session * sessions
    run = Run(len(pool), total)
    target = Side(side, sids, anames, run)
    await asyncio.sleep(0)
    gc.collect()
    started = time.perf_counter()
    producers = [
        asyncio.create_task(
            produce(run, pool, first=n * agents, agents=agents, count=per_session, send=target.send)
        )
        for n in range(sessions)
    ]
    await run.done.wait()
    elapsed = time.perf_counter() - started
    await asyncio.gather(*producers)
    await target.close()
    assert sum(run.received) == total, "messages were lost"
    return {"messages": total, "seconds": elapsed, "latencies": run.latencies}


async def unloaded(side: str, sessions: int, agents: int, pings: int) -> list[float]:
    """One message in flight at a time, to inboxes in turn: the bare hop latency."""
    sids, anames = names(sessions, agents)
    pool = pools(sids, anames)
    run = Run(len(pool), pings)
    target = Side(side, sids, anames, run)
    await asyncio.sleep(0)
    gc.collect()
    for n in range(pings):
        i = (n * 7919) % len(pool)  # hop around the 1,000 inboxes
        message = pool[i][run.sent[i] % POOL]
        message.metadata["t"] = time.perf_counter()
        await target.send(message)
        run.sent[i] += 1
        await yield_until(lambda i=i: run.received[i] >= run.sent[i])  # type: ignore[misc]
    await target.close()
    return run.latencies


def summarise(rounds: list[dict[str, Any]]) -> dict[str, Any]:
    lat = sorted(x for r in rounds for x in r["latencies"])
    rates = [r["messages"] / r["seconds"] for r in rounds]
    return {
        "msgs_per_s": round(statistics.median(rates)),
        "msgs_per_s_rounds": [round(r) for r in rates],
        "p50_us": round(pct(lat, 50) * 1e6, 2),
        "p99_us": round(pct(lat, 99) * 1e6, 2),
        "samples": len(lat),
    }


def idle_memory(sessions: int, agents: int) -> dict[str, Any]:
    sids, anames = names(sessions, agents)
    gc.collect()
    tracemalloc.start()
    before = tracemalloc.get_traced_memory()[0]
    bus = Bus(breakers=AgentBreakers())
    for s in sids:
        for a in anames:
            bus.register(s, a)
    bus_bytes = tracemalloc.get_traced_memory()[0] - before
    del bus
    gc.collect()
    before = tracemalloc.get_traced_memory()[0]
    queues = {s: {a: asyncio.Queue[Message[Any]](maxsize=256) for a in anames} for s in sids}
    queue_bytes = tracemalloc.get_traced_memory()[0] - before
    del queues
    tracemalloc.stop()
    return {
        "sessions_measured": sessions,
        "agents_per_session": agents,
        "bus_bytes_per_idle_session": round(bus_bytes / sessions),
        "queue_dict_bytes_per_idle_session": round(queue_bytes / sessions),
    }


async def main_async(args: argparse.Namespace) -> dict[str, Any]:
    sides = ["queue", "bus", "bus_consumers"]
    shape = (args.sessions, args.agents)
    for side in sides:  # warm-up (imports, code paths, allocator), not reported
        await loaded(side, *shape, args.sessions * args.agents * 4)
    results: dict[str, list[dict[str, Any]]] = {s: [] for s in sides}
    hops: dict[str, list[float]] = {s: [] for s in sides}
    for _ in range(args.rounds):
        for side in sides:
            results[side].append(await loaded(side, *shape, args.messages))
            hops[side].extend(await unloaded(side, *shape, args.pings))
    summary = {side: summarise(rs) for side, rs in results.items()}
    for side in sides:
        lat = sorted(hops[side])
        summary[side]["unloaded_p50_us"] = round(pct(lat, 50) * 1e6, 2)
        summary[side]["unloaded_p99_us"] = round(pct(lat, 99) * 1e6, 2)
    base, bus, full = summary["queue"], summary["bus"], summary["bus_consumers"]

    def ratio(a: dict[str, Any], key: str) -> float:
        return round(float(a[key]) / float(base[key]), 3)

    return {
        "benchmark": "guide_bus",
        "machine": machine(),
        "config": {
            "sessions": args.sessions,
            "agents_per_session": args.agents,
            "inboxes": args.sessions * args.agents,
            "messages_per_round": args.messages,
            "pings_per_round": args.pings,
            "rounds": args.rounds,
        },
        "baseline_asyncio_queue": base,
        "bus": bus,
        "bus_with_consumers": full,
        "ratio_vs_queue": {
            "bus_throughput": ratio(bus, "msgs_per_s"),
            "bus_consumers_throughput": ratio(full, "msgs_per_s"),
            "bus_loaded_p50": ratio(bus, "p50_us"),
            "bus_loaded_p99": ratio(bus, "p99_us"),
            "bus_unloaded_p50": ratio(bus, "unloaded_p50_us"),
            "bus_unloaded_p99": ratio(bus, "unloaded_p99_us"),
        },
        "memory": idle_memory(args.idle_sessions, args.agents),
    }


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--sessions", type=int, default=50)
    parser.add_argument("--agents", type=int, default=20)
    parser.add_argument("--messages", type=int, default=100_000, help="per side per round")
    parser.add_argument("--pings", type=int, default=5000, help="unloaded hops per side per round")
    parser.add_argument("--rounds", type=int, default=5)
    parser.add_argument("--idle-sessions", type=int, default=1000)
    args = parser.parse_args()
    started = time.perf_counter()
    out = asyncio.run(main_async(args))
    out["wall_seconds"] = round(time.perf_counter() - started, 1)
    print(json.dumps(out, indent=2))


if __name__ == "__main__":
    main()
