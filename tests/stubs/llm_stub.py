"""A local HTTP/1.1 stand-in for the Anthropic and OpenAI APIs.

It runs on 127.0.0.1 (a free port) in a background thread with its own event
loop, so async tests, sync tests, benchmarks and subprocesses (``sylk run``)
can all use it; the vendor SDKs talk to it unmodified through ``base_url``::

    with LLMStub() as stub:
        stub.push(Status(429, retry_after=0.05), text_reply("Hel", "lo"))
        client = anthropic.AsyncAnthropic(api_key="k", base_url=stub.base_url)
        ...
        assert stub.count("/v1/messages") == 2

Every request is recorded (path, headers, JSON body). Responses come from a
script queue (see :mod:`tests.stubs.llm_script`); ``default`` answers when the
queue is empty, otherwise an empty queue answers 400 so a test fails fast.
"""

from __future__ import annotations

import asyncio
import contextlib
import json
import socket
import struct
import threading
import time
from collections import deque
from typing import Any

from tests.stubs.llm_script import (
    Drop,
    Item,
    Reply,
    Stall,
    Status,
    Vendor,
    anthropic_events,
    error_body,
    stream_error,
    whole_reply,
)
from tests.stubs.prompt_cache import PromptCache
from tests.stubs.responses_stub import (
    responses_events,
    responses_rejection,
    responses_stream_error,
    responses_whole,
)
from tests.stubs.server_profiles import ServerPlay, StubProfile
from tests.stubs.stub_http import Conn, RecordedRequest, http_chunk, http_head, vendor_of


class LLMStub:
    def __init__(
        self,
        host: str = "127.0.0.1",
        *,
        profile: StubProfile | None = None,
        llama_cpp: bool = False,  # the same as profile="llama-cpp-python"
    ) -> None:
        self.host = host
        self.server = ServerPlay.of(profile, llama_cpp=llama_cpp)  # a real server's quirks
        self.prompt_cache: PromptCache | None = None  # set one to play prefix caching
        self.port = 0
        self.default: Item | None = None
        self._lock = threading.Lock()
        self._queue: deque[Item] = deque()
        self._requests: list[RecordedRequest] = []
        self._aborted = 0  # responses the client walked away from
        self._loop: asyncio.AbstractEventLoop | None = None
        self._thread: threading.Thread | None = None
        self._server: asyncio.Server | None = None
        self._conns: set[Conn] = set()

    # -- lifecycle ----------------------------------------------------------------
    def start(self) -> LLMStub:
        ready = threading.Event()
        failure: list[BaseException] = []

        def run() -> None:
            loop = asyncio.new_event_loop()
            self._loop = loop
            try:
                self._server = loop.run_until_complete(
                    asyncio.start_server(self._serve, self.host, 0, limit=1 << 20)
                )
                self.port = self._server.sockets[0].getsockname()[1]
            except BaseException as exc:
                failure.append(exc)
                ready.set()
                return
            ready.set()
            loop.run_forever()
            loop.run_until_complete(loop.shutdown_asyncgens())
            loop.close()

        self._thread = threading.Thread(target=run, name="llm-stub", daemon=True)
        self._thread.start()
        ready.wait(10)
        if failure:
            raise failure[0]
        return self

    def stop(self) -> None:
        loop, thread = self._loop, self._thread
        if loop is None or thread is None:
            return
        with contextlib.suppress(RuntimeError):
            asyncio.run_coroutine_threadsafe(self._shutdown(), loop).result(10)
            loop.call_soon_threadsafe(loop.stop)
        thread.join(10)
        self._loop = self._thread = None

    async def _shutdown(self) -> None:
        if self._server is not None:
            self._server.close()
        for conn in list(self._conns):  # handlers see the close and return
            conn.writer.transport.abort()
        for _ in range(200):
            if not self._conns:
                break
            await asyncio.sleep(0.005)

    def __enter__(self) -> LLMStub:
        return self.start()

    def __exit__(self, *exc: object) -> None:
        self.stop()

    # -- addresses ----------------------------------------------------------------
    @property
    def base_url(self) -> str:
        """The Anthropic SDK's base_url (it appends /v1/messages)."""
        return f"http://{self.host}:{self.port}"

    @property
    def openai_base_url(self) -> str:
        """The OpenAI SDK's base_url (it appends /chat/completions)."""
        return f"{self.base_url}/v1"

    @staticmethod
    def unused_url(host: str = "127.0.0.1") -> str:
        """A URL where nothing listens: connecting is refused."""
        with socket.socket() as sock:
            sock.bind((host, 0))
            port = sock.getsockname()[1]
        return f"http://{host}:{port}"

    # -- script and records ---------------------------------------------------------
    def push(self, *items: Item | list[Item]) -> None:
        with self._lock:
            for item in items:
                self._queue.extend(item if isinstance(item, list) else [item])

    def clear(self) -> None:
        with self._lock:
            self._queue.clear()
            self._requests.clear()
            self._aborted = 0

    @property
    def pending(self) -> int:
        with self._lock:
            return len(self._queue)

    @property
    def requests(self) -> list[RecordedRequest]:
        with self._lock:
            return list(self._requests)

    def count(self, path: str | None = None) -> int:
        with self._lock:
            return sum(1 for r in self._requests if path is None or r.path == path)

    @property
    def aborted(self) -> int:
        """How many streamed responses the client closed before they ended."""
        with self._lock:
            return self._aborted

    def wait_aborted(self, n: int = 1, timeout: float = 2.0) -> bool:
        end = time.monotonic() + timeout
        while time.monotonic() < end:
            if self.aborted >= n:
                return True
            time.sleep(0.005)
        return self.aborted >= n

    def _next_item(self) -> Item | None:
        with self._lock:
            return self._queue.popleft() if self._queue else self.default

    # -- serving ------------------------------------------------------------------
    async def _serve(self, reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        conn = Conn(reader, writer)
        self._conns.add(conn)
        try:
            while True:
                request = await conn.read_request()
                if request is None:
                    break
                if not await self._handle(conn, *request):
                    break
        except (ConnectionError, asyncio.IncompleteReadError):
            pass
        finally:
            self._conns.discard(conn)
            if not writer.transport.is_closing():
                writer.close()

    async def _handle(
        self, conn: Conn, method: str, path: str, headers: dict[str, str], raw: bytes
    ) -> bool:
        """Answer one request; False when the connection must close."""
        try:
            body = json.loads(raw) if raw else None
        except ValueError:
            body = raw.decode("utf-8", "replace")
        if method == "GET" and path == "/v1/models":  # a profile probe, not recorded
            await self._json(conn, *self.server.models())
            return True
        with self._lock:
            self._requests.append(RecordedRequest(method, path, headers, body, time.monotonic()))
        vendor = vendor_of(path)
        if vendor is None or method != "POST":
            await self._json(conn, 404, {"error": {"message": f"stub: no route {method} {path}"}})
            return True
        if vendor == "openai" and (refused := self.server.refusal(body)):
            await self._json(conn, *refused)
            return True
        if vendor == "responses" and (refusal := responses_rejection(body)):
            await self._json(conn, 400, refusal)  # as strict as the real Responses API
            return True
        if self.prompt_cache and (refused := self.prompt_cache.refusal(vendor, body)):
            await self._json(conn, 400, error_body(vendor, 400, refused))
            return True
        item = self._next_item()
        if isinstance(item, Reply) and self.prompt_cache is not None:
            item = self.prompt_cache.priced(vendor, body, item)  # usage as the cache makes it
        if item is None:
            await self._json(conn, 400, error_body(vendor, 400, "llm stub: the script is empty"))
            return True
        if isinstance(item, Drop):
            if item.rst:  # linger 0: close() sends RST instead of FIN
                sock = conn.writer.get_extra_info("socket")
                sock.setsockopt(socket.SOL_SOCKET, socket.SO_LINGER, struct.pack("ii", 1, 0))
                conn.writer.transport.abort()
            else:
                conn.writer.close()
            return False
        if isinstance(item, Stall):
            await self._hold(conn, item.seconds)
            return False
        if isinstance(item, Status):
            extra = dict(item.headers)
            if item.retry_after is not None:
                extra["retry-after"] = str(item.retry_after)
            await self._json(
                conn, item.status, error_body(vendor, item.status, item.message), extra
            )
            return True
        model = str(body.get("model", "stub-model")) if isinstance(body, dict) else "stub-model"
        if not (isinstance(body, dict) and body.get("stream")):
            if vendor == "responses" and isinstance(body, dict):
                await self._json(conn, 200, responses_whole(item, model, body))
                return True
            if vendor == "openai" and isinstance(body, dict):
                await self._json(conn, 200, self.server.whole(item, model, body))
                return True
            await self._json(conn, 200, whole_reply(vendor, item, model))
            return True
        return await self._stream(conn, vendor, item, model, body)

    async def _json(
        self, conn: Conn, status: int, payload: Any, headers: dict[str, str] | None = None
    ) -> None:
        data = json.dumps(payload).encode()
        head = {"content-type": "application/json", "content-length": str(len(data))}
        head.update(self.server.headers)
        head.update(headers or {})
        conn.writer.write(http_head(status, head) + data)
        await conn.writer.drain()

    async def _stream(
        self, conn: Conn, vendor: Vendor, reply: Reply, model: str, body: dict[str, Any]
    ) -> bool:
        if vendor == "anthropic":
            events = anthropic_events(reply, model)
        elif vendor == "responses":
            events = responses_events(reply, model, body)
        else:
            events = self.server.events(reply, model, body)
        head = {"content-type": "text/event-stream", "cache-control": "no-cache",
                "transfer-encoding": "chunked", **self.server.headers}  # fmt: skip
        writer = conn.writer
        writer.write(http_head(200, head))
        sent = texts = args = 0
        fault = reply.fault
        try:
            for kind, data in events:
                if fault is not None and fault.due(sent, texts, args):
                    return await self._fault(conn, vendor, reply)
                if sent and reply.delay_s:
                    await asyncio.sleep(reply.delay_s)
                if conn.gone():
                    return self._abandoned()
                writer.write(http_chunk(data))
                await writer.drain()
                sent += 1
                texts += kind == "text"
                args += kind == "args"
            if fault is not None and fault.due(sent, texts, args):
                return await self._fault(conn, vendor, reply)
            writer.write(b"0\r\n\r\n")
            await writer.drain()
            return True
        except ConnectionError:
            return self._abandoned()

    async def _fault(self, conn: Conn, vendor: Vendor, reply: Reply) -> bool:
        fault = reply.fault
        assert fault is not None
        writer = conn.writer
        if fault.kind == "reset":
            writer.transport.abort()
            return False
        if fault.kind == "stall":
            return await self._hold(conn, fault.stall_s)
        if fault.kind == "error" and vendor == "responses":
            writer.write(http_chunk(responses_stream_error(fault)))
        elif fault.kind == "error":
            writer.write(http_chunk(stream_error(vendor, fault)))
        elif vendor == "openai":  # "end": a clean but early finish
            writer.write(http_chunk(b"data: [DONE]\n\n"))
        writer.write(b"0\r\n\r\n")
        await writer.drain()
        return True

    async def _hold(self, conn: Conn, seconds: float) -> bool:
        """Send nothing until the client leaves (counted) or ``seconds`` pass."""
        end = time.monotonic() + seconds
        while time.monotonic() < end:
            if conn.gone():
                return self._abandoned()
            await asyncio.sleep(0.005)
        conn.writer.transport.abort()
        return False

    def _abandoned(self) -> bool:
        with self._lock:
            self._aborted += 1
        return False


def main() -> None:
    """Serve a fixed reply until stdin closes: ``python -m tests.stubs.llm_stub``."""
    import argparse
    import sys

    from tests.stubs.llm_script import Reply

    parser = argparse.ArgumentParser(description=main.__doc__)
    parser.add_argument("--text-deltas", type=int, default=4, help="text deltas per reply")
    args = parser.parse_args()
    with LLMStub() as stub:
        stub.default = Reply(text=[f"word{i} " for i in range(args.text_deltas)])
        print(stub.base_url, flush=True)
        with contextlib.suppress(KeyboardInterrupt):
            sys.stdin.read()


if __name__ == "__main__":
    main()
