"""Which server is behind an OpenAI-compatible ``base_url``: asked once, remembered.

``GET {base_url}/models`` is the one endpoint every compatible server has, and
its answer gives the server away: the ``owned_by`` of its entries ("llamacpp",
"me", "library", "vllm", "organization_owner", "openai"/"system") and, for
llama.cpp, the ``Server`` header. The probe runs before the provider's first
request; a probe that fails must never cost the turn, so any failure means the
lenient ``generic`` profile. An answer (even a 404) is kept for the provider's
life; a connection that failed or timed out is asked again next time, since the
server may simply not be up yet.
"""

from __future__ import annotations

import asyncio
import logging
from collections.abc import Mapping

import httpx2
import openai

from backend.llm.openai_chat.profiles import (
    PROFILES,
    ProfileName,
    ProfileSetting,
    ServerProfile,
    is_openai_host,
)

log = logging.getLogger(__name__)

PROBE_TIMEOUT_S = 5.0

_OWNERS: dict[str, ProfileName] = {
    "llamacpp": "llama-cpp",  # llama.cpp's llama-server
    "me": "llama-cpp-python",  # its server (behind uvicorn)
    "library": "ollama",  # Ollama: the namespace of its official models
    "vllm": "vllm",
    "organization_owner": "lm-studio",
    "openai": "openai",
    "system": "openai",
    "openai-internal": "openai",
}


def profile_from_models(payload: object, headers: Mapping[str, str]) -> ProfileName:
    """The profile a ``/v1/models`` answer (its JSON and headers) points to.

    A ``Server`` header naming llama.cpp wins; then the most common ``owned_by``
    the table knows; anything else (or a body that is not a model list) is
    ``generic``. Pure, so the rules are testable without a server.
    """
    server = headers.get("server", "").lower()
    if "llama.cpp" in server or "llama-cpp" in server:
        return "llama-cpp"
    if "ollama" in server:
        return "ollama"
    data = payload.get("data") if isinstance(payload, dict) else None
    votes: dict[ProfileName, int] = {}
    for entry in data if isinstance(data, list) else ():
        owner = entry.get("owned_by") if isinstance(entry, dict) else None
        profile = _OWNERS.get(owner.strip().lower()) if isinstance(owner, str) else None
        if profile is not None:
            votes[profile] = votes.get(profile, 0) + 1
    if not votes:
        return "generic"
    return max(votes, key=lambda name: votes[name])


class ProfileChooser:
    """The profile for one provider: the configured one, or asked of the server once."""

    def __init__(self, setting: ProfileSetting, base_url: str | None, *, name: str) -> None:
        self._name = name
        self._lock = asyncio.Lock()
        self._known: ServerProfile | None = None
        if setting != "auto":
            self._known = PROFILES[setting]
        elif is_openai_host(base_url):
            self._known = PROFILES["openai"]
        self.probes = 0

    @property
    def known(self) -> ServerProfile | None:
        """The profile once decided; None while a probe is still to come."""
        return self._known

    async def choose(self, client: openai.AsyncOpenAI, timeout_s: float) -> ServerProfile:
        if self._known is not None:
            return self._known
        async with self._lock:  # concurrent first turns share one probe
            if self._known is not None:
                return self._known
            name, final = await self._probe(client, min(timeout_s, PROBE_TIMEOUT_S))
            if final:
                self._known = PROFILES[name]
            return PROFILES[name]

    async def _probe(
        self, client: openai.AsyncOpenAI, timeout_s: float
    ) -> tuple[ProfileName, bool]:
        """The profile and whether the answer is final (the server answered)."""
        self.probes += 1
        try:
            response = await client.get(
                "/models", cast_to=httpx2.Response, options={"timeout": timeout_s}
            )
        except openai.APIStatusError as exc:  # 404 and the like: a server without the list
            log.info("%s: GET /models answered %s; generic profile", self._name, exc.status_code)
            return "generic", True
        except Exception as exc:  # whatever went wrong, the turn goes on
            log.info("%s: GET /models failed (%s); generic profile for now", self._name, exc)
            return "generic", False
        try:
            payload: object = response.json()
        except ValueError:
            payload = None
        name = profile_from_models(payload, response.headers)
        log.info("%s: server profile %s (from GET /models)", self._name, name)
        return name, True
