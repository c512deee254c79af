"""The OpenAI Responses API adapter, and the per-model choice between it and Chat Completions."""

from backend.llm.openai_responses.adapter import OpenAIResponsesProvider
from backend.llm.openai_responses.request import ReasoningSummary, is_reasoning_model
from backend.llm.openai_responses.routing import (
    OpenAIApiRouter,
    wants_responses_api,
    with_responses_api,
)

__all__ = [
    "OpenAIApiRouter",
    "OpenAIResponsesProvider",
    "ReasoningSummary",
    "is_reasoning_model",
    "wants_responses_api",
    "with_responses_api",
]
