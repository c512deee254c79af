"""The OpenAI Chat Completions adapter, for OpenAI and the servers that copy its API."""

from backend.llm.openai_chat.adapter import OpenAIProvider, ToolChoice
from backend.llm.openai_chat.messages import to_openai_messages, to_openai_tools

__all__ = ["OpenAIProvider", "ToolChoice", "to_openai_messages", "to_openai_tools"]
