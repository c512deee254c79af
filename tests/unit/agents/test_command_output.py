"""The output relay: chunks coalesced into few, bounded, ordered batches."""

from __future__ import annotations

import asyncio
import threading
from typing import Any

from backend.agents.command_output import OutputRelay
from tests.support.polling import until


class Batches:
    def __init__(self) -> None:
        self.sent: list[dict[str, Any]] = []

    async def __call__(self, batch: dict[str, Any]) -> None:
        await asyncio.sleep(0)  # a real sink awaits (an archive, a publish)
        self.sent.append(batch)


async def test_a_burst_of_chunks_is_one_batch_holding_the_newest_text() -> None:
    batches = Batches()
    relay = OutputRelay(batches, interval_s=60, max_chars=100)
    for n in range(1000):
        relay("stdout", f"{n:04d}\n")
    await relay.aclose()
    assert relay.chunks == 1000 and relay.batches == 1
    [batch] = batches.sent
    assert batch["stream"] == "stdout" and len(batch["text"]) == 100
    assert batch["text"].endswith("0999\n") and batch["dropped"] == 5000 - 100


async def test_batches_go_out_in_order_and_name_their_streams() -> None:
    batches = Batches()
    relay = OutputRelay(batches, interval_s=0.001)
    relay("stdout", "one\n")
    await until(lambda: batches.sent, what="the first batch")
    relay("stderr", "two\n")
    relay("stdout", "three\n")
    await relay.aclose()
    assert [b["text"] for b in batches.sent] == ["one\n", "two\nthree\n"]
    assert [b["stream"] for b in batches.sent] == ["stdout", "mixed"]
    relay("stdout", "late\n")  # after close: dropped, never sent
    await asyncio.sleep(0)
    assert len(batches.sent) == 2


async def test_chunks_from_another_thread_are_relayed_on_the_loop() -> None:
    batches = Batches()
    relay = OutputRelay(batches, interval_s=0.001)
    worker = threading.Thread(target=lambda: [relay("stdout", f"{n}\n") for n in range(3)])
    worker.start()
    worker.join()
    await until(lambda: relay.chunks == 3, what="the chunks to reach the loop")
    await relay.aclose()
    assert "".join(b["text"] for b in batches.sent) == "0\n1\n2\n"


async def test_a_failing_sink_does_not_fail_the_command_and_discard_stops_sending() -> None:
    async def broken(_batch: dict[str, Any]) -> None:
        raise RuntimeError("watcher gone")

    relay = OutputRelay(broken, interval_s=60)
    relay("stdout", "x")
    await relay.aclose()  # logged, not raised
    batches = Batches()
    relay = OutputRelay(batches, interval_s=60)
    relay("stdout", "never sent")
    relay.discard()
    await asyncio.sleep(0)
    assert batches.sent == []
