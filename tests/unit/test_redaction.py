"""The redactor: keys in nested data (dict keys too), and in text that arrives in pieces."""

from __future__ import annotations

import pytest

from backend.redaction import REDACTED, Redactor, StreamRedactor

KEY = "sk-live-0123456789abcdef"


def test_nested_data_and_dict_keys() -> None:
    redactor = Redactor([KEY, "short"])  # too short to redact
    data = {KEY: [f"a {KEY} b", ("short", 3)], "n": None}
    assert redactor.data(data) == {REDACTED: [f"a {REDACTED} b", ("short", 3)], "n": None}
    assert Redactor().data(data) is data  # nothing configured: nothing walked


@pytest.mark.parametrize("cut", [1, 5, len(KEY) // 2, len(KEY) - 1])
def test_a_key_split_between_pieces_is_redacted(cut: int) -> None:
    stream = StreamRedactor(Redactor([KEY]))
    pieces = ["key: ", KEY[:cut], KEY[cut:], " done"]
    shown = "".join(stream.feed(piece) for piece in pieces) + stream.flush()
    assert shown == f"key: {REDACTED} done"


def test_what_only_looks_like_a_start_is_shown_at_the_end() -> None:
    stream = StreamRedactor(Redactor([KEY]))
    assert stream.feed("price sk-") == "price "
    assert stream.feed("ip it") == "sk-ip it"
    assert stream.feed(" sk-live") == " "
    assert stream.flush() == "sk-live"
