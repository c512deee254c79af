"""A proxy that asks llama-cpp-python without streaming when tools are offered.

llama-cpp-python 0.3.36's ``chatml-function-calling`` handler cannot stream a tool
call (``ValueError: Automatic streaming tool choice is not supported``, raised after
the HTTP 200, so the client gets an empty stream). Sylk always streams. To see how the
rest of a tool-using turn fares against the real server (the tool result fed back, the
final answer), ``local_model_check.py`` also runs the turn through this proxy: a
streamed request with tools is sent upstream unstreamed, and the reply is replayed as
the chunks a streaming server would send. Everything else passes through untouched.
"""

from __future__ import annotations

import json
import threading
import urllib.error
import urllib.request
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any


def as_chunks(reply: dict[str, Any]) -> bytes:
    """A chat completion replayed as server-sent events: content and tool calls in one
    delta, then the finish reason, then the usage, then ``[DONE]``."""
    choice = reply["choices"][0]
    message = choice.get("message") or {}
    delta: dict[str, Any] = {"role": "assistant", "content": message.get("content") or ""}
    calls = message.get("tool_calls") or []
    if calls:
        delta["tool_calls"] = [{"index": i, **call} for i, call in enumerate(calls)]
    base = {k: reply.get(k) for k in ("id", "created", "model")}
    base["object"] = "chat.completion.chunk"
    events = [
        {**base, "choices": [{"index": 0, "delta": delta, "finish_reason": None}]},
        {**base, "choices": [{"index": 0, "delta": {}, "finish_reason": choice["finish_reason"]}]},
    ]
    if reply.get("usage"):
        events.append({**base, "choices": [], "usage": reply["usage"]})
    lines = [f"data: {json.dumps(event)}\n\n" for event in events] + ["data: [DONE]\n\n"]
    return "".join(lines).encode()


class _Handler(BaseHTTPRequestHandler):
    upstream = ""  # set on the subclass each proxy makes

    def log_message(self, format: str, *args: Any) -> None:  # quiet
        return

    def do_GET(self) -> None:
        self._forward(None)

    def do_POST(self) -> None:
        raw = self.rfile.read(int(self.headers.get("Content-Length") or 0))
        try:
            body = json.loads(raw)
        except ValueError:
            body = None
        if isinstance(body, dict) and body.get("stream") and body.get("tools"):
            body = {k: v for k, v in body.items() if k not in ("stream", "stream_options")}
            status, data, _ = self._upstream(json.dumps(body).encode())
            if status == 200:
                self._reply(200, as_chunks(json.loads(data)), "text/event-stream")
                return
            self._reply(status, data, "application/json")
            return
        self._forward(raw)

    def _forward(self, raw: bytes | None) -> None:
        status, data, kind = self._upstream(raw)
        self._reply(status, data, kind)

    def _upstream(self, raw: bytes | None) -> tuple[int, bytes, str]:
        request = urllib.request.Request(
            self.upstream + self.path, data=raw, headers={"Content-Type": "application/json"}
        )
        try:
            with urllib.request.urlopen(request, timeout=900) as reply:
                return reply.status, reply.read(), reply.headers.get("Content-Type", "")
        except urllib.error.HTTPError as exc:
            return exc.code, exc.read(), exc.headers.get("Content-Type", "")

    def _reply(self, status: int, data: bytes, kind: str) -> None:
        self.send_response(status)
        self.send_header("Content-Type", kind or "application/json")
        self.send_header("Content-Length", str(len(data)))
        self.end_headers()
        self.wfile.write(data)


class UnstreamedToolsProxy:
    """Listens on 127.0.0.1 (a free port) in a thread; ``base`` is its ``/v1`` URL."""

    def __init__(self, upstream_root: str) -> None:
        handler = type("Handler", (_Handler,), {"upstream": upstream_root.rstrip("/")})
        self._server = ThreadingHTTPServer(("127.0.0.1", 0), handler)
        self.base = f"http://127.0.0.1:{self._server.server_address[1]}/v1"
        self._thread = threading.Thread(target=self._server.serve_forever, daemon=True)
        self._thread.start()

    def close(self) -> None:
        self._server.shutdown()
        self._server.server_close()
