"""``sylk mcp serve`` on stdio answers every line it cannot serve, and serves on.

A real server process is written raw bytes: a line that is not JSON, JSON that is no
JSON-RPC message, bytes that are not UTF-8, and lines over the size limit. Each gets
its JSON-RPC error on stdout (parse error -32700, invalid request -32600, with the
request's id when it has a usable one and null otherwise), in order, and the next
valid request is answered. An over-long line is read bounded: the server's peak
memory grows by far less than the line.
"""

from __future__ import annotations

import asyncio
import json
import os
from pathlib import Path
from typing import Any

import pytest

from backend.mcp.server.stdio_transport import (
    MAX_LINE_BYTES,
    OversizedLine,
    ThreadedLines,
    check_line,
)
from tests.integration.mcp.test_mcp_http import INITIALIZE, STARTUP_S, start_serve

ROOT = Path(__file__).resolve().parents[3]
PARSE_ERROR, INVALID_REQUEST = -32700, -32600
BIG_LINE = 64 * 1024 * 1024  # sixteen times the limit


class StdioServer:
    """``sylk mcp serve`` as a child process, spoken to in raw lines."""

    def __init__(self, process: asyncio.subprocess.Process) -> None:
        self.process = process
        assert process.stdin is not None and process.stdout is not None
        self.stdin, self.stdout = process.stdin, process.stdout

    async def send(self, *lines: bytes) -> None:
        for line in lines:
            self.stdin.write(line + b"\n")
            await self.stdin.drain()

    async def reply(self) -> dict[str, Any]:
        line = await asyncio.wait_for(self.stdout.readline(), STARTUP_S)
        assert line, "the server closed stdout"
        answer: dict[str, Any] = json.loads(line)
        return answer

    def peak_rss_kib(self) -> int:
        status = Path(f"/proc/{self.process.pid}/status").read_text()
        return int(next(row.split()[1] for row in status.splitlines() if row.startswith("VmHWM")))


async def start(data_dir: Path, workspace: Path) -> StdioServer:
    process = await start_serve(data_dir, workspace, talk=True, limit=1 << 20)
    return StdioServer(process)


async def stop(server: StdioServer) -> str:
    server.stdin.close()
    _out, err = await asyncio.wait_for(server.process.communicate(), STARTUP_S)
    assert server.process.returncode == 0, err.decode()
    stderr = err.decode()
    assert "Traceback" not in stderr
    return stderr


def request(request_id: int, method: str) -> bytes:
    return json.dumps({"jsonrpc": "2.0", "id": request_id, "method": method}).encode()


async def test_malformed_lines_get_error_replies_and_the_server_serves_on(
    data_dir: Path, workspace: Path
) -> None:
    server = await start(data_dir, workspace)
    try:
        await server.send(b"not json at all", json.dumps(INITIALIZE).encode())
        refused = await server.reply()
        assert refused["id"] is None and refused["error"]["code"] == PARSE_ERROR
        assert refused["error"]["message"].startswith("parse error")
        assert (await server.reply())["id"] == 1  # initialize answered after the refusal
        await server.send(b'{"jsonrpc": "2.0", "method": "notifications/initialized"}')

        bad = [
            (b'{"jsonrpc": "2.0", "id": 5}', INVALID_REQUEST, 5),  # neither request nor reply
            (b'{"jsonrpc": "1.0", "id": "x", "method": "ping"}', INVALID_REQUEST, "x"),
            (b'{"jsonrpc": "2.0", "id": true, "method": 7}', INVALID_REQUEST, None),
            (b"[1, 2, 3]", INVALID_REQUEST, None),  # batches are not accepted
            (b"42", INVALID_REQUEST, None),
            (b'{"jsonrpc": "2.0", "id": 6, "method": "ping"', PARSE_ERROR, None),  # cut short
            (b'{"jsonrpc": "2.0", "id": 7, "method": "\xff\xfe"}', PARSE_ERROR, None),
            (b"[" * 100_000, PARSE_ERROR, None),  # deeper than any parser goes
        ]
        await server.send(*(line for line, _code, _id in bad), request(8, "ping"))
        for line, code, request_id in bad:
            answer = await server.reply()
            assert answer["jsonrpc"] == "2.0" and answer["id"] == request_id, (line, answer)
            assert answer["error"]["code"] == code, (line, answer)
        assert await server.reply() == {"jsonrpc": "2.0", "id": 8, "result": {}}

        await server.send(request(9, "no/such/method"))
        assert (await server.reply())["error"]["code"] == -32601  # the SDK's own answer
        await server.send(request(10, "tools/list"))
        tools = (await server.reply())["result"]["tools"]
        assert {tool["name"] for tool in tools} == {"search", "describe", "execute", "batch"}
    finally:
        stderr = await stop(server)
    assert "refused a stdin line" not in stderr  # logged to sylk.log, not the terminal


async def test_an_over_long_line_is_read_bounded_and_answered(
    data_dir: Path, workspace: Path
) -> None:
    server = await start(data_dir, workspace)
    try:
        await server.send(json.dumps(INITIALIZE).encode())
        assert (await server.reply())["id"] == 1
        head = b'{"jsonrpc": "2.0", "id": 2, "method": "ping", "params": {"pad": "'
        at_limit = head + b"x" * (MAX_LINE_BYTES - len(head) - 3) + b'"}}'
        assert len(at_limit) == MAX_LINE_BYTES
        await server.send(at_limit)
        assert await server.reply() == {"jsonrpc": "2.0", "id": 2, "result": {}}
        before = server.peak_rss_kib()  # after a request of the largest size served
        just_over = at_limit.replace(b"xxx", b"xxxx", 1)
        await server.send(just_over, b"y" * BIG_LINE, request(3, "ping"))
        for _ in range(2):
            refused = await server.reply()
            assert refused["id"] is None and refused["error"]["code"] == INVALID_REQUEST
            assert refused["error"]["message"].startswith("request too large")
            assert f"at most {MAX_LINE_BYTES}" in refused["error"]["message"]
        assert await server.reply() == {"jsonrpc": "2.0", "id": 3, "result": {}}
        grown_mib = (server.peak_rss_kib() - before) / 1024
        assert grown_mib < BIG_LINE / (1 << 20) / 4, f"peak memory grew by {grown_mib:.0f} MiB"
    finally:
        await stop(server)


@pytest.mark.parametrize(
    ("line", "expected"),
    [
        (b'{"jsonrpc":"2.0","id":1,"method":"ping"}', '{"jsonrpc":"2.0","id":1,"method":"ping"}'),
        (OversizedLine(10), INVALID_REQUEST),
        (b"{", PARSE_ERROR),
        (b'{"id": 3}', INVALID_REQUEST),
    ],
)
def test_check_line(line: bytes | OversizedLine, expected: str | int) -> None:
    checked = check_line(line, limit=8)
    if isinstance(expected, str):
        assert checked == expected
    else:
        assert not isinstance(checked, str) and checked.error.code == expected


async def test_lines_split_across_reads_and_the_limit() -> None:
    """Lines are cut at every newline whatever the chunking, a blank one is skipped, and a
    line exactly at the limit passes while one byte more does not."""
    read_end, write_end = os.pipe()
    payload = b"a" * 8 + b"\n\n  \n" + b"b" * 9 + b"\n" + b"c" * 3
    os.write(write_end, payload)
    os.close(write_end)
    lines = [line async for line in ThreadedLines(read_end, limit=8)]
    assert lines == [b"a" * 8, OversizedLine(9), b"ccc"]
