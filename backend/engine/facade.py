"""The old import path of the engine facade; import from :mod:`backend.engine`.

Kept while ``sylk_tui/app.py``, ``sylk_tui/engine_calls.py`` and ``tests/tui``
still import from here; remove once they import ``backend.engine``.
"""

from backend.engine import Engine, EngineConfig

__all__ = ["Engine", "EngineConfig"]
