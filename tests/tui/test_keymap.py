"""User keys from config [keys]: a bad entry is named at start, the others still apply."""

from __future__ import annotations

from pathlib import Path

import pytest

from backend.config.settings import load_config
from backend.engine import Engine
from backend.errors import ErrorKind
from sylk_tui.keymap import is_key_name, usable_keymap
from tests.tui.support import RecordingApp, settle

SIZE = (120, 40)


def test_keys_is_read_from_the_config_file_as_written(tmp_path: Path) -> None:
    path = tmp_path / "config.toml"
    path.write_text('[keys]\n"session.next" = "alt+j"\n"session next" = 5\n')
    # A bad entry does not refuse the whole file: the TUI names it and applies the rest.
    assert load_config(path, env={}).keymap == {"session.next": "alt+j", "session next": 5}
    path.write_text('[keymap]\n"session.next" = "alt+j,ctrl+pagedown"\n')
    assert load_config(path, env={}).keymap == {"session.next": "alt+j,ctrl+pagedown"}


@pytest.mark.parametrize(
    ("entry", "problem"),
    [
        ({"session next": "alt+j"}, "not a binding id"),
        ({"session.next": 5}, "must be a string"),
        ({"session.next": ""}, "must be a string"),
        ({"session.next": "alt+jj"}, "no such key: 'alt+jj'"),
        ({"session.next": "hyperctrl+j"}, "no such key"),
        ({"session.next": "alt+j,,f5"}, "no such key: ''"),
    ],
)
def test_each_bad_entry_is_a_typed_error(entry: dict[str, object], problem: str) -> None:
    usable, errors = usable_keymap({**entry, "session.previous": "ctrl+k"})
    assert usable == {"session.previous": "ctrl+k"}
    assert len(errors) == 1 and problem in str(errors[0])
    assert errors[0].error_kind is ErrorKind.INVALID


@pytest.mark.parametrize("key", ["f5", "ctrl+shift+f12", "alt+j", "question_mark", "pound_sign",
                                 "pageup", "escape", "ctrl+@", "?", "é"])  # fmt: skip
def test_keys_textual_can_report_are_accepted(key: str) -> None:
    assert is_key_name(key)


async def test_a_bad_entry_is_a_warning_at_start_and_the_rest_applies(engine: Engine) -> None:
    first = await engine.create_session("first")
    await engine.create_session("second")
    keymap = {"session.next": "ctrl+j", "session.previous": "alt+zz", "sesion.new": "f9"}
    app = RecordingApp(engine, keymap=keymap)
    async with app.run_test(size=SIZE) as pilot:
        await settle(pilot)
        warnings = [text for severity, text in app.notices if severity == "warning"]
        assert any("'session.previous': no such key: 'alt+zz'" in w for w in warnings), warnings
        assert any("sesion.new (did you mean session.new?)" in w for w in warnings), warnings
        await pilot.press("ctrl+j")  # the good entry applies: next wraps to the first
        await settle(pilot)
        active = engine.active_session()
        assert active is not None and active.id == first.id
