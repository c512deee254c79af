"""The main screen's keys, in one list (the help screen and the user's keymap read it).

Each binding has an ``id`` (``room.action``) so a user's ``[keys]`` config can rebind it
and a tooltip that the help screen shows.
"""

from __future__ import annotations

from textual.binding import Binding, BindingType

# Terminals (and tmux) send alt+digit as ESC + digit, which Textual reads as
# the character macOS types for option+digit; bind both spellings. The
# composer leaves these characters to the bindings (paste still types them).
OPTION_DIGIT_KEYS = (
    "inverted_exclamation_mark",
    "trade_mark_sign",
    "pound_sign",
    "cent_sign",
    "infinity",
    "section_sign",
    "pilcrow_sign",
    "bullet",
    "ª",
)


def _jump_bindings() -> list[BindingType]:
    bindings: list[BindingType] = []
    for n, option_key in enumerate(OPTION_DIGIT_KEYS, 1):
        bindings.append(
            Binding(
                f"alt+{n},{option_key}",
                f"jump({n})",
                "Jump",
                show=n == 1,
                key_display="alt+1…9" if n == 1 else f"alt+{n}",
                id=f"session.jump-{n}",
                tooltip=f"Switch to session {n} of the list.",
                priority=True,
            )
        )
    return bindings


MAIN_BINDINGS: list[BindingType] = [
    Binding(
        "ctrl+n",
        "new_session",
        "New",
        id="session.new",
        tooltip="Create a session (you are asked for a name) and switch to it.",
        priority=True,
    ),
    Binding(
        "alt+down,ctrl+pagedown",
        "next_session",
        "Next",
        key_display="alt+↓",
        id="session.next",
        tooltip="Switch to the next session in the list.",
        priority=True,
    ),
    Binding(
        "alt+up,ctrl+pageup",
        "previous_session",
        "Prev",
        key_display="alt+↑",
        id="session.previous",
        tooltip="Switch to the previous session in the list.",
        priority=True,
    ),
    *_jump_bindings(),
    Binding(
        "alt+s",
        "suspend_session",
        "Suspend",
        show=False,  # the footer keeps room; F1 and the palette list it
        id="session.suspend",
        tooltip="Suspend the session on screen; its transcript and context are kept.",
        priority=True,
    ),
    Binding(
        "alt+r",
        "resume_session",
        "Resume",
        show=False,  # the footer keeps room; F1 and the palette list it
        id="session.resume",
        tooltip="Bring the suspended session on screen back to the front.",
        priority=True,
    ),
    Binding(
        "alt+c",
        "complete_session",
        "Complete",
        show=False,  # the footer keeps room; F1 and the palette list it
        id="session.complete",
        tooltip="Mark the session on screen (or under the list's cursor) as done, after "
        "you confirm; it stays readable.",
        priority=True,
    ),
    Binding(
        "alt+d",
        "delete_session",
        "Delete",
        show=False,
        id="session.delete",
        tooltip="Delete the session on screen (or under the list's cursor) from the archive, "
        "after you confirm.",
        priority=True,
    ),
    Binding(
        "alt+e",
        "rename_session",
        "Rename",
        show=False,
        id="session.rename",
        tooltip="Rename the session on screen (or under the list's cursor).",
        priority=True,
    ),
    Binding(
        "ctrl+f",
        "filter_sessions",
        "Filter",
        id="session-list.filter",
        tooltip="Filter the session list: typing narrows it by name, Enter opens the row, "
        "Escape shows every session again.",
        priority=True,
    ),
    Binding(
        "ctrl+b",
        "toggle_sidebar",
        "Sidebar",
        show=False,
        id="session-list.toggle",
        tooltip="Hide or show the session list (below 100 columns it hides by itself).",
        priority=True,
    ),
    Binding(
        "ctrl+g",
        "dag_view",
        "Plan",
        id="plan.dag-view",
        tooltip="Show the session's plan as layers of tasks with live status; Enter on a "
        "task opens its pipeline.",
        priority=True,
    ),
    Binding(
        "pageup",
        "scroll_transcript(-1)",
        "Scroll up",
        show=False,
        id="transcript.page-up",
        tooltip="Scroll the transcript up a page (also while typing in the composer).",
        priority=True,  # the composer's text box would take it otherwise
    ),
    Binding(
        "pagedown",
        "scroll_transcript(1)",
        "Scroll down",
        show=False,
        id="transcript.page-down",
        tooltip="Scroll the transcript down a page (also while typing in the composer).",
        priority=True,  # the composer's text box would take it otherwise
    ),
    Binding(
        "ctrl+o",
        "toggle_block",
        "Fold block",
        show=False,
        id="transcript.toggle-block",
        tooltip="Fold or unfold the selected tool block of the transcript (else the newest).",
        priority=True,
    ),
    Binding(
        "alt+o",
        "toggle_all_blocks",
        "Fold all",
        show=False,
        id="transcript.toggle-all-blocks",
        tooltip="Unfold every tool block of the transcript, or fold them all.",
        priority=True,
    ),
    Binding(
        "alt+y",
        "copy_block",
        "Copy",
        show=False,
        id="transcript.copy",
        tooltip="Copy the selected tool block of the transcript, else the newest answer.",
        priority=True,
    ),
    Binding(
        "escape",
        "interrupt",
        "Stop",
        show=False,
        id="session.interrupt",
        tooltip="Stop the answer being written; otherwise back to the composer.",
    ),
    Binding(
        "f1",
        "app.help",
        "Help",
        id="app.help",
        tooltip="Every key (with its id, for [keys]) and every / command, on one screen.",
        priority=True,
    ),
    Binding(
        "question_mark",
        "app.help_unless_typing",
        "Help",
        show=False,
        key_display="?",
        id="app.help-question",
        tooltip="The help screen, when the composer is empty (otherwise ? is typed).",
        priority=True,
    ),
    Binding(
        "ctrl+t",
        "app.next_theme",
        "Theme",
        show=False,
        id="app.theme-next",
        tooltip="Switch between the dark and the light theme (kept for the next start).",
        priority=True,
    ),
    Binding(
        "f2",
        "open_inbox",
        "Inbox",
        id="approvals.inbox",
        tooltip="Every approval, plan and question waiting on you, from every session.",
        priority=True,
    ),
]
