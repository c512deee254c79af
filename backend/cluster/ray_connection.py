"""Ray, imported and connected only when ``[orchestration] backend = "ray"``.

Every ``import ray`` of Sylk is inside a function here or in the worker's task, so the
default install (and ``import backend.engine``) never pays for it. Connecting is bounded
by ``connect_timeout_s`` (:class:`RayConnector`): past the limit the plan's node fails
with :class:`ClusterUnreachableError` instead of waiting on a head that is not there.
A ``ray://`` address needs Ray Client (``ray[client]``: grpcio), which the extra installs.
"""

from __future__ import annotations

import asyncio
import concurrent.futures
import importlib
import threading
from collections.abc import Callable
from types import ModuleType
from typing import Any

from backend.cluster.errors import ClusterUnreachableError, RayMissingError
from backend.config.orchestration import OrchestrationSettings


def import_ray() -> ModuleType:
    """``ray``, or :class:`RayMissingError` naming the extra to install."""
    try:
        return importlib.import_module("ray")
    except ImportError:
        raise RayMissingError() from None


def init_kwargs(settings: OrchestrationSettings) -> dict[str, Any]:
    """``ray.init``'s arguments for the configured address."""
    quiet: dict[str, Any] = {"ignore_reinit_error": True, "log_to_driver": False}
    if settings.address == "local":  # a head of our own, on loopback only
        return {**quiet, "include_dashboard": False, "_node_ip_address": "127.0.0.1"}
    return {**quiet, "address": settings.address}


class RayConnector:
    """Connects this process to the configured cluster, once.

    ``ray.init`` blocks and cannot be stopped, and Ray Client retries a dead address for
    about 30 s. So it runs in a daemon thread of its own (never the loop's default
    executor, which ``asyncio.run`` joins at exit: a dead head would hold the process),
    each caller waits at most ``connect_timeout_s``, and a connect still in flight is
    waited on again by the next node rather than started twice (Ray is one per process).
    """

    def __init__(self, settings: OrchestrationSettings) -> None:
        self._settings = settings
        self._attempt: concurrent.futures.Future[None] | None = None

    async def connect(self) -> ModuleType:
        """Ray, connected (an existing connection is kept), or :class:`ClusterUnreachableError`."""
        ray = import_ray()
        if ray.is_initialized():
            return ray
        settings = self._settings
        if self._attempt is None or self._attempt.done():
            self._attempt = _in_thread(lambda: ray.init(**init_kwargs(settings)))
        try:
            async with asyncio.timeout(settings.connect_timeout_s):
                await asyncio.shield(asyncio.wrap_future(self._attempt))
        except TimeoutError:
            raise ClusterUnreachableError(
                settings.address, f"no answer within {settings.connect_timeout_s:g} s"
            ) from None
        except Exception as exc:  # Ray raises ConnectionError, RuntimeError, ValueError...
            first = (str(exc).strip().splitlines() or [""])[0][:300]
            raise ClusterUnreachableError(
                settings.address, f"{type(exc).__name__}: {first}"
            ) from None
        return ray


_PARKED = threading.Event()  # never set: a thread that connected waits here for good


def _in_thread(call: Callable[[], object]) -> concurrent.futures.Future[None]:
    """``call`` in a daemon thread that, once it succeeded, stays alive until the process
    ends: a local head's processes (``address = "local"``) are started by this thread with
    ``PR_SET_PDEATHSIG``, which Linux fires when the *thread* that forked them exits, so a
    thread that returned would take the head down with it."""
    done: concurrent.futures.Future[None] = concurrent.futures.Future()

    def run() -> None:
        if not done.set_running_or_notify_cancel():
            return
        try:
            call()
        except BaseException as exc:  # handed to the waiter, which types it
            done.set_exception(exc)
        else:
            done.set_result(None)
            _PARKED.wait()

    threading.Thread(target=run, name="sylk-ray-connect", daemon=True).start()
    return done
