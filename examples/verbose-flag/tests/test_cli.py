import pytest

from greet.cli import main


def test_says_hello(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["ada"]) == 0
    assert capsys.readouterr().out == "hello, ada\n"


def test_greets_the_world_by_default(capsys: pytest.CaptureFixture[str]) -> None:
    assert main([]) == 0
    assert capsys.readouterr().out == "hello, world\n"
