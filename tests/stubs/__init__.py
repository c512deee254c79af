"""Local stand-ins for remote services, shared by tests and benchmarks."""

from tests.stubs.llm_script import (
    Drop,
    Reply,
    Stall,
    Status,
    StreamFault,
    StubToolCall,
    StubUsage,
    burst,
    text_reply,
    tool_reply,
)
from tests.stubs.llm_stub import LLMStub
from tests.stubs.stub_http import RecordedRequest

__all__ = [
    "Drop",
    "LLMStub",
    "RecordedRequest",
    "Reply",
    "Stall",
    "Status",
    "StreamFault",
    "StubToolCall",
    "StubUsage",
    "burst",
    "text_reply",
    "tool_reply",
]
