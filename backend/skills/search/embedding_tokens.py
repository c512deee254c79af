"""BERT's uncased WordPiece tokenizer in plain Python, for the numpy sentence encoder.

It does what the model's ``tokenizer.json`` declares (``BertNormalizer`` with clean
text, Chinese characters split, lower case and accents stripped; ``BertPreTokenizer``;
``WordPiece`` with ``##`` continuations and at most 100 characters a word; ``[CLS] ...
[SEP]``), so the ``tokenizers`` wheel and its Hub client are not needed. A test checks
its ids against ``tokenizers``' on recorded sentences. Queries and op texts are short,
so speed is not a concern here: the forward pass costs far more.
"""

from __future__ import annotations

import json
import unicodedata
from pathlib import Path

from backend.skills.search.embedding_weights import EmbeddingModelError

MAX_WORD_CHARS = 100
_CJK = (
    (0x4E00, 0x9FFF),
    (0x3400, 0x4DBF),
    (0x20000, 0x2A6DF),
    (0x2A700, 0x2B73F),
    (0x2B740, 0x2B81F),
    (0x2B820, 0x2CEAF),
    (0xF900, 0xFAFF),
    (0x2F800, 0x2FA1F),
)


def _is_cjk(code: int) -> bool:
    return any(lo <= code <= hi for lo, hi in _CJK)


def _is_punctuation(char: str) -> bool:
    code = ord(char)
    if 33 <= code <= 47 or 58 <= code <= 64 or 91 <= code <= 96 or 123 <= code <= 126:
        return True
    return unicodedata.category(char).startswith("P")


def normalise(text: str) -> str:
    """Clean, split CJK characters apart, lower-case and strip accents, as BERT does."""
    out: list[str] = []
    for char in text:
        if char in "\t\n\r" or char.isspace():
            out.append(" ")
            continue
        if char in "\x00\ufffd" or unicodedata.category(char)[0] == "C":
            continue
        if _is_cjk(ord(char)):
            out.extend((" ", char, " "))
        else:
            out.append(char)
    lowered = "".join(out).lower()
    return "".join(
        c for c in unicodedata.normalize("NFD", lowered) if unicodedata.category(c) != "Mn"
    )


def pre_tokenise(text: str) -> list[str]:
    """Words split on white space, every punctuation character a word of its own."""
    words: list[str] = []
    for chunk in text.split():
        current: list[str] = []
        for char in chunk:
            if _is_punctuation(char):
                if current:
                    words.append("".join(current))
                    current = []
                words.append(char)
            else:
                current.append(char)
        if current:
            words.append("".join(current))
    return words


class WordPieceTokenizer:
    """Text -> token ids for a BERT vocabulary (greedy longest match first)."""

    def __init__(self, vocab: dict[str, int], *, unknown: str = "[UNK]") -> None:
        self.vocab = vocab
        try:
            self.unknown_id = vocab[unknown]
            self.cls_id = vocab["[CLS]"]
            self.sep_id = vocab["[SEP]"]
        except KeyError as exc:
            raise ValueError(f"the vocabulary lacks the special token {exc}") from exc
        self._cache: dict[str, list[int]] = {}

    @classmethod
    def from_file(cls, path: Path) -> WordPieceTokenizer:
        """From a ``tokenizer.json`` (its WordPiece vocabulary) or a ``vocab.txt``."""
        try:
            raw = path.read_text(encoding="utf-8")
        except (OSError, UnicodeDecodeError) as exc:
            raise EmbeddingModelError(path, f"cannot be read ({exc})") from exc
        try:
            if path.suffix == ".json":
                vocab = json.loads(raw)["model"]["vocab"]
                if not isinstance(vocab, dict):
                    raise TypeError("model.vocab is not an object")
            else:
                vocab = {line: i for i, line in enumerate(raw.splitlines())}
            return cls({str(k): int(v) for k, v in vocab.items()})
        except (json.JSONDecodeError, KeyError, TypeError, ValueError) as exc:
            raise EmbeddingModelError(path, f"not a WordPiece vocabulary ({exc})") from exc

    def word_ids(self, word: str) -> list[int]:
        cached = self._cache.get(word)
        if cached is not None:
            return cached
        ids = self._pieces(word)
        if len(self._cache) < 100_000:
            self._cache[word] = ids
        return ids

    def _pieces(self, word: str) -> list[int]:
        if len(word) > MAX_WORD_CHARS:
            return [self.unknown_id]
        ids: list[int] = []
        start = 0
        while start < len(word):
            end = len(word)
            found: int | None = None
            while start < end:
                piece = word[start:end] if start == 0 else f"##{word[start:end]}"
                found = self.vocab.get(piece)
                if found is not None:
                    break
                end -= 1
            if found is None:
                return [self.unknown_id]
            ids.append(found)
            start = end
        return ids

    def encode(self, text: str, max_length: int = 256) -> list[int]:
        """``[CLS]`` + the text's token ids + ``[SEP]``, at most ``max_length`` in all."""
        ids: list[int] = []
        for word in pre_tokenise(normalise(text)):
            ids.extend(self.word_ids(word))
            if len(ids) >= max_length - 2:
                break
        return [self.cls_id, *ids[: max_length - 2], self.sep_id]


__all__ = ["WordPieceTokenizer", "normalise", "pre_tokenise"]
