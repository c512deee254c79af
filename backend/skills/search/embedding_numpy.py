"""all-MiniLM-L6-v2 in numpy: the dense stage's encoder without torch.

The model is a 6-layer BERT (hidden 384, 12 heads, GELU) whose sentence vector is the
mean of its last layer over the real tokens, normalised; sentence-transformers does
exactly that on top of torch. Here the same forward pass runs in float32 numpy on the
weights read straight from the model's ``model.safetensors``
(:mod:`~backend.skills.search.embedding_weights`), tokenised by
:mod:`~backend.skills.search.embedding_tokens`. Its vectors match torch's to a cosine
above 0.9999 (a test compares them with recorded torch outputs), so the stage ranks as
it did with torch, at a fraction of the install.

:class:`NumpySentenceEncoder` has the ``encode`` signature the stage calls on a
``SentenceTransformer``, so either can be used.
"""

from __future__ import annotations

import ctypes
import json
import logging
import math
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from backend.skills.search.embedding_tokens import WordPieceTokenizer
from backend.skills.search.embedding_weights import EmbeddingModelError, read_safetensors

log = logging.getLogger("sylk.skills")
MAX_TOKENS = 256  # the model's max_seq_length in sentence_bert_config.json
BATCH_TOKENS = 2048  # padded tokens in one forward pass: bounds its memory and padding


def limit_blas_threads(threads: int = 1) -> bool:
    """Run numpy's OpenBLAS on ``threads`` threads (True if it could be told).

    The stage's products are small (a query is a handful of tokens), and OpenBLAS's
    threads wait for each other: on a busy 2-core machine a query took ~200 ms on two
    threads and ~17 ms on one. The library is found among the process's mapped files
    (Linux); elsewhere numpy keeps its own choice. No environment variable is set, so
    commands Sylk runs keep theirs.
    """
    try:
        with open("/proc/self/maps", encoding="utf-8") as maps:
            paths = {line.split()[-1] for line in maps if "openblas" in line.lower()}
    except OSError:
        return False
    names = (
        "scipy_openblas_set_num_threads64_",
        "scipy_openblas_set_num_threads",
        "openblas_set_num_threads64_",
        "openblas_set_num_threads",
    )
    done = False
    for path in sorted(p for p in paths if p.startswith("/")):
        try:
            lib = ctypes.CDLL(path)
        except OSError:
            continue
        for name in names:
            setter = getattr(lib, name, None)
            if setter is not None:
                setter(ctypes.c_int(threads))
                done = True
                break
    if not done:
        log.debug("numpy's BLAS thread count left as it is")
    return done


_ERF = (1.061405429, -1.453152027, 1.421413741, -0.284496736, 0.254829592)


def _gelu(x: Any) -> Any:
    """Exact (erf) GELU, with erf to ~1.5e-7 (Abramowitz and Stegun 7.1.26).

    With erf(z) = sign(z) (1 - p(t) e^(-z^2)), GELU(x) = x (1 + erf(x / sqrt 2)) / 2 is
    max(x, 0) - |x| p(t) e^(-x^2 / 2) / 2: one branch-free formula, computed in place
    (it was a quarter of a batch's time with the temporaries).
    """
    import numpy

    a = numpy.abs(x)
    t = a * numpy.float32(0.3275911 / math.sqrt(2.0))
    t += 1.0
    numpy.reciprocal(t, out=t)
    poly = numpy.full_like(t, _ERF[0])
    for coefficient in _ERF[1:]:
        poly *= t
        poly += coefficient
    poly *= t
    squared = numpy.square(x)
    squared *= -0.5
    numpy.exp(squared, out=squared)
    poly *= squared
    poly *= a
    poly *= 0.5
    out = numpy.maximum(x, 0)
    out -= poly
    return out


def _layer_norm(x: Any, weight: Any, bias: Any, eps: float) -> Any:
    mean = x.mean(axis=-1, keepdims=True)
    centred = x - mean
    var = (centred * centred).mean(axis=-1, keepdims=True)
    return centred / (var + eps) ** 0.5 * weight + bias


class _Layer:
    """One encoder layer's weights, transposed once for ``x @ w``."""

    def __init__(self, tensors: dict[str, Any], prefix: str) -> None:
        import numpy

        def linear(name: str) -> tuple[Any, Any]:
            weight = tensors[f"{prefix}.{name}.weight"]
            return numpy.ascontiguousarray(weight.T), tensors[f"{prefix}.{name}.bias"]

        q, k, v = (linear(f"attention.self.{n}") for n in ("query", "key", "value"))
        # Query, key and value in one product: x @ [Wq | Wk | Wv].
        self.qkv = (
            numpy.concatenate([q[0], k[0], v[0]], axis=1),
            numpy.concatenate([q[1], k[1], v[1]]),
        )
        self.attention_out = linear("attention.output.dense")
        self.attention_norm = (
            tensors[f"{prefix}.attention.output.LayerNorm.weight"],
            tensors[f"{prefix}.attention.output.LayerNorm.bias"],
        )
        self.intermediate = linear("intermediate.dense")
        self.output = linear("output.dense")
        self.output_norm = (
            tensors[f"{prefix}.output.LayerNorm.weight"],
            tensors[f"{prefix}.output.LayerNorm.bias"],
        )


class NumpySentenceEncoder:
    """Sentence vectors from a BERT sentence-transformers model folder, in numpy."""

    def __init__(self, folder: Path) -> None:
        import numpy

        limit_blas_threads()
        self.folder = folder
        config = _read_config(folder / "config.json")
        self.heads = int(config["num_attention_heads"])
        self.eps = float(config.get("layer_norm_eps", 1e-12))
        if config.get("hidden_act", "gelu") != "gelu":
            raise EmbeddingModelError(folder / "config.json", "only GELU models are supported")
        vocab = folder / "tokenizer.json"
        self.tokenizer = WordPieceTokenizer.from_file(
            vocab if vocab.is_file() else folder / "vocab.txt"
        )
        tensors = read_safetensors(folder / "model.safetensors")
        try:
            self.word = tensors["embeddings.word_embeddings.weight"]
            self.position = tensors["embeddings.position_embeddings.weight"]
            self.token_type = tensors["embeddings.token_type_embeddings.weight"][0]
            self.embedding_norm = (
                tensors["embeddings.LayerNorm.weight"],
                tensors["embeddings.LayerNorm.bias"],
            )
            self.layers = [
                _Layer(tensors, f"encoder.layer.{i}")
                for i in range(int(config["num_hidden_layers"]))
            ]
        except KeyError as exc:
            raise EmbeddingModelError(
                folder / "model.safetensors", f"no tensor {exc}: not a BERT model"
            ) from exc
        hidden = self.word.shape[1]
        if hidden % self.heads or self.word.dtype != numpy.float32:
            raise EmbeddingModelError(folder / "config.json", "unexpected shapes or dtype")
        self.max_tokens = min(MAX_TOKENS, self.position.shape[0])

    def tokenise(self, text: str) -> list[int]:
        return self.tokenizer.encode(text, self.max_tokens)

    def encode(
        self,
        texts: Sequence[str],
        batch_size: int = 64,
        convert_to_numpy: bool = True,
        normalize_embeddings: bool = True,
        show_progress_bar: bool = False,
    ) -> Any:
        """One vector per text (rows in input order), normalised unless told not to."""
        import numpy

        del convert_to_numpy, show_progress_bar  # always numpy, never a bar
        ids = [self.tokenise(t) for t in texts]
        out = numpy.zeros((len(ids), self.word.shape[1]), dtype=numpy.float32)
        for rows in _batches(ids, max(1, batch_size)):
            out[rows] = self._forward([ids[i] for i in rows])
        if normalize_embeddings:
            norms = numpy.linalg.norm(out, axis=1, keepdims=True)
            out /= numpy.maximum(norms, 1e-12)
        return out

    def _forward(self, batch: list[list[int]]) -> Any:
        """Mean-pooled last hidden states of one padded batch."""
        import numpy

        length = max(len(ids) for ids in batch)
        token_ids = numpy.zeros((len(batch), length), dtype=numpy.int64)
        mask = numpy.zeros((len(batch), length), dtype=numpy.float32)
        for row, ids in enumerate(batch):
            token_ids[row, : len(ids)] = ids
            mask[row, : len(ids)] = 1.0
        x = self.word[token_ids] + self.position[:length] + self.token_type
        x = _layer_norm(x, *self.embedding_norm, self.eps)
        # Padding gets a large negative score, so softmax gives it no weight.
        bias = ((1.0 - mask) * numpy.float32(-1e9))[:, None, None, :]
        for layer in self.layers:
            x = self._layer(layer, x, bias)
        summed = (x * mask[:, :, None]).sum(axis=1)
        return summed / mask.sum(axis=1, keepdims=True)

    def _layer(self, layer: _Layer, x: Any, bias: Any) -> Any:
        """One encoder layer over a (batch, length, hidden) array.

        Products run on 2-D or contiguous stacked arrays: numpy's ``matmul`` falls back
        from BLAS to a slow loop on transposed views, ~20x slower here.
        """
        import numpy

        batch, length, hidden = x.shape
        head = hidden // self.heads
        flat = x.reshape(batch * length, hidden)
        qkv = (flat @ layer.qkv[0] + layer.qkv[1]).reshape(batch, length, 3, self.heads, head)
        q = numpy.ascontiguousarray(qkv[:, :, 0].transpose(0, 2, 1, 3))
        k_t = numpy.ascontiguousarray(qkv[:, :, 1].transpose(0, 2, 3, 1))
        v = numpy.ascontiguousarray(qkv[:, :, 2].transpose(0, 2, 1, 3))
        scores = (q @ k_t) * numpy.float32(1.0 / math.sqrt(head)) + bias
        scores -= scores.max(axis=-1, keepdims=True)
        weights = numpy.exp(scores)
        weights /= weights.sum(axis=-1, keepdims=True)
        context = (weights @ v).transpose(0, 2, 1, 3).reshape(batch * length, hidden)
        attended = context @ layer.attention_out[0] + layer.attention_out[1]
        flat = _layer_norm(attended + flat, *layer.attention_norm, self.eps)
        inner = _gelu(flat @ layer.intermediate[0] + layer.intermediate[1])
        out = inner @ layer.output[0] + layer.output[1]
        return _layer_norm(out + flat, *layer.output_norm, self.eps).reshape(batch, length, hidden)


def _batches(ids: Sequence[list[int]], size: int) -> list[list[int]]:
    """Row numbers in batches of similar length, at most ``size`` rows and
    :data:`BATCH_TOKENS` padded tokens each: one long text is not padded onto 63 short."""
    order = sorted(range(len(ids)), key=lambda i: len(ids[i]))
    batches: list[list[int]] = []
    current: list[int] = []
    for i in order:
        if current and (len(current) >= size or (len(current) + 1) * len(ids[i]) > BATCH_TOKENS):
            batches.append(current)
            current = []
        current.append(i)
    if current:
        batches.append(current)
    return batches


def _read_config(path: Path) -> dict[str, Any]:
    try:
        config = json.loads(path.read_text(encoding="utf-8"))
    except (OSError, UnicodeDecodeError, json.JSONDecodeError) as exc:
        raise EmbeddingModelError(path, f"cannot be read as JSON ({exc})") from exc
    if not isinstance(config, dict) or config.get("model_type", "bert") != "bert":
        raise EmbeddingModelError(path, "not a BERT model's config")
    for key in ("num_attention_heads", "num_hidden_layers"):
        if not isinstance(config.get(key), int):
            raise EmbeddingModelError(path, f"{key} missing")
    return config


__all__ = ["MAX_TOKENS", "NumpySentenceEncoder"]
