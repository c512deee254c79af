"""The offline provider: the default when no model is configured.

It makes no model call. It answers only what needs no model (what Sylk can do
offline, which provider is in use) and, for everything else, says plainly
which provider to configure and how. It never pretends to have understood a
request.
"""

from __future__ import annotations

from pathlib import Path


def how_to_configure(config_path: Path | None) -> str:
    where = str(config_path) if config_path else "config.toml in the config dir"
    return (
        "Configure a model: export ANTHROPIC_API_KEY=... or OPENAI_API_KEY=..., or "
        "OPENAI_BASE_URL=http://127.0.0.1:11434/v1 for a local server (Ollama, llama.cpp, "
        f"vLLM), or set [providers.NAME] in {where}; then restart Sylk. "
        "`sylk run --provider scripted` plays a script offline."
    )


OFFLINE_ABILITIES = (
    "Offline, Sylk keeps every session and transcript, routes what you type, and these "
    "work: /session new|list|switch|suspend|resume|complete, /status, /tools, /help, "
    "session export, and keyboard switching between sessions. The Librarian answers "
    "'where is X defined' from its code index, the Archivalist answers from the archive "
    "what was done and said, and the Academic answers best-practice questions from its "
    "built-in library."
)

_ABOUT = ("what can you do", "help", "what works", "commands")
_STATUS = ("which model", "what model", "which provider", "status", "are you online")


MODEL_REMINDER = "(No model configured: /status says how to set one up.)"
"""What an offline answer says instead of the whole advice, once a session has seen it."""


def offline_answer(
    user_text: str, config_path: Path | None, agent: str | None = None, *, advised: bool = False
) -> str:
    """``advised``: the session was told how to configure a model already, so a
    one-line reminder replaces the advice (asking which model still gets it whole)."""
    asked = user_text.strip().lower()
    advice = MODEL_REMINDER if advised else how_to_configure(config_path)
    if any(key in asked for key in _STATUS):
        return "No language model is configured: Sylk is offline.\n" + how_to_configure(config_path)
    if any(key in asked for key in _ABOUT):
        return OFFLINE_ABILITIES + "\n" + advice
    who = f"the {agent}" if agent else "no agent"
    return (
        f"No language model is configured, so {who} cannot act on this yet; "
        "your message is saved in this session's transcript.\n" + advice
    )
