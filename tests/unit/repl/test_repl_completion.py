"""Tab at the repl's prompt: what is offered, from the Guide's own command table."""

from __future__ import annotations

import subprocess
import sys

from backend.guide.routing.command_table import COMMANDS
from sylk_tui.repl.completion import complete


def texts(before: str, names: list[str] | None = None) -> list[str]:
    return [offer.text for offer in complete(before, names or [])[1]]


def test_a_command_prefix_offers_the_commands_it_starts() -> None:
    assert texts("/sta") == ["/status"]
    assert complete("/sta")[0] == 0
    assert "/quit" in texts("/q") and "/exit" in texts("/e")  # the repl's own


def test_every_command_and_alias_of_the_table_is_offered() -> None:
    offered = set(texts("/"))
    assert {s for spec in COMMANDS for s in spec.spellings} <= offered


def test_a_command_s_first_word_comes_from_its_usage() -> None:
    assert texts("/approval a") == ["ask", "auto-edit", "auto"]
    assert texts("/session sw") == ["switch"]
    assert texts("/plan ") == ["show", "approve", "reject"]
    assert complete("/network o")[0] == len("/network ")


def test_session_names_follow_the_verbs_that_take_one() -> None:
    names = ["beta", "big one", "alpha", "b\x1b]52;c;evil\x07"]
    assert texts("/session switch b", names) == ["beta", "'big one'"]  # quoted; no escapes
    assert texts("/session resume ", names) == ["alpha", "beta", "'big one'"]
    assert texts("/session list b", names) == []


def test_agents_are_offered_after_an_at_sign() -> None:
    assert texts("@eng") == ["@engineer"]
    assert "@guide" not in texts("@")


def test_plain_words_and_later_lines_offer_nothing() -> None:
    assert texts("fix the par") == []
    assert texts("first line\n/sta") == []


def test_the_repl_loads_no_textual_and_sylk_run_no_prompt_toolkit() -> None:
    code = (
        "import sys, sylk_tui.cli; cli = set(sys.modules); "
        "import sylk_tui.repl.loop, sylk_tui.repl.line_input; "
        "print('prompt_toolkit' in cli, 'textual' in sys.modules)"
    )
    said = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert said.stdout.split() == ["False", "False"]
