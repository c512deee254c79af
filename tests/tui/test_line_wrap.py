"""Word wrapping of system text: a word is cut only when it is longer than a line."""

from __future__ import annotations

import random
import string

import pytest
from rich.cells import cell_len

from widgets.line_wrap import WrapMemo, column_hang, wrap_columns, wrap_plain


def _random_text(rng: random.Random) -> str:
    words = [
        "".join(rng.choices(string.ascii_lowercase + "é漢", k=rng.randint(1, 14)))
        for _ in range(rng.randint(1, 30))
    ]
    gaps = [rng.choice([" ", " ", "  ", "   ", "\n"]) for _ in words]
    lead = " " * rng.randint(0, 6)
    return lead + "".join(w + g for w, g in zip(words, gaps, strict=True)).rstrip()


@pytest.mark.parametrize("seed", range(40))
def test_no_word_that_fits_a_line_is_ever_split(seed: int) -> None:
    rng = random.Random(seed)
    for _ in range(25):
        text = _random_text(rng)
        width = rng.randint(4, 40)
        for wrap in (wrap_plain, wrap_columns):
            lines = wrap(text, width)
            assert all(cell_len(line) <= width for line in lines), (text, width)
            pieces = [piece for line in lines for piece in line.split()]
            for word in text.split():
                if cell_len(word) <= width:
                    assert word in pieces, (word, text, width, lines)
            # Nothing is lost: the words, read back in order, are the text's.
            assert "".join(pieces) == "".join(text.split()), (text, width)


def test_a_hang_never_pushes_a_fitting_word_into_two_lines() -> None:
    # Hung by 4, "bbbbbbbbbb" would need 14 columns of 10: it starts the line instead.
    assert wrap_plain("  - aaaaaaaa bbbbbbbbbb", 10, hang=lambda _p: 4) == [
        "  -",
        "aaaaaaaa",
        "bbbbbbbbbb",
    ]
    assert wrap_plain("- aaa bbbbbbbb cc", 10, hang=lambda _p: 2) == ["- aaa", "  bbbbbbbb", "  cc"]


def test_a_row_laid_out_in_columns_folds_under_its_second_column() -> None:
    row = "  archivalist    degraded: breaker open after three failures"
    assert column_hang(row) == 17
    assert wrap_columns(row, 40) == [
        "  archivalist    degraded: breaker open",
        "                 after three failures",
    ]
    # A row that fits keeps its columns exactly, spaces and all.
    assert wrap_columns("  1  01aaaaaa  suspended  na me", 40) == [
        "  1  01aaaaaa  suspended  na me"
    ]


def test_the_names_of_the_issue_are_never_cut() -> None:
    text = "  librarian  ok  name: archivalist, academic, architect"
    for width in range(12, 60):
        joined = " ".join(wrap_columns(text, width))
        for word in ("name:", "archivalist,", "academic,", "architect"):
            assert word in joined.split(), (width, joined)


@pytest.mark.parametrize("seed", range(30))
def test_text_that_grows_wraps_with_a_memo_as_it_would_at_once(seed: int) -> None:
    """A streaming answer folds only what is new: the lines are the ones a wrap of the
    whole text makes, at every step, whatever the pieces cut (mid-word, mid-space) and
    whatever its end says meanwhile."""
    rng = random.Random(seed)
    text = _random_text(rng) + " " + _random_text(rng).replace("\n", " ")
    hang = rng.choice([None, lambda _p: 2, column_hang])
    memo = WrapMemo()
    width = rng.randint(4, 30)
    shown = 0
    while shown < len(text):
        shown = min(len(text), shown + rng.randint(1, 12))
        if rng.random() < 0.05:
            width = rng.randint(4, 30)  # a resize: the memo starts again
        piece = text[:shown] + rng.choice(["", "", " …"])  # a draft ends " …" while it streams
        assert wrap_plain(piece, width, hang, memo=memo) == wrap_plain(piece, width, hang), (
            piece,
            width,
        )


def test_a_row_whose_first_column_fills_it_hangs_under_the_column_above() -> None:
    rows = (
        "  architect    offline (no model configured)\n"
        "  orchestrator offline (no model configured)\n"
        "  engineer     offline (no model configured)"
    )
    assert wrap_columns(rows, 34) == [
        "  architect    offline (no model",
        "               configured)",
        "  orchestrator offline (no model",
        "               configured)",
        "  engineer     offline (no model",
        "               configured)",
    ]
    # A row that does not line up with the one above keeps its own indentation.
    assert wrap_columns("  name         value\n  a long sentence of prose here", 20)[-1] == (
        "  prose here"
    )
