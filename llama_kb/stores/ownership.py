"""Server namespaces (a Chroma collection, a graph) record the knowledge base that owns them.

See :mod:`llama_kb.kb_identity` for how a knowledge base gets its id and namespace.
"""

from __future__ import annotations

from llama_kb.errors import KnowledgeBaseError

OWNER_KEY = "llama_kb_id"
"""Collection metadata key / graph meta node holding the owner's id."""


def check_owner(store: str, name: str, owner: object, kb_id: str, items: int, fresh: bool) -> None:
    """Refuse ``store`` ``name`` (owned by ``owner``, holding ``items``) to knowledge base
    ``kb_id``, unless it owns it or nobody does and it is empty or ``kb_id`` is not new (a
    base from before ids adopts its own namespace).

    Raises:
        KnowledgeBaseError: Another knowledge base (or application) uses the namespace.
    """
    if owner == kb_id:
        return
    if owner is not None:
        raise KnowledgeBaseError(
            f"{store} {name!r} belongs to another knowledge base (id {owner}); give this one "
            "its own with the `collection` setting"
        )
    if fresh and items:
        raise KnowledgeBaseError(
            f"{store} {name!r} already holds {items} items of another knowledge base or "
            "application; give this knowledge base its own with the `collection` setting"
        )
