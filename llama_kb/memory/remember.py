"""``remember``: a conversation becomes knowledge pieces, deduplicated within each scope.

1. The messages are normalised (:func:`~llama_kb.memory.messages.to_messages`) and scanned
   with the ingestion guard's :class:`~llama_kb.ingest.guards.SecretScanner`: a secret
   refuses the whole conversation before the LLM sees it and before anything is stored.
2. The LLM extracts items (content, level, confidence, source message ids, knowledge type),
   validated with bounded retries (:mod:`~llama_kb.memory.extraction`).
3. Each item gets the access key of its level for the principal (:func:`level_key`).
   Stored pieces with exactly that key and a similarity >= ``threshold`` are candidates;
   identical content is ``existing`` outright, otherwise the LLM decides new / existing /
   merge / contradiction (:mod:`~llama_kb.memory.decision`). Nothing is compared or merged
   across keys.
4. Every decision is written to the audit trail and every piece keeps the conversations and
   messages it comes from (:mod:`~llama_kb.memory.audit`).
"""

from __future__ import annotations

import hashlib
import json
import os
from collections.abc import Sequence
from contextlib import closing
from dataclasses import dataclass, field
from typing import Any

from llama_kb.access import PUBLIC, Principal, access_flags
from llama_kb.errors import ConfigurationError, DocumentError
from llama_kb.ingest.guards import SecretScanner
from llama_kb.knowledge.model import KnowledgePiece, stable_hash
from llama_kb.knowledge.store import KnowledgeStore
from llama_kb.knowledge.structuring import LLM_ENV, model_name, resolve_llm
from llama_kb.memory.audit import AuditRecord, MemoryAudit
from llama_kb.memory.decision import decide
from llama_kb.memory.extraction import extract_items
from llama_kb.memory.items import MemoryItem, level_key
from llama_kb.memory.messages import Message, to_messages

DEFAULT_THRESHOLD = 0.8
DEFAULT_MAX_RETRIES = 2
MEMORY_TAG = "memory"
_CANDIDATES = 5


@dataclass(frozen=True)
class ItemOutcome:
    """What happened to one extracted item.

    Attributes:
        item: The item as extracted.
        action: ``added``, ``existing``, ``merged`` or ``contradiction``.
        piece_id: The piece written (``added``, ``merged``, ``contradiction``) or found.
        access: The piece's access key.
        related_piece_id: The stored piece it contradicts.
        reason: Why.
    """

    item: MemoryItem
    action: str
    piece_id: str
    access: str
    related_piece_id: str | None = None
    reason: str = ""


@dataclass
class RememberResult:
    """What :func:`remember` did with a conversation.

    Attributes:
        conversation_id: The conversation's id (given, or a hash of its messages).
        model: The LLM that extracted and decided.
        outcomes: One per stored or matched item.
        errors: Items refused (``item N: reason``), e.g. a level the principal cannot have.
        llm_calls: LLM calls made, retries included.
    """

    conversation_id: str
    model: str
    outcomes: list[ItemOutcome] = field(default_factory=list)
    errors: list[str] = field(default_factory=list)
    llm_calls: int = 0


def remember(
    store: KnowledgeStore,
    conversation: Sequence[Any],
    *,
    principal: Principal | str | None = None,
    llm: Any = None,
    conversation_id: str | None = None,
    threshold: float = DEFAULT_THRESHOLD,
    max_retries: int = DEFAULT_MAX_RETRIES,
) -> RememberResult:
    """Extract knowledge from ``conversation`` and store it as pieces of ``store``.

    Args:
        store: The knowledge layers (``kb.knowledge``).
        conversation: LangChain / LlamaIndex chat messages or role/content mappings.
        principal: Who had the conversation (``Principal``, ``"user@org"``); decides the
            access key of each level.
        llm: A LlamaIndex LLM, a LangChain chat model or ``prompt -> str``; default the
            ``LLAMA_KB_LLM`` setting.
        conversation_id: Id kept in provenance and audit (default: hash of the messages).
        threshold: Cosine similarity from which stored pieces are duplicate candidates.
        max_retries: Further LLM attempts after an invalid answer.

    Returns:
        The outcome per item and the items refused.

    Raises:
        DocumentError: A message holds a secret (nothing is stored), the conversation is
            malformed, or the LLM gave no valid answer within the attempts.
        ConfigurationError: No LLM is configured, or an option is out of range.
    """
    if not 0.0 < threshold <= 1.0:
        raise ConfigurationError(f"threshold must be in (0, 1], got {threshold}")
    if max_retries < 0:
        raise ConfigurationError(f"max_retries must be >= 0, got {max_retries}")
    messages = to_messages(conversation)
    refuse_secrets(messages)
    llm = _configured(llm)
    reader = Principal.parse(principal)
    conversation_id = conversation_id or _conversation_hash(messages)
    items, calls = extract_items(llm, messages, max_retries)
    result = RememberResult(conversation_id, model_name(llm), llm_calls=calls)
    with closing(MemoryAudit(store.root)) as audit:
        memorizer = _Memorizer(store, audit, llm, result, threshold, max_retries)
        for n, item in enumerate(items):
            try:
                key = level_key(item.level, reader)
            except ConfigurationError as e:
                result.errors.append(f"item {n}: {e}")
                continue
            memorizer.place(n, item, key)
    return result


def refuse_secrets(messages: Sequence[Message]) -> None:
    """Raise if any message holds a secret, naming each message and secret type.

    Raises:
        DocumentError: Naming ``message <id>: line N: <type>``, never the secret.
    """
    scanner = SecretScanner()
    found = [
        f"message {m.message_id}: {f.describe()}" for m in messages for f in scanner.scan(m.content)
    ]
    if found:
        raise DocumentError(
            "<conversation>",
            f"contains secrets ({'; '.join(found)}); remove them: nothing was remembered",
        )


def _configured(llm: Any) -> Any:
    if llm is not None:
        return llm
    if not os.environ.get(LLM_ENV):
        raise ConfigurationError(
            f"remember needs an LLM to extract knowledge: pass llm=... (CLI: --llm "
            f"openai:<model>) or set {LLM_ENV}"
        )
    return resolve_llm()


def _conversation_hash(messages: Sequence[Message]) -> str:
    data = json.dumps([m.__dict__ for m in messages], sort_keys=True, ensure_ascii=False)
    return f"conversation-{hashlib.sha256(data.encode()).hexdigest()[:16]}"


def _same(a: str, b: str) -> bool:
    return " ".join(a.lower().split()).rstrip(".") == " ".join(b.lower().split()).rstrip(".")


class _Memorizer:
    """Places items one by one, so later items of a conversation see earlier ones."""

    def __init__(
        self,
        store: KnowledgeStore,
        audit: MemoryAudit,
        llm: Any,
        result: RememberResult,
        threshold: float,
        max_retries: int,
    ) -> None:
        self.store, self.audit, self.llm, self.result = store, audit, llm, result
        self.threshold, self.max_retries = threshold, max_retries
        self.scanner = SecretScanner()

    def place(self, n: int, item: MemoryItem, key: str) -> None:
        secrets = self.scanner.types(item.content)
        if secrets:
            self.result.errors.append(f"item {n}: the LLM's answer holds secrets {secrets}")
            return
        candidates = self.candidates(item.content, key)
        exact = next((p for p, _ in candidates if _same(p.content, item.content)), None)
        if exact is not None:
            self.existing(item, key, exact, "identical content is already stored")
        elif not candidates:
            self.add(item, key, "added", "no stored piece in this scope is similar", None)
        else:
            decision, calls = decide(
                self.llm, item.content, candidates, f"decision for item {n}", self.max_retries
            )
            self.result.llm_calls += calls
            chosen = {p.piece_id: p for p, _ in candidates}.get(decision.piece_id or "")
            if chosen is None or decision.decision == "new":
                self.add(item, key, "added", decision.reason, None)
            elif decision.decision == "existing":
                self.existing(item, key, chosen, decision.reason)
            elif decision.decision == "merge":
                self.merge(item, key, chosen, decision.merged_content or "", decision.reason)
            else:
                self.add(item, key, "contradiction", decision.reason, chosen)

    def candidates(self, content: str, key: str) -> list[tuple[KnowledgePiece, float]]:
        """Stored pieces with exactly access ``key`` and similarity >= threshold."""
        vector = self.store.embedding.get_text_embedding(content)
        hits = self.store.pieces.search(vector, _CANDIDATES, access_flags(key))
        return [
            (p, score)
            for p, score in hits
            if (p.permissions or PUBLIC) == key and score >= self.threshold
        ]

    def add(
        self, item: MemoryItem, key: str, action: str, reason: str, related: KnowledgePiece | None
    ) -> None:
        piece = KnowledgePiece(
            piece_id=f"memory-{stable_hash([key, item.content])[:16]}",
            content=item.content,
            knowledge_type=item.knowledge_type,
            tags=(MEMORY_TAG,),
            permissions=key,
        )
        self.store.pieces.upsert([piece])
        before = related.content if related else None
        related_id = related.piece_id if related else None
        self.finish(item, key, action, piece.piece_id, reason, before, related_id)

    def existing(self, item: MemoryItem, key: str, piece: KnowledgePiece, reason: str) -> None:
        self.finish(item, key, "existing", piece.piece_id, reason, piece.content, None)

    def merge(
        self, item: MemoryItem, key: str, piece: KnowledgePiece, merged: str, reason: str
    ) -> None:
        update = {"content": merged, "embedding_text": None, "updated_at": None}
        self.store.pieces.upsert([piece.model_copy(update=update)])
        self.finish(item, key, "merged", piece.piece_id, reason, piece.content, None, merged)

    def finish(
        self,
        item: MemoryItem,
        key: str,
        action: str,
        piece_id: str,
        reason: str,
        before: str | None,
        related_id: str | None,
        after: str | None = None,
    ) -> None:
        conversation = self.result.conversation_id
        self.audit.add_provenance(piece_id, conversation, item.source_message_ids)
        record = AuditRecord(
            conversation,
            action,
            piece_id,
            related_id,
            key,
            before,
            after or (item.content if action != "existing" else before),
            reason,
            self.result.model,
        )
        self.audit.record(record)
        self.result.outcomes.append(ItemOutcome(item, action, piece_id, key, related_id, reason))
