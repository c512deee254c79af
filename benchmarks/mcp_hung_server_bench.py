"""Benchmark: ``sylk mcp serve`` with a misbehaving external MCP server configured.

For each kind of server (tests/stubs/mcp_broken_server.py: ``hang`` never answers
``initialize``, ``hang-child`` also leaves a child in its process group,
``stubborn`` ignores SIGTERM and end of input, ``garbage`` prints lines that are not
JSON-RPC and hangs), and for no server at all as the baseline, a fresh ``sylk mcp
serve`` over stdio is timed from spawn to its ``initialize`` reply (the MCP
Inspector gives up after 15 s), then sent SIGTERM once the server is running and
timed to its exit. The server keeps the default 30 s startup timeout, which a start
that waited for it would show. ``survivors`` counts the server's processes (and its
child's) still running, not zombies, right after the exit: it must be 0.

Usage: python benchmarks/mcp_hung_server_bench.py [--runs 3]. Prints JSON.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import signal
import statistics
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

import machine_info  # benchmarks/machine_info.py, beside this script

ROOT = Path(__file__).resolve().parents[1]
STUB = ROOT / "tests" / "stubs" / "mcp_broken_server.py"
KINDS = {"none": 0, "hang": 1, "hang-child": 2, "stubborn": 1, "garbage": 1}
INITIALIZE = {
    "jsonrpc": "2.0",
    "id": 1,
    "method": "initialize",
    "params": {
        "protocolVersion": "2025-06-18",
        "capabilities": {},
        "clientInfo": {"name": "bench", "version": "1"},
    },
}


def running(pid: int) -> bool:
    try:
        stat = Path(f"/proc/{pid}/stat").read_text()
    except FileNotFoundError:
        return False
    return stat.rsplit(")", 1)[1].split()[0] != "Z"


async def one_run(kind: str, tmp: Path) -> dict[str, Any]:
    data, workspace, config = tmp / "data", tmp / "ws", tmp / "data" / "no-config"
    workspace.mkdir(parents=True)
    config.mkdir(parents=True)
    pids = tmp / "pids"
    if kind != "none":
        command = json.dumps([sys.executable, str(STUB), kind, str(pids)])
        (config / "config.toml").write_text(f"[mcp_servers.servers.bad]\ncommand = {command}\n")
    args = ["-m", "sylk_tui", "mcp", "serve", "--data-dir", str(data), "--workspace"]
    started = time.monotonic()
    process = await asyncio.create_subprocess_exec(
        sys.executable,
        *args,
        str(workspace),
        cwd=ROOT,
        env={**os.environ, "SYLK_CONFIG_DIR": str(config)},
        stdin=asyncio.subprocess.PIPE,
        stdout=asyncio.subprocess.PIPE,
        stderr=asyncio.subprocess.DEVNULL,
    )
    assert process.stdin is not None and process.stdout is not None
    process.stdin.write(json.dumps(INITIALIZE).encode() + b"\n")
    await process.stdin.drain()
    while json.loads(await process.stdout.readline()).get("id") != 1:
        pass
    initialized = time.monotonic() - started
    while len(pids.read_text().split() if pids.exists() else []) < KINDS[kind]:  # noqa: ASYNC110
        await asyncio.sleep(0.02)  # the stub writes the file: no event to wait on
    await asyncio.sleep(0.5)  # the server is mid-startup, as a user's would be
    stopping = time.monotonic()
    process.send_signal(signal.SIGTERM)
    await process.communicate()
    stopped = time.monotonic() - stopping
    left = (
        [pid for pid in map(int, pids.read_text().split()) if running(pid)]
        if kind != "none"
        else []
    )
    return {"initialize_s": initialized, "sigterm_to_exit_s": stopped, "exit": process.returncode,
            "survivors": len(left)}  # fmt: skip


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--runs", type=int, default=3)
    runs = parser.parse_args().runs
    results: dict[str, list[dict[str, Any]]] = {kind: [] for kind in KINDS}
    for _ in range(runs):
        for kind in KINDS:  # alternated, so machine load falls on every kind alike
            with tempfile.TemporaryDirectory() as tmp:
                results[kind].append(asyncio.run(one_run(kind, Path(tmp))))
    summary = {
        kind: {
            "initialize_s_median": round(statistics.median(r["initialize_s"] for r in rows), 2),
            "sigterm_to_exit_s_median": round(
                statistics.median(r["sigterm_to_exit_s"] for r in rows), 2
            ),
            "sigterm_to_exit_s_max": round(max(r["sigterm_to_exit_s"] for r in rows), 2),
            "exit_codes": sorted({r["exit"] for r in rows}),
            "survivors": sum(r["survivors"] for r in rows),
        }
        for kind, rows in results.items()
    }
    print(json.dumps({"runs": runs, "kinds": summary, "machine": machine_info.machine()}, indent=2))


if __name__ == "__main__":
    main()
