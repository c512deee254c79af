"""An MCP server run as a child process, spoken to over its stdin/stdout.

This is an SDK ``Transport`` (an async context manager yielding the session's
read and write streams), like ``mcp.client.stdio.stdio_client``. We carry our
own because the SDK's keeps the process to itself: the hub needs its pid, its
exit status and the tail of its stderr to say why a server died, and it must
notice the death even when no call is in flight.

Shutdown follows the MCP spec order: close stdin, wait a grace period, then
SIGTERM and finally SIGKILL the server's whole process group, and reap it. A server
that never finished its handshake (hung, or not MCP at all) gets no grace after end
of input: SIGTERM follows at once.
"""

from __future__ import annotations

import logging
import os
import signal
import subprocess
from collections import deque
from collections.abc import AsyncIterator, Callable
from contextlib import asynccontextmanager, suppress
from pathlib import Path

import anyio
import mcp_types
from anyio.abc import Process
from anyio.streams.buffered import BufferedByteReceiveStream
from anyio.streams.memory import MemoryObjectReceiveStream, MemoryObjectSendStream
from mcp.shared.message import SessionMessage

log = logging.getLogger(__name__)

# What an SDK transport yields: the session's read and write streams.
Streams = tuple[
    MemoryObjectReceiveStream[SessionMessage | Exception], MemoryObjectSendStream[SessionMessage]
]

MAX_LINE_BYTES = 32 * 1024 * 1024  # one JSON-RPC message; a resource read can be large
STDERR_LINES = 40
STDERR_TAIL_CHARS = 1500


def _group_running(pgid: int) -> bool:
    """Whether any process of group ``pgid`` still runs. A zombie does not: an orphan
    whose new parent (init in a container) is slow to reap it is dead already, and
    waiting for it to vanish would only spend the grace period."""
    try:
        entries = os.listdir("/proc")
    except OSError:  # no procfs: only "no such group" proves it gone
        try:
            os.killpg(pgid, 0)
        except ProcessLookupError:
            return False
        except PermissionError:
            pass
        return True
    for entry in entries:
        if not entry.isdigit():
            continue
        try:
            with open(f"/proc/{entry}/stat", "rb") as stat:
                fields = stat.read().rsplit(b")", 1)[1].split()
        except (OSError, IndexError):
            continue  # gone meanwhile
        if len(fields) > 2 and int(fields[2]) == pgid and fields[0] != b"Z":
            return True
    return False


async def stop_group(process: Process, grace_s: float) -> None:
    """SIGTERM the process group led by ``process`` (its pid is the pgid: it was started
    in a session of its own), wait up to ``grace_s`` for every member to end, then
    SIGKILL whatever remains. The group reaches children whose parent already exited."""
    pgid = process.pid
    try:
        os.killpg(pgid, signal.SIGTERM)
    except ProcessLookupError:
        return  # the whole group is gone
    except PermissionError:  # some member is not ours to signal: keep going regardless
        log.warning("no permission to signal all of process group %d", pgid)
    with anyio.move_on_after(grace_s):
        while _group_running(pgid):
            _ = process.returncode  # lets the loop reap a leader that just exited
            await anyio.sleep(0.02)
        return
    with suppress(ProcessLookupError, PermissionError):
        os.killpg(pgid, signal.SIGKILL)


def describe_exit(returncode: int | None) -> str:
    if returncode is None:
        return "still running"
    if returncode < 0:
        try:
            name = signal.Signals(-returncode).name
        except ValueError:
            name = f"signal {-returncode}"
        return f"killed by {name}"
    return f"exited with code {returncode}"


class ServerProcess:
    """One run of a server command. ``connect()`` is the transport; use it once."""

    def __init__(
        self,
        name: str,
        command: list[str],
        *,
        env: dict[str, str],
        cwd: Path | None = None,
        grace_s: float = 2.0,
        on_exit: Callable[[], None] | None = None,
    ) -> None:
        self.name = name
        self.command = command
        self.env = env
        self.cwd = cwd
        self.grace_s = grace_s
        self._on_exit = on_exit
        self._process: Process | None = None
        self._stderr: deque[str] = deque(maxlen=STDERR_LINES)
        self._stderr_done = anyio.Event()
        self._exited = anyio.Event()
        self.initialized = False  # set once the handshake is done: it earns a graceful stop
        self.junk_lines = 0  # stdout lines that were not JSON-RPC: a non-MCP program?
        self.junk_sample = ""

    def junk_note(self) -> str:
        """Why the server may not speak MCP at all, or '' when its stdout was clean."""
        if not self.junk_lines:
            return ""
        lines = "line" if self.junk_lines == 1 else "lines"
        return (
            f"its stdout is not MCP ({self.junk_lines} {lines} not JSON-RPC, "
            f"first {self.junk_sample!r})"
        )

    @property
    def pid(self) -> int | None:
        return None if self._process is None else self._process.pid

    @property
    def returncode(self) -> int | None:
        return None if self._process is None else self._process.returncode

    def stderr_tail(self) -> str:
        text = "\n".join(line for line in self._stderr if line.strip())
        return text[-STDERR_TAIL_CHARS:]

    async def wait_exited(self, timeout_s: float) -> bool:
        """Wait until the process has ended and its stderr is read to the end."""
        with anyio.move_on_after(timeout_s):
            await self._exited.wait()
            await self._stderr_done.wait()
            return True
        return self._exited.is_set()

    @asynccontextmanager
    async def connect(self) -> AsyncIterator[Streams]:
        process = await anyio.open_process(
            self.command,
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            env=self.env,
            cwd=self.cwd,
            start_new_session=True,  # its own process group: we can stop its children too
        )
        self._process = process
        incoming_w, incoming_r = anyio.create_memory_object_stream[SessionMessage | Exception](0)
        outgoing_w, outgoing_r = anyio.create_memory_object_stream[SessionMessage](0)
        async with anyio.create_task_group() as tg:
            tg.start_soon(self._read_stdout, process, incoming_w)
            tg.start_soon(self._write_stdin, process, outgoing_r, incoming_w)
            tg.start_soon(self._read_stderr, process)
            tg.start_soon(self._watch, process)
            try:
                yield incoming_r, outgoing_w
            finally:
                # Shielded and bounded: a cancelled caller must not leak the process.
                with anyio.CancelScope(shield=True):
                    await self._stop(process)
                    for stream in (incoming_r, outgoing_w, incoming_w, outgoing_r):
                        await stream.aclose()
                tg.cancel_scope.cancel()

    async def _read_stdout(
        self, process: Process, sink: MemoryObjectSendStream[SessionMessage | Exception]
    ) -> None:
        assert process.stdout is not None
        reader = BufferedByteReceiveStream(process.stdout)
        async with sink:
            while True:
                try:
                    line = await reader.receive_until(b"\n", MAX_LINE_BYTES)
                except (anyio.EndOfStream, anyio.IncompleteRead, anyio.ClosedResourceError):
                    return
                except anyio.DelimiterNotFound:
                    log.error("MCP server %r sent a line over %d bytes", self.name, MAX_LINE_BYTES)
                    return
                if not line.strip():
                    continue
                try:
                    item: SessionMessage | Exception = SessionMessage(
                        mcp_types.jsonrpc_message_adapter.validate_json(line, by_name=False)
                    )
                except ValueError as exc:  # not JSON-RPC: the session reports and skips it
                    log.warning("MCP server %r wrote a non-protocol line to stdout", self.name)
                    if not self.junk_lines:
                        self.junk_sample = line[:80].decode(errors="replace").strip()
                    self.junk_lines += 1
                    item = exc
                try:
                    await sink.send(item)
                except (anyio.ClosedResourceError, anyio.BrokenResourceError):
                    return

    async def _write_stdin(
        self,
        process: Process,
        source: MemoryObjectReceiveStream[SessionMessage],
        incoming: MemoryObjectSendStream[SessionMessage | Exception],
    ) -> None:
        assert process.stdin is not None
        try:
            async with source:
                async for message in source:
                    data = message.message.model_dump_json(by_alias=True, exclude_unset=True)
                    await process.stdin.send(data.encode() + b"\n")
        except (anyio.ClosedResourceError, anyio.BrokenResourceError, OSError):
            # The server stopped reading: end the session's reads so no request hangs.
            await incoming.aclose()

    async def _read_stderr(self, process: Process) -> None:
        assert process.stderr is not None
        reader = BufferedByteReceiveStream(process.stderr)
        try:
            while True:
                try:
                    raw = await reader.receive_until(b"\n", 64 * 1024)
                except anyio.DelimiterNotFound:
                    raw = await reader.receive(64 * 1024)
                except anyio.IncompleteRead:
                    raw = reader.buffer
                    self._stderr.append(raw.decode(errors="replace"))
                    return
                line = raw.decode(errors="replace")
                self._stderr.append(line)
                log.debug("[mcp %s] %s", self.name, line)
        except (anyio.EndOfStream, anyio.ClosedResourceError, anyio.BrokenResourceError, OSError):
            return
        finally:
            self._stderr_done.set()

    async def _watch(self, process: Process) -> None:
        await process.wait()
        self._exited.set()
        if self._on_exit is not None:
            self._on_exit()

    async def _stop(self, process: Process) -> None:
        if process.returncode is None:
            assert process.stdin is not None
            with suppress(OSError, anyio.BrokenResourceError, anyio.ClosedResourceError):
                await process.stdin.aclose()
            with anyio.move_on_after(self.grace_s if self.initialized else 0.05):
                await process.wait()
        if process.returncode is None and self.initialized:
            log.warning("MCP server %r ignored end of input; terminating it", self.name)
        # Even after the leader exits, children it left in its group are ended here.
        await stop_group(process, self.grace_s)
        with anyio.move_on_after(self.grace_s) as scope:
            await process.aclose()  # closes the pipes and reaps the process
        if scope.cancelled_caught:
            log.error("MCP server %r (pid %d) survived SIGKILL", self.name, process.pid)
