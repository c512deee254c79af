"""The HTTP plumbing of the model-API stub: one connection, one recorded request.

Kept apart from :mod:`tests.stubs.llm_stub` so the stub's routes (Chat
Completions, Messages, Responses, server profiles, prompt caching) have room.
"""

from __future__ import annotations

import asyncio
from dataclasses import dataclass
from typing import Any

from tests.stubs.llm_script import Vendor


@dataclass
class RecordedRequest:
    method: str
    path: str
    headers: dict[str, str]
    body: Any
    at: float

    @property
    def vendor(self) -> Vendor | None:
        return vendor_of(self.path)


def vendor_of(path: str) -> Vendor | None:
    if path.endswith("/messages"):
        return "anthropic"
    if path.endswith("/chat/completions"):
        return "openai"
    if path.endswith("/responses"):
        return "responses"
    return None


class Conn:
    """One client connection with its own read buffer (requests may pipeline)."""

    def __init__(self, reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        self.reader = reader
        self.writer = writer
        self.buffer = b""

    def gone(self) -> bool:
        return (
            self.reader.at_eof()
            or self.reader.exception() is not None
            or self.writer.transport.is_closing()
        )

    async def read_request(self) -> tuple[str, str, dict[str, str], bytes] | None:
        while b"\r\n\r\n" not in self.buffer:
            data = await self.reader.read(65536)
            if not data:
                return None
            self.buffer += data
        head, self.buffer = self.buffer.split(b"\r\n\r\n", 1)
        lines = head.decode("latin-1").split("\r\n")
        method, path, _ = lines[0].split(" ", 2)
        headers = {}
        for line in lines[1:]:
            name, _, value = line.partition(":")
            headers[name.strip().lower()] = value.strip()
        length = int(headers.get("content-length", "0"))
        while len(self.buffer) < length:
            data = await self.reader.read(65536)
            if not data:
                return None
            self.buffer += data
        body, self.buffer = self.buffer[:length], self.buffer[length:]
        return method, path, headers, body


# -- HTTP framing -------------------------------------------------------------------
_REASONS = {200: "OK", 400: "Bad Request", 401: "Unauthorized", 403: "Forbidden", 404: "Not Found",
            408: "Request Timeout", 409: "Conflict", 429: "Too Many Requests",
            500: "Internal Server Error", 502: "Bad Gateway", 503: "Service Unavailable",
            504: "Gateway Timeout", 529: "Overloaded"}  # fmt: skip


def http_head(status: int, headers: dict[str, str]) -> bytes:
    lines = [f"HTTP/1.1 {status} {_REASONS.get(status, 'Status')}", "connection: keep-alive"]
    lines.extend(f"{k}: {v}" for k, v in headers.items())
    return ("\r\n".join(lines) + "\r\n\r\n").encode("latin-1")


def http_chunk(data: bytes) -> bytes:
    return b"%x\r\n%s\r\n" % (len(data), data)
