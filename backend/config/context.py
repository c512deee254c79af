"""The ``[context]`` table: each model's context window, by glob on the model's name.

Why a table in config: a provider rarely says how large its model's window is, and a
local server's window is whatever it was started with, so the user must be able to
say. The defaults cover the model families Sylk is used with; an entry in the file
wins over them (``backend.memory.windows`` does the lookup).
"""

from __future__ import annotations

from pydantic import BaseModel, ConfigDict, Field, field_validator

DEFAULT_WINDOW = 128_000
"""Tokens assumed for a model no pattern names."""

# Published context windows of the families Sylk's defaults and users pick. A pattern
# is an fnmatch glob on the lower-cased model name (or on "provider/model").
DEFAULT_WINDOWS: dict[str, int] = {
    "claude-*": 200_000,
    "gpt-4o*": 128_000,
    "gpt-4.1*": 1_047_576,
    "gpt-5*": 400_000,
    "o[0-9]*": 200_000,  # o1, o3, o4-mini (not every name starting with "o")
    "llama*": 131_072,
    "qwen*": 32_768,
}


class ContextSettings(BaseModel):
    """``[context]``: ``default`` tokens, and ``[context.windows]`` glob -> tokens."""

    model_config = ConfigDict(extra="forbid")

    default: int = Field(default=DEFAULT_WINDOW, ge=1024)
    windows: dict[str, int] = Field(default_factory=dict)

    @field_validator("windows")
    @classmethod
    def _sizes(cls, windows: dict[str, int]) -> dict[str, int]:
        bad = {k: v for k, v in windows.items() if v < 1024 or not k.strip()}
        if bad:
            raise ValueError(f"each entry needs a pattern and at least 1024 tokens: {bad}")
        return windows
