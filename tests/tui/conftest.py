"""Fixtures for the Pilot and snapshot tests (helpers are in ``tests.tui.support``)."""

from __future__ import annotations

from collections.abc import Callable
from datetime import datetime

import pytest

from tests.tui.support import FROZEN_NOW


@pytest.fixture
def frozen_clock() -> Callable[[], datetime]:
    return lambda: FROZEN_NOW
