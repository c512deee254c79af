"""The session list (``list_view``), its rows (``rows``) and their activity markers
(``activity``)."""

from widgets.session_list.activity import ACTIVITY_MARKS, Activity, activity_of
from widgets.session_list.list_view import SessionList
from widgets.session_list.rows import PHASE_MARKS, RowUsage, ago

__all__ = [
    "ACTIVITY_MARKS",
    "PHASE_MARKS",
    "Activity",
    "RowUsage",
    "SessionList",
    "activity_of",
    "ago",
]
