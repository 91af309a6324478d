"""Memory from conversations (seed 001): extraction by level, deduplication and merge.

:func:`remember` turns a conversation into knowledge pieces whose access keys follow the
level of each item and the principal; near-duplicates are resolved by the LLM within one
access key only, and :class:`MemoryAudit` keeps the audit trail and provenance.

Layering: imports :mod:`llama_kb.knowledge` and the ingestion guards; the facade
(:mod:`llama_kb.knowledge_base`) imports it.
"""

from llama_kb.memory.audit import MEMORY_DB, AuditRecord, MemoryAudit, Provenance
from llama_kb.memory.decision import Decision
from llama_kb.memory.items import MemoryItem, level_key
from llama_kb.memory.messages import Message, to_messages
from llama_kb.memory.remember import (
    DEFAULT_THRESHOLD,
    ItemOutcome,
    RememberResult,
    refuse_secrets,
    remember,
)

__all__ = [
    "DEFAULT_THRESHOLD",
    "MEMORY_DB",
    "AuditRecord",
    "Decision",
    "ItemOutcome",
    "MemoryAudit",
    "MemoryItem",
    "Message",
    "Provenance",
    "RememberResult",
    "level_key",
    "refuse_secrets",
    "remember",
    "to_messages",
]
