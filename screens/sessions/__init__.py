"""The dialogs about one session: confirming what cannot be undone (``confirm``),
naming a new one (``new_session``) or renaming one (``rename_session``), and offering
to merge a completed session's branch back (``merge_offer``)."""
