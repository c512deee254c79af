"""Sylk's themes and stylesheets, registered in this one place.

Every ``.tcss`` file of the app (here, beside a screen, or a widget's
``DEFAULT_CSS``) uses theme variables only, so a theme is the single place a
colour is chosen.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from textual.app import App
from textual.theme import Theme

THEMES_DIR = Path(__file__).parent
APP_STYLESHEET = THEMES_DIR / "sylk.tcss"

SYLK_DARK = Theme(
    name="sylk-dark",
    primary="#5B8DEF",
    secondary="#7C6FE0",
    accent="#F2A65A",
    foreground="#D8DEE9",
    background="#12151C",
    surface="#181C25",
    panel="#222836",
    success="#6CC08B",
    warning="#E5C07B",
    error="#E06C75",
    dark=True,
)

SYLK_LIGHT = Theme(
    name="sylk-light",
    primary="#2F5FB8",
    secondary="#5A4FC0",
    accent="#B8611A",
    foreground="#1F2430",
    background="#F4F5F7",
    surface="#FFFFFF",
    panel="#E3E6EC",
    success="#2E8B57",
    warning="#A6780D",
    error="#C0392B",
    dark=False,
)

THEMES: tuple[Theme, ...] = (SYLK_DARK, SYLK_LIGHT)
DEFAULT_THEME = SYLK_DARK.name


def register_themes(app: App[Any]) -> None:
    """Make Sylk's themes available to ``app`` (the built-in ones stay too)."""
    for theme in THEMES:
        app.register_theme(theme)
