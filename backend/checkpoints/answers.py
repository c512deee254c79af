"""The text ``/undo`` and ``/diff`` answer with (the TUI, ``sylk run`` and the CLI show it)."""

from __future__ import annotations

from backend.checkpoints.records import SessionDiff, UndoOutcome

_NAMES_SHOWN = 40


def _names(paths: list[str]) -> str:
    shown = ", ".join(paths[:_NAMES_SHOWN])
    return shown + (f" (and {len(paths) - _NAMES_SHOWN} more)" if len(paths) > _NAMES_SHOWN else "")


def undo_text(outcome: UndoOutcome) -> str:
    who = f"the {outcome.role}'s turn" if outcome.role else "the last turn"
    lines = [f"Undid {who} ({(outcome.turn_id or '?')[:8]}):"]
    if outcome.restored:
        lines.append(f"  restored: {_names(outcome.restored)}")
    if outcome.recreated:
        lines.append(f"  recreated: {_names(outcome.recreated)}")
    if outcome.removed:
        lines.append(f"  removed: {_names(outcome.removed)}")
    if outcome.skipped:
        lines.append(
            f"  not checkpointed (too large), left as they are: {_names(list(outcome.skipped))}"
        )
    more = outcome.remaining
    lines.append(
        f"{more} earlier turn{'s' if more != 1 else ''} can still be undone."
        if more
        else "No earlier turn of this session to undo."
    )
    return "\n".join(lines)


_MARK = {"added": "A", "modified": "M", "deleted": "D"}


def diff_text(diff: SessionDiff) -> str:
    if not diff.started:
        return "No agent turn of this session has changed files yet."
    if not diff.files:
        return "The workspace is as it was when this session started changing it."
    count = len(diff.files)
    lines = [f"{count} file{'s' if count != 1 else ''} changed since this session's start:"]
    lines += [f"  {_MARK[f.status]} {f.path}" for f in diff.files[:_NAMES_SHOWN]]
    if count > _NAMES_SHOWN:
        lines.append(f"  … and {count - _NAMES_SHOWN} more")
    if diff.skipped:
        lines.append(f"not compared (too large): {_names(list(diff.skipped))}")
    text = "\n".join(lines)
    if diff.patch:
        text += "\n\n" + diff.patch.rstrip("\n")
    if diff.shown < count:
        rest = count - diff.shown
        text += f"\n… {rest} more file{'s' if rest != 1 else ''} (the diff is cut at 256 KiB)"
    return text
