"""Keeping API keys out of everything Sylk stores, logs or exports."""

from __future__ import annotations

import logging
from collections.abc import Iterable
from typing import Any

REDACTED = "[redacted]"
MIN_SECRET_LEN = 8  # shorter strings would redact ordinary words


class Redactor:
    def __init__(self, secrets: Iterable[str] = ()) -> None:
        self._secrets = sorted({s for s in secrets if len(s) >= MIN_SECRET_LEN}, key=len)[::-1]

    def __bool__(self) -> bool:
        return bool(self._secrets)

    @property
    def secrets(self) -> tuple[str, ...]:
        return tuple(self._secrets)

    def text(self, value: str) -> str:
        for secret in self._secrets:
            if secret in value:
                value = value.replace(secret, REDACTED)
        return value

    def data(self, value: Any) -> Any:
        """Redact every string inside nested dicts (their keys too), lists and tuples."""
        if not self._secrets:
            return value
        if isinstance(value, str):
            return self.text(value)
        if isinstance(value, dict):
            return {self.data(k): self.data(v) for k, v in value.items()}
        if isinstance(value, list | tuple):
            return type(value)(self.data(v) for v in value)
        return value


class StreamRedactor:
    """Redacts text that arrives in pieces (a streamed answer), where a key may be split
    between two pieces and each piece alone holds none of it: what could be the start of
    a key is held back until the next piece (or :meth:`flush`) settles it."""

    def __init__(self, redactor: Redactor) -> None:
        self.redactor = redactor
        self._held = ""

    def feed(self, piece: str) -> str:
        """What of the text so far can be shown now, redacted."""
        text = self.redactor.text(self._held + piece)
        keep = self._possible_start(text)
        self._held = text[len(text) - keep :] if keep else ""
        return text[: len(text) - keep]

    def flush(self) -> str:
        """The rest: the stream ended, so what was held back is no key."""
        rest, self._held = self._held, ""
        return rest

    def _possible_start(self, text: str) -> int:
        """The length of the longest end of ``text`` that begins some key."""
        longest = 0
        for secret in self.redactor.secrets:
            for size in range(min(len(secret) - 1, len(text)), longest, -1):
                if text.endswith(secret[:size]):
                    longest = size
                    break
        return longest


class RedactingFilter(logging.Filter):
    """A logging filter that rewrites records so no key reaches a handler."""

    def __init__(self, redactor: Redactor) -> None:
        super().__init__()
        self.redactor = redactor

    def filter(self, record: logging.LogRecord) -> bool:
        if self.redactor:
            record.msg = self.redactor.text(record.getMessage())
            record.args = None
            if record.exc_info and record.exc_info[1] is not None:
                record.exc_text = self.redactor.text(
                    logging.Formatter().formatException(record.exc_info)
                )
                record.exc_info = None
        return True
