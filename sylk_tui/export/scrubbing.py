"""What keeps secrets out of every export: the engine's redactor and the shapes of keys.

An export leaves the machine (it is shared, attached to an issue, pasted into a chat),
so it is scrubbed harder than what Sylk stores: every key the redactor knows (the
configured providers' keys, MCP servers' credential env values and ``${VAR}`` header
values), the values of this process's environment variables whose names say they are
credentials, ``sylk mcp serve``'s bearer tokens from the data dir, and text shaped like
a credential whoever wrote it (``Authorization: Bearer ...``, ``sk-...``, ``ghp_...``,
``AKIA...``, ``api_key=...``), since a model or a tool's output may quote a key Sylk was
never told about.
"""

from __future__ import annotations

import json
import os
import re
from collections.abc import Iterable, Mapping
from pathlib import Path
from typing import Any

from backend.redaction import REDACTED, Redactor

TOKEN_FILE = "mcp_tokens.json"  # backend.mcp.server.auth.token_store.TOKEN_FILE
_CREDENTIAL_NAME = re.compile(r"(KEY|TOKEN|SECRET|PASSWORD|PASSWD|CREDENTIAL|AUTH)", re.I)
_SHAPES = [
    # The value after a bearer or basic scheme, in a header or in prose.
    re.compile(r"(?i)\b(bearer|basic)(\s+)[A-Za-z0-9._~+/=-]{8,}"),
    # Vendors' key formats: OpenAI/Anthropic, GitHub, Slack, AWS, Google.
    re.compile(r"\bsk-[A-Za-z0-9_-]{8,}"),
    re.compile(r"\bgh[pousr]_[A-Za-z0-9]{20,}"),
    re.compile(r"\bxox[abposr]-[A-Za-z0-9-]{10,}"),
    re.compile(r"\bAKIA[0-9A-Z]{16}\b"),
    re.compile(r"\bAIza[0-9A-Za-z_-]{30,}"),
    # name = value, where the name says it is a credential (not a count of tokens).
    re.compile(
        r"(?i)\b([\w-]*(?:api[_-]?key|secret|token(?!s)|password|passwd)[\w-]*)"
        r"([\"']?\s*[:=]\s*[\"']?)(?=[^\s\"',;]*[A-Za-z])[^\s\"',;]{8,}"
    ),
]


def _shape_replacement(match: re.Match[str]) -> str:
    if match.lastindex and match.lastindex >= 2:  # keep the scheme or the name: it is no secret
        return f"{match.group(1)}{match.group(2)}{REDACTED}"
    return REDACTED


def environment_secrets(environ: Mapping[str, str]) -> list[str]:
    """The values of the environment's credential-named variables (``*_API_KEY``, ...)."""
    return [value for name, value in environ.items() if _CREDENTIAL_NAME.search(name) and value]


def token_store_secrets(data_dir: Path | None) -> list[str]:
    """``sylk mcp serve``'s bearer tokens (``mcp_tokens.json`` in the data dir: name to
    value), read as plain JSON so exporting loads none of the MCP server's code."""
    if data_dir is None:
        return []
    try:
        tokens = json.loads((data_dir / TOKEN_FILE).read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return []  # no file, or one nobody could use: it holds nothing to scrub
    if not isinstance(tokens, dict):
        return []
    return [v for v in tokens.values() if isinstance(v, str)]


class Scrubber:
    """Scrubs text and nested data of every secret it knows or recognises."""

    def __init__(self, redactor: Redactor, extra: Iterable[str] = ()) -> None:
        self._redactor = Redactor([*redactor.secrets, *extra])

    @classmethod
    def for_export(
        cls,
        redactor: Redactor,
        *,
        data_dir: Path | None = None,
        environ: Mapping[str, str] | None = None,
    ) -> Scrubber:
        env = os.environ if environ is None else environ
        return cls(redactor, [*environment_secrets(env), *token_store_secrets(data_dir)])

    def text(self, value: str) -> str:
        value = self._redactor.text(value)
        for shape in _SHAPES:
            value = shape.sub(_shape_replacement, value)
        return value

    def secrets_in(self, text: str) -> list[str]:
        """The credential-shaped values in ``text`` (what :meth:`text` would replace), so
        a picture of it, where a line may wrap between "Bearer" and its token, can be
        scrubbed of the values themselves (:meth:`knowing`)."""
        found = []
        for shape in _SHAPES:
            for match in shape.finditer(text):
                lead = match.lastindex or 0
                skip = len(match.group(1)) + len(match.group(2)) if lead >= 2 else 0
                found.append(match.group(0)[skip:])
        return found

    def knowing(self, secrets: Iterable[str]) -> Scrubber:
        """This scrubber, also knowing ``secrets``."""
        return Scrubber(self._redactor, secrets)

    def data(self, value: Any) -> Any:
        """Every string inside nested dicts (keys too), lists and tuples, scrubbed."""
        if isinstance(value, str):
            return self.text(value)
        if isinstance(value, dict):
            return {self.data(k): self.data(v) for k, v in value.items()}
        if isinstance(value, list | tuple):
            return type(value)(self.data(v) for v in value)
        return value
