"""The offline provider: the default when no model is configured.

It makes no model call. It answers only what needs no model (what Sylk can do
offline, which provider is in use) and, for everything else, says plainly
which provider to configure and how. It never pretends to have understood a
request.
"""

from __future__ import annotations

from pathlib import Path


def how_to_configure(config_path: Path | None) -> str:
    where = str(config_path) if config_path else "the config file"
    return (
        "To get answers from a model, configure a provider:\n"
        "  - Anthropic: export ANTHROPIC_API_KEY=...\n"
        "  - OpenAI: export OPENAI_API_KEY=...\n"
        "  - a local OpenAI-compatible server (Ollama, llama.cpp, vLLM): "
        "export OPENAI_BASE_URL=http://127.0.0.1:11434/v1\n"
        f'or add [providers.anthropic] api_key = "..." (or base_url) to {where}, '
        "then restart Sylk. `sylk run --provider scripted` plays a script file offline."
    )


OFFLINE_ABILITIES = (
    "Offline, Sylk keeps every session and transcript, and these work: "
    "/session new|list|switch|suspend|resume|complete, /help, session export, "
    "and keyboard switching between sessions."
)

_ABOUT = ("what can you do", "help", "what works", "commands")
_STATUS = ("which model", "what model", "which provider", "status", "are you online")


def offline_answer(user_text: str, config_path: Path | None) -> str:
    asked = user_text.strip().lower()
    if any(key in asked for key in _STATUS):
        return "No language model is configured: Sylk is offline.\n" + how_to_configure(config_path)
    if any(key in asked for key in _ABOUT):
        return OFFLINE_ABILITIES + "\n" + how_to_configure(config_path)
    return (
        "No language model is configured, so no agent can act on this yet. "
        "Your message is saved in this session's transcript.\n" + how_to_configure(config_path)
    )
