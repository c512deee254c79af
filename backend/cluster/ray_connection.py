"""Ray, imported and connected only when ``[orchestration] backend = "ray"``.

Every ``import ray`` of Sylk is inside a function here or in the worker's task, so the
default install (and ``import backend.engine``) never pays for it. Connecting is bounded
by ``connect_timeout_s``: ``ray.init`` runs in a thread, and past the limit the plan's
node fails with :class:`ClusterUnreachableError` instead of waiting on a head that is not
there (the thread is left to finish on its own; Ray offers no way to stop it).
"""

from __future__ import annotations

import asyncio
import importlib
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


async def connect(settings: OrchestrationSettings) -> ModuleType:
    """Ray, connected to the configured cluster (an existing connection is kept)."""
    ray = import_ray()
    if ray.is_initialized():
        return ray
    try:
        async with asyncio.timeout(settings.connect_timeout_s):
            await asyncio.to_thread(ray.init, **init_kwargs(settings))
    except TimeoutError:
        raise ClusterUnreachableError(
            settings.address, f"no answer within {settings.connect_timeout_s:g} s"
        ) from None
    except Exception as exc:  # Ray raises ConnectionError, RuntimeError, ValueError...
        raise ClusterUnreachableError(settings.address, f"{type(exc).__name__}: {exc}") from None
    return ray
