"""Link chunks to the documents and entities whose names they mention."""

from __future__ import annotations

from collections.abc import Iterable

from llama_index.core.graph_stores.types import Relation

from llama_kb import graph_model as gm
from llama_kb.names import NameMatcher


def mention_relations(
    chunks: Iterable[tuple[str, str, str]], matcher: NameMatcher
) -> list[Relation]:
    """``MENTIONS`` relations for every known name in each ``(chunk_id, doc_id, text)``.

    A chunk does not "mention" its own document; repeated mentions of one node in a
    chunk give one relation with a ``count``.
    """
    relations: list[Relation] = []
    for chunk_id, doc_id, text in chunks:
        own = gm.doc_node_id(doc_id)
        counts: dict[str, int] = {}
        for mention in matcher.find(text):
            if mention.node_id != own:
                counts[mention.node_id] = counts.get(mention.node_id, 0) + 1
        relations.extend(
            gm.relation(chunk_id, gm.MENTIONS, node_id, gm.MENTION_COST, signal="name", count=n)
            for node_id, n in counts.items()
        )
    return relations
