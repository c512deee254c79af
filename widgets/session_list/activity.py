"""What a session is doing, as one glyph in its row of the session list.

The screen works out each session's activity from the UI state (an answer being
written, a question waiting, messages not yet seen, its lifecycle state) and hands
it down; the list only draws it.
"""

from __future__ import annotations

from enum import Enum


class Activity(Enum):
    """In order of urgency: a session waiting on the user outranks one that works."""

    WAITING = "waiting for you"
    WORKING = "working"
    FAILED = "failed"
    UNREAD = "unread"
    DONE = "done"
    QUIET = "quiet"


ACTIVITY_MARKS: dict[Activity, str] = {
    Activity.WAITING: "?",
    Activity.WORKING: "◐",
    Activity.FAILED: "✗",
    Activity.UNREAD: "•",
    Activity.DONE: "✓",
    Activity.QUIET: " ",
}
"""One cell each, so the names stay aligned."""


def activity_of(
    *, waiting: bool, working: bool, failed: bool, unread: bool, done: bool
) -> Activity:
    """The one marker a row shows when several are true (the most urgent)."""
    if waiting:
        return Activity.WAITING
    if working:
        return Activity.WORKING
    if failed:
        return Activity.FAILED
    if unread:
        return Activity.UNREAD
    if done:
        return Activity.DONE
    return Activity.QUIET
