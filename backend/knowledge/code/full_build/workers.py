"""Worker processes that read and parse a big build's files while the caller writes.

Plain ``python -I`` children (not a multiprocessing pool, which re-imports the
parent's main module in each child) running :func:`serve`, the caller's prepare
function applied to chunks of ``(path, previous hash)``; what they answer comes
back pickled, in order.
"""

from __future__ import annotations

import contextlib
import fcntl
import os
import pickle
import subprocess
import sys
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import TypeVar

T = TypeVar("T")
Prepare = Callable[[str, str, str | None], T]
Batch = list[tuple[str, str | None]]

CHUNK = 16
_PIPE_BYTES = 1024 * 1024  # Linux's default pipe-max-size
_PACKAGE_ROOT = str(Path(__file__).resolve().parents[4])


def default_workers() -> int:
    """Worker processes for a big build: the cores this process may use, at most 2;
    none on one core (this thread would only wait for them)."""
    cores = len(os.sched_getaffinity(0)) if hasattr(os, "sched_getaffinity") else 1
    return min(2, cores) if cores > 1 else 0


def prepared_in_workers(
    root: str, batch: Batch, workers: int, prepare: Prepare[T], serve_code: str
) -> Iterator[T]:
    """``prepare(root, rel, prev_hash)`` of each of ``batch``, in order, by ``workers``
    child processes, each running ``serve_code`` (which calls :func:`serve` with the
    same ``prepare``).

    Each child reads all its chunks (round-robin) before it answers, so no pipe can
    fill both ways; a child that dies leaves the rest to this thread.
    """
    chunks = [batch[k : k + CHUNK] for k in range(0, len(batch), CHUNK)]
    code = f"import sys; sys.path.insert(0, {_PACKAGE_ROOT!r}); {serve_code}"
    procs: list[subprocess.Popen[bytes]] = []
    done = 0
    try:
        for _ in range(min(workers, len(chunks))):
            procs.append(
                subprocess.Popen(
                    [sys.executable, "-I", "-c", code],
                    stdin=subprocess.PIPE,
                    stdout=subprocess.PIPE,
                    stderr=subprocess.DEVNULL,
                    env={"PATH": os.environ.get("PATH", "")},  # no key of Sylk's
                )
            )
            assert procs[-1].stdout is not None
            with contextlib.suppress(OSError, AttributeError):  # room to run ahead of us
                fcntl.fcntl(procs[-1].stdout.fileno(), fcntl.F_SETPIPE_SZ, _PIPE_BYTES)
        for k, proc in enumerate(procs):
            assert proc.stdin is not None
            with proc.stdin:
                pickle.dump((root, chunks[k :: len(procs)]), proc.stdin)
        for k, chunk in enumerate(chunks):
            out = procs[k % len(procs)].stdout
            assert out is not None
            prepared: list[T] = pickle.load(out)
            if len(prepared) != len(chunk):
                raise EOFError("a worker answered another chunk")
            done += len(chunk)
            yield from prepared
    except (OSError, EOFError, pickle.UnpicklingError):
        for rel, prev_hash in batch[done:]:
            yield prepare(root, rel, prev_hash)
    finally:
        for proc in procs:
            proc.kill()
            proc.wait()
            if proc.stdout is not None:
                proc.stdout.close()


def serve(prepare: Prepare[T]) -> None:
    """A worker of :func:`prepared_in_workers`: its chunks in, their files prepared out."""
    root, chunks = pickle.load(sys.stdin.buffer)
    for chunk in chunks:
        pickle.dump([prepare(root, rel, prev_hash) for rel, prev_hash in chunk], sys.stdout.buffer)
        sys.stdout.buffer.flush()
