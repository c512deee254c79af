"""What an external tool returned besides text: images, audio and resources, kept whole.

An MCP tool may answer with image, audio, embedded-resource and resource-link
blocks. Each becomes an :class:`McpMedia` in the op's result, holding the
block exactly as the server sent it (base64 data and mimeType included), so an
in-process caller reading ``Envelope.result`` gets it whole and ``sylk mcp
serve`` hands it on to its own client as the same kind of block
(:func:`media_blocks`).

Whoever turns an envelope into JSON (the agent loop's tool result, ``batch``,
the archive) gets the block's *description* instead of its bytes: models are
given text here, and a base64 image would cost thousands of tokens and say
nothing. The description names the kind, the type and the size ("an image/png
image of 68 bytes"), so a model can tell the user what came back. Resource
links and text resources are text already and pass as they are.

No SDK import: blocks arrive as the JSON the hub dumped.
"""

from __future__ import annotations

from typing import Any

from pydantic import BaseModel, ConfigDict, model_serializer

MEDIA_TYPES = frozenset({"image", "audio", "resource", "resource_link"})
_MIME_CAP = 100  # a server's mimeType is its own words: kept short in the description


class McpMedia(BaseModel):
    """One non-text content block of an external tool's result, as the server sent it."""

    model_config = ConfigDict(frozen=True)
    block: dict[str, Any]

    @property
    def kind(self) -> str:
        return str(self.block.get("type", ""))

    @model_serializer(mode="plain")
    def _described(self) -> dict[str, Any]:
        return describe_block(self.block)


def describe_block(block: dict[str, Any]) -> dict[str, Any]:
    """The text-only view of one block: binary data replaced by its kind, type and size."""
    kind = str(block.get("type", ""))
    if kind in ("image", "audio"):
        mime = _mime(block)
        size = base64_size(block.get("data"))
        return {
            "type": kind,
            "mimeType": mime,
            "size_bytes": size,
            "note": f"an {mime} {kind} of {size} bytes was returned; it is not shown as text",
        }
    if kind == "resource":
        resource = block.get("resource")
        resource = resource if isinstance(resource, dict) else {}
        shown = {k: v for k, v in resource.items() if k not in ("blob", "_meta") and v is not None}
        if "blob" in resource:
            size = base64_size(resource.get("blob"))
            shown["size_bytes"] = size
            shown["note"] = (
                f"an embedded {_mime(resource)} resource of {size} bytes was returned; "
                "it is not shown as text"
            )
        return {"type": kind, "resource": shown}
    return {k: v for k, v in block.items() if k != "_meta" and v is not None}


def base64_size(data: Any) -> int:
    """The decoded size of base64 text, without decoding it (0 for anything else)."""
    if not isinstance(data, str):
        return 0
    text = data.strip()
    return max(0, len(text) * 3 // 4 - (len(text) - len(text.rstrip("="))))


def _mime(block: dict[str, Any]) -> str:
    mime = block.get("mimeType")
    return mime[:_MIME_CAP] if isinstance(mime, str) and mime else "unknown"


def tool_result(text: str, structured: Any, blocks: list[dict[str, Any]]) -> Any:
    """An external tool's answer as an op's result.

    Text alone (or its structured result) stays as it always was; with media it is
    ``{"text", "structured"?, "content": [McpMedia, ...]}`` so the media ride along.
    """
    media = [McpMedia(block=block) for block in blocks if block.get("type") in MEDIA_TYPES]
    plain = text if structured is None else structured
    if not media:
        return plain
    result: dict[str, Any] = {"text": text}
    if structured is not None:
        result["structured"] = structured
    result["content"] = media
    return result


def media_blocks(value: Any, *, limit: int = 64) -> list[dict[str, Any]]:
    """Every :class:`McpMedia` block found in ``value`` (a result: nested dicts and lists),
    in order, as the server sent it; at most ``limit``."""
    found: list[dict[str, Any]] = []
    stack: list[Any] = [value]
    while stack and len(found) < limit:
        item = stack.pop()
        if isinstance(item, McpMedia):
            found.append(item.block)
        elif isinstance(item, dict):
            stack.extend(reversed(list(item.values())))
        elif isinstance(item, list | tuple):
            stack.extend(reversed(item))
    return found
