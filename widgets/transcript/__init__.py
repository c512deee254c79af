"""The transcript of the session on screen, a room of its own.

``view`` is the widget (:class:`Transcript`: its look, keys and tool blocks); ``layout``
lays out and paints the messages; ``blocks`` draws one message; ``tool_blocks`` one
tool call (``diff_view`` colours a diff); ``reasoning_block`` an answer's reasoning;
``folds`` keeps which blocks are unfolded and selected; ``markdown_render`` and
``markdown_reflow`` draw an answer's Markdown. Only :class:`Transcript` is for others.
"""

from widgets.transcript.view import CHUNK, WRAP_OLDER_DELAY, Transcript

__all__ = ["CHUNK", "WRAP_OLDER_DELAY", "Transcript"]
