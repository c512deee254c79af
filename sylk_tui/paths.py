"""Where Sylk keeps its files. Every path the app uses is resolved here."""

from __future__ import annotations

import os
from pathlib import Path

from platformdirs import user_config_dir, user_data_dir

APP_NAME = "sylk"


def _private_dir(path: Path) -> Path:
    path.mkdir(parents=True, exist_ok=True, mode=0o700)
    return path


def data_dir(override: str | os.PathLike[str] | None = None) -> Path:
    """``--data-dir``, else ``$SYLK_DATA_DIR``, else the platform's user data dir."""
    chosen = override or os.environ.get("SYLK_DATA_DIR") or user_data_dir(APP_NAME)
    return _private_dir(Path(chosen).expanduser())


def config_dir(override: str | os.PathLike[str] | None = None) -> Path:
    """``$SYLK_CONFIG_DIR``, else the platform's user config dir."""
    chosen = override or os.environ.get("SYLK_CONFIG_DIR") or user_config_dir(APP_NAME)
    return Path(chosen).expanduser()


def config_file(override: str | os.PathLike[str] | None = None) -> Path:
    """``config.toml`` in the config dir (it need not exist)."""
    return config_dir(override) / "config.toml"


def workspace(override: str | os.PathLike[str] | None = None) -> Path:
    """``--workspace``, else the current directory."""
    return Path(override or os.getcwd()).expanduser().resolve()
