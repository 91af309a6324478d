"""Filling the search properties and counts of a server graph written before they existed.

A graph written by an older llama-kb has no search properties and no counts, so its search
index would find nothing. When a store opens a graph without the ``search`` marker, every node
gets its search properties and the counts are made from every chunk and relation once; then
the marker is set and the writes keep everything current (:mod:`._cypher_search_stats`).
A graph at version 1 lacks only its chunks' ``kb_repeats``, which their ``kb_lex`` gives.
"""

from __future__ import annotations

import logging
from typing import TYPE_CHECKING

from llama_index.core.graph_stores.types import ChunkNode

from llama_kb import graph_model as gm
from llama_kb.access import PUBLIC
from llama_kb.stores._cypher_base import CHUNK_LABEL, META_LABEL
from llama_kb.stores._cypher_search_props import node_properties, repeats
from llama_kb.stores._cypher_search_stats import (
    ACCESS_LABEL,
    NAME_STAT_LABEL,
    Deltas,
    SearchStats,
)

if TYPE_CHECKING:
    from llama_kb.stores._cypher_reads import CypherReads

logger = logging.getLogger(__name__)

SEARCH_VERSION = 2
_MARKER = f"MATCH (m:{META_LABEL} {{key: 'search'}}) RETURN m.value"
_BATCH = 2000


def fill_search(store: CypherReads) -> None:
    """Give an older graph its search properties and counts (once; a no-op afterwards)."""
    rows = store._query(_MARKER, action="read the search index version")
    version = int(rows[0][0]) if rows and rows[0][0] is not None else 0
    if version >= SEARCH_VERSION:
        return
    if version == 1:
        _fill_repeats(store)
    else:
        _fill_all(store)
    store._query(
        f"MERGE (m:{META_LABEL} {{key: 'search'}}) SET m.value = $version",
        {"version": SEARCH_VERSION},
        write=True,
        action="record the search index version",
    )


def _fill_all(store: CypherReads) -> None:
    """Every node's search properties and every count, from the stored nodes."""
    nodes = store.get()
    if nodes:
        logger.info("filling the search index of %d graph nodes (once)", len(nodes))
        updates = []
        for node in nodes:
            text = node.text if isinstance(node, ChunkNode) else None
            name = getattr(node, "name", None)
            extra = node_properties(node.label, name, text, node.properties)
            if extra:
                updates.append({"id": node.id, "props": extra})
        for start in range(0, len(updates), _BATCH):
            store._per_id_label(
                "UNWIND $rows AS row MATCH (n:{label} {id: row.id}) SET n += row.props",
                {"rows": updates[start : start + _BATCH]},
                write=True,
                action="fill the search index",
            )
        _recount(store, [n.id for n in nodes if n.label == gm.CHUNK])
        store._bump()  # what readers keep per revision (counts, words) is read again


def _fill_repeats(store: CypherReads) -> None:
    """``kb_repeats`` of every chunk without it, from its ``kb_lex`` (``_BATCH`` at a time;
    it stops, and warns, if a batch sets nothing: a chunk without an ``id``)."""
    while rows := store._query(
        f"MATCH (n:{CHUNK_LABEL}) WHERE n.kb_repeats IS NULL "
        "RETURN n.id, coalesce(n.kb_lex, '') LIMIT $batch",
        {"batch": _BATCH},
        action="fill the search index",
    ):
        updates = [{"id": c, "repeats": repeats(str(lex).split())} for c, lex in rows]
        (set_,) = store._query(
            f"UNWIND $rows AS row MATCH (n:{CHUNK_LABEL} {{id: row.id}}) "
            "SET n.kb_repeats = row.repeats RETURN count(n)",
            {"rows": updates},
            write=True,
            action="fill the search index",
        )
        if not set_[0]:
            logger.warning("%d chunks without an id keep no word repeats", len(rows))
            return


def _recount(store: CypherReads, chunk_ids: list[str]) -> None:
    """Make every count from the stored chunks and relations."""
    for label in (ACCESS_LABEL, NAME_STAT_LABEL):
        store._query(f"MATCH (s:{label}) DELETE s", write=True, action="fill the search index")
    stats = SearchStats(store)
    deltas = Deltas()
    deltas.chunks(stats.chunk_rows(chunk_ids).values(), 1)
    any_node = store.dialect.any_node
    rows = store._query(
        f"MATCH (s{any_node})-[r]->(t{any_node}) "
        f"RETURN s.id, t.id, type(r), coalesce(r.access, '{PUBLIC}')",
        action="fill the search index",
    )
    deltas.relations(((str(a), str(b), str(c), str(d)) for a, b, c, d in rows), 1)
    stats.apply(deltas)
