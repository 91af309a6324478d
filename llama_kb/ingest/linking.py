"""Link chunks to the documents and entities whose names they mention."""

from __future__ import annotations

from collections.abc import Iterable, Sequence

from llama_index.core.graph_stores.types import Relation

from llama_kb import graph_model as gm
from llama_kb.names import NameMatcher
from llama_kb.stores.chroma_vector import ChromaChunkStore
from llama_kb.stores.graph import KBGraphStore


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


def link_chunks(
    graph: KBGraphStore,
    vectors: ChromaChunkStore,
    written: Sequence[tuple[str, str, str]],
    new_doc_ids: Sequence[str],
    relink_all: bool = False,
) -> None:
    """Link new chunks to every known name, and older chunks to names of new documents.

    With ``relink_all`` (an earlier run died before linking) every chunk is matched
    against every name.
    """
    names = graph.named_nodes(labels=(gm.DOCUMENT, gm.ENTITY))
    if relink_all:
        written = [
            (chunk_id, str(meta.get("doc_id", "")), text)
            for chunk_id, text, meta in vectors.iter_chunks()
        ]
        new_names = names
    else:
        new_names = graph.named_nodes(ids=[gm.doc_node_id(d) for d in new_doc_ids])
    if not written:
        return
    matcher = NameMatcher().add_all((name, node_id) for node_id, name, _ in names)
    relations = mention_relations(written, matcher)
    written_ids = {chunk_id for chunk_id, _, _ in written}
    if new_names and not relink_all:
        fresh = NameMatcher().add_all((name, node_id) for node_id, name, _ in new_names)
        old_chunks = (
            (chunk_id, str(meta.get("doc_id", "")), text)
            for chunk_id, text, meta in vectors.iter_chunks()
            if chunk_id not in written_ids
        )
        relations.extend(mention_relations(old_chunks, fresh))
    graph.upsert_relations(relations)
