"""The message envelope validates what it is given and round-trips exactly."""

from __future__ import annotations

from datetime import datetime, timedelta
from typing import Any

import pytest
from pydantic import ValidationError

from backend.clock import utc_now
from backend.messages import Message, MessageStatus, MessageType, Priority, message_text

Msg = Message[dict[str, Any]]


def _msg(**overrides: Any) -> Msg:
    fields: dict[str, Any] = {
        "session_id": "s1",
        "source": "user",
        "type": MessageType.USER_INPUT,
        "payload": {"text": "hi"},
    }
    fields.update(overrides)
    return Msg(**fields)


def test_defaults_fill_the_seeds_fields() -> None:
    m = _msg()
    assert len(m.id) == 32
    assert m.status is MessageStatus.PENDING
    assert m.priority is Priority.NORMAL
    assert m.attempt == 0 and m.timestamp.tzinfo is not None
    assert set(Msg.model_fields) >= {
        "id", "correlation_id", "parent_id", "session_id", "source", "target", "type",
        "payload", "timestamp", "deadline", "ttl", "status", "attempt", "max_attempts",
        "priority", "metadata", "error",
    }  # fmt: skip


@pytest.mark.parametrize(
    ("overrides", "field"),
    [
        ({"session_id": ""}, "session_id"),
        ({"source": ""}, "source"),
        ({"type": "NOT_A_TYPE"}, "type"),
        ({"timestamp": datetime(2026, 1, 1)}, "timestamp"),
        ({"ttl": timedelta(seconds=-1)}, "ttl"),
        ({"attempt": -1}, "attempt"),
        ({"max_attempts": 0}, "max_attempts"),
        ({"priority": 99}, "priority"),
        ({"surprise": 1}, "surprise"),
    ],
)
def test_bad_fields_are_rejected_with_their_name(overrides: dict[str, Any], field: str) -> None:
    with pytest.raises(ValidationError) as info:
        _msg(**overrides)
    assert field in str(info.value)


def test_cross_field_rules() -> None:
    with pytest.raises(ValidationError, match="exceeds max_attempts"):
        _msg(attempt=4, max_attempts=3)
    now = utc_now()
    with pytest.raises(ValidationError, match="deadline"):
        _msg(timestamp=now, deadline=now - timedelta(seconds=1))


def test_session_id_is_required() -> None:
    with pytest.raises(ValidationError, match="session_id"):
        Msg(source="user", type=MessageType.USER_INPUT, payload={})  # type: ignore[call-arg]


def test_json_round_trip_is_exact() -> None:
    m = _msg(
        ttl=timedelta(seconds=30),
        priority=Priority.HIGH,
        metadata={"k": [1, 2]},
        max_attempts=3,
        attempt=1,
        target="librarian",
    )
    assert Msg.model_validate_json(m.model_dump_json()) == m


def test_expiry_from_ttl_and_deadline() -> None:
    now = utc_now()
    m = _msg(timestamp=now, ttl=timedelta(seconds=10), deadline=now + timedelta(seconds=5))
    assert m.expires_at() == now + timedelta(seconds=5)
    assert not m.is_expired(now + timedelta(seconds=4))
    assert m.is_expired(now + timedelta(seconds=6))
    assert _msg().expires_at() is None


def test_reply_is_correlated_and_stays_in_the_session() -> None:
    request = _msg(target="librarian")
    reply = request.reply(
        source="librarian", type=MessageType.CONTEXT_RESPONSE, payload={"text": "x"}
    )
    assert reply.session_id == request.session_id
    assert reply.correlation_id == request.id and reply.parent_id == request.id
    assert reply.target == "user"


def test_message_types_include_the_seeds() -> None:
    for name in ("USER_INPUT", "SESSION_SWITCH", "DAG_EXECUTE", "INSPECTOR_FEEDBACK"):
        assert MessageType(name).value == name


def test_message_text_handles_any_payload() -> None:
    assert message_text(_msg()) == "hi"
    assert (
        message_text(Message[str](session_id="s", source="x", type="USER_INPUT", payload="t"))
        == "t"
    )
    assert message_text(_msg(payload={"n": 1})) == "{'n': 1}"
