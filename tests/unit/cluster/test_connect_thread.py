"""The thread that connects to Ray outlives the connect: a local head's processes carry
``PR_SET_PDEATHSIG`` bound to the thread that forked them (Ray sets it), so a connect thread
that returned killed the head at once (a real `sylk run` with `address = "local"` saw its
gcs_server and raylet die, and waited 60 s on a dead head). Shown with a child started the
way Ray starts them, no Ray needed."""

from __future__ import annotations

import ctypes
import signal
import subprocess
import sys
import threading

from backend.cluster.ray_connection import _in_thread

PR_SET_PDEATHSIG = 1


def _die_with_the_forking_thread() -> None:
    libc = ctypes.CDLL(None, use_errno=True)
    libc.prctl(PR_SET_PDEATHSIG, signal.SIGKILL, 0, 0, 0)


def test_a_child_started_by_the_connect_keeps_running_after_the_connect_returned() -> None:
    started: list[subprocess.Popen[bytes]] = []

    def connect() -> None:
        started.append(
            subprocess.Popen(
                [sys.executable, "-c", "import time; time.sleep(60)"],
                preexec_fn=_die_with_the_forking_thread,  # noqa: PLW1509 - as Ray starts a head
            )
        )

    try:
        _in_thread(connect).result(timeout=30)
        (thread,) = [t for t in threading.enumerate() if t.name == "sylk-ray-connect"]
        thread.join(timeout=1.0)  # a thread that returned would be joined here at once
        assert thread.is_alive()
        assert started[0].poll() is None  # the child lives: its forking thread did not end
    finally:
        for child in started:
            child.kill()
            child.wait()
