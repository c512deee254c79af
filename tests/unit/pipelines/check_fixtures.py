"""Reading the captured and hand-made tool outputs in ``fixtures/`` (see its README)."""

from __future__ import annotations

from pathlib import Path

FIXTURES = Path(__file__).parent / "fixtures"
CAPTURED_AT = Path("/tmp/fx")  # where the real runs were made (the paths in their output)
HAND_MADE_AT = Path("/ws")


def fixture(name: str) -> str:
    return (FIXTURES / name).read_text(encoding="utf-8")
