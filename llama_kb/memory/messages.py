"""Conversations as plain messages: LangChain, LlamaIndex or role/content dicts."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from llama_kb.errors import DocumentError

_LANGCHAIN_ROLES = {"human": "user", "ai": "assistant"}


@dataclass(frozen=True)
class Message:
    """One message of a conversation.

    Attributes:
        message_id: The message's id (its index in the conversation when it had none).
        role: ``user``, ``assistant``, ``system``, ``tool`` ...
        content: The text.
    """

    message_id: str
    role: str
    content: str


def to_messages(conversation: Sequence[Any]) -> list[Message]:
    """Normalise a conversation to :class:`Message` objects.

    Args:
        conversation: LangChain ``BaseMessage`` objects, LlamaIndex ``ChatMessage`` objects
            or mappings with ``role`` and ``content`` (and optionally ``id``).

    Returns:
        The messages in order; a message without an id gets its index (``"0"``, ``"1"`` ...).

    Raises:
        DocumentError: The conversation is empty, a message has no text, or ids repeat.
    """
    if isinstance(conversation, str | bytes) or not conversation:
        raise DocumentError("<conversation>", "expected a non-empty list of messages")
    messages = [_one(i, m) for i, m in enumerate(conversation)]
    ids = [m.message_id for m in messages]
    if len(set(ids)) != len(ids):
        raise DocumentError("<conversation>", "message ids must be unique")
    return messages


def _one(index: int, message: Any) -> Message:
    if isinstance(message, Mapping):
        role, content, message_id = message.get("role"), message.get("content"), message.get("id")
    elif hasattr(message, "role") and hasattr(message, "content"):  # LlamaIndex ChatMessage
        role = getattr(message.role, "value", message.role)
        content = message.content
        message_id = (getattr(message, "additional_kwargs", None) or {}).get("id")
    elif hasattr(message, "type") and hasattr(message, "content"):  # LangChain BaseMessage
        role = _LANGCHAIN_ROLES.get(message.type, message.type)
        content = message.text if isinstance(message.content, list) else message.content
        message_id = getattr(message, "id", None)
    else:
        raise DocumentError(
            f"message {index}",
            f"unsupported message of type {type(message).__name__}: use a LangChain or "
            "LlamaIndex chat message or a {'role': ..., 'content': ...} mapping",
        )
    if not isinstance(content, str) or not content.strip():
        raise DocumentError(f"message {message_id or index}", "has no text content")
    return Message(str(index if message_id in (None, "") else message_id), str(role), content)
