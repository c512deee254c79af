"""Fixtures for integration tests that talk HTTP to local stub servers."""

from __future__ import annotations

from collections.abc import AsyncIterator, Iterator
from typing import TYPE_CHECKING, Any

import pytest

from tests.stubs.llm_stub import LLMStub

if TYPE_CHECKING:  # the SDKs load only for the tests that use them
    from backend.llm.anthropic_adapter import AnthropicProvider
    from backend.llm.openai_chat import OpenAIProvider

VENDOR_PATHS = {"anthropic": "/v1/messages", "openai": "/v1/chat/completions"}
TEST_KEY = "sk-test-key"


@pytest.fixture
def llm_stub() -> Iterator[LLMStub]:
    """A fresh Anthropic/OpenAI stand-in on 127.0.0.1, serving from its own thread."""
    with LLMStub() as stub:
        yield stub


def make_provider(vendor: str, base_url: str, **kwargs: Any) -> AnthropicProvider | OpenAIProvider:
    """The real adapter for ``vendor`` on the real SDK, pointed at ``base_url``
    (the stub's root; ``/v1`` is added for OpenAI)."""
    if vendor == "anthropic":
        from backend.llm.anthropic_adapter import AnthropicProvider

        return AnthropicProvider(TEST_KEY, base_url, **kwargs)
    from backend.llm.openai_chat import OpenAIProvider

    return OpenAIProvider(TEST_KEY, f"{base_url}/v1", **kwargs)


@pytest.fixture(params=["anthropic", "openai"])
def vendor(request: pytest.FixtureRequest) -> str:
    return str(request.param)


@pytest.fixture
def llm_path(vendor: str) -> str:
    """The API path the vendor's SDK posts to."""
    return VENDOR_PATHS[vendor]


@pytest.fixture
async def provider(
    llm_stub: LLMStub, vendor: str
) -> AsyncIterator[AnthropicProvider | OpenAIProvider]:
    adapter = make_provider(vendor, llm_stub.base_url, timeout_s=10.0)
    try:
        yield adapter
    finally:
        await adapter.aclose()
