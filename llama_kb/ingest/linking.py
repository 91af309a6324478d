"""Link chunks to the documents and entities whose names they mention.

New chunks are matched against every stored name; older chunks against the names of new
documents and the names new facts made (:mod:`.fact_names`). With a store that has a search
index (the embedded SQLite graph) both are bounded lookups: the new chunks' word spans are
looked up in the name table, and the older chunks that may mention a new name are found by a
phrase query on the full-text index, so an update costs what it adds, not what the knowledge
base holds. Server stores answer the same lookups from the engine's in-memory index. Links
follow the access rules of :func:`_link_with_index`.
"""

from __future__ import annotations

from collections.abc import Collection, Iterable, Mapping, Sequence

from llama_index.core.graph_stores.types import Relation

from llama_kb import graph_model as gm
from llama_kb.access import ACCESS_FIELD, PUBLIC
from llama_kb.names import Mention, NameMatcher, find_titles_first, matchable_forms
from llama_kb.stores.chroma_vector import ChromaChunkStore
from llama_kb.stores.graph import KBGraphStore
from llama_kb.stores.search import SearchIndex, restricted

_LINKED_LABELS = (gm.DOCUMENT, gm.ENTITY)
_BATCH = 256
_LONGEST = 16
"""Longest name, in words, that ingestion links (query-time linking uses 12)."""


def mention_relations(
    chunks: Iterable[tuple[str, str, str]], matcher: NameMatcher
) -> list[Relation]:
    """``MENTIONS`` relations for every known name in each ``(chunk_id, doc_id, text)``.

    A chunk does not "mention" its own document; repeated mentions of one node in a
    chunk give one relation with a ``count``.
    """
    return [
        rel for chunk in chunks for rel in _relations(chunk[0], chunk[1], matcher.find(chunk[2]))
    ]


def link_chunks(
    index: SearchIndex,
    graph: KBGraphStore,
    vectors: ChromaChunkStore,
    written: Sequence[tuple[str, str, str]],
    new_doc_ids: Sequence[str],
    relink_all: bool = False,
    new_names: Collection[tuple[str, str]] = (),
) -> None:
    """Link new chunks to every known name, and older chunks to the names of new documents
    and the ``new_names`` (``(entity node id, access key)``: a name facts made visible to that
    key's readers, :mod:`.fact_names`), through ``index`` (the graph's own, or the in-memory
    one the engine uses for server stores), so the access rules of :func:`_link_with_index`
    hold on every backend.

    With ``relink_all`` (an earlier run died before linking) every chunk is matched
    against every name.
    """
    if relink_all:
        written = [
            (chunk_id, str(meta.get("doc_id", "")), text)
            for chunk_id, text, meta in vectors.iter_chunks()
        ]
    if not written:
        return
    found = _link_with_index(index, graph, written, new_doc_ids, relink_all, new_names)
    graph.upsert_relations(found)


def _link_with_index(
    index: SearchIndex,
    graph: KBGraphStore,
    written: Sequence[tuple[str, str, str]],
    new_doc_ids: Sequence[str],
    relink_all: bool,
    new_names: Collection[tuple[str, str]],
) -> list[Relation]:
    """Links that reveal nothing (see :mod:`llama_kb.access`): a chunk links to the names
    visible through public records or records of its own key (the link inherits the
    chunk's key); an older chunk links to a new document's title (or a new name) when the
    document (the chunk that named it) is public (the link keeps the chunk's key), of the
    chunk's key, or when the chunk is public (the link takes the document's key)."""
    access = {c: str(m.get(ACCESS_FIELD, PUBLIC)) for c, (_, m) in _records(index, written)}
    relations: list[Relation] = []
    for key in sorted({access.get(chunk[0], PUBLIC) for chunk in written}):
        group = [chunk for chunk in written if access.get(chunk[0], PUBLIC) == key]
        found = _link_new(restricted(index, frozenset({PUBLIC, key})), group)
        relations.extend(_with_access(found, key))
    if relink_all or not (new_doc_ids or new_names) or index.chunk_count() <= len(written):
        return relations
    written_ids = {chunk_id for chunk_id, _, _ in written}
    doc_access = {doc_id: access.get(c, PUBLIC) for c, doc_id, _ in written}
    keyed = [(gm.doc_node_id(d), doc_access.get(d, PUBLIC)) for d in new_doc_ids]
    keyed += list(new_names)
    for key in sorted({k for _, k in keyed}):
        node_ids = [node_id for node_id, k in keyed if k == key]
        scoped = index if key == PUBLIC else restricted(index, frozenset({PUBLIC, key}))
        found = _link_older(scoped, graph, node_ids, written_ids)
        relations.extend(_with_access(found, key) if key != PUBLIC else found)
    return relations


def _with_access(relations: list[Relation], key: str) -> list[Relation]:
    for rel in relations:
        rel.properties[ACCESS_FIELD] = key
    return relations


def _records(
    index: SearchIndex, written: Sequence[tuple[str, str, str]]
) -> Iterable[tuple[str, tuple[str, dict]]]:
    for start in range(0, len(written), _BATCH):
        ids = [chunk_id for chunk_id, _, _ in written[start : start + _BATCH]]
        yield from index.chunk_records(ids).items()


def _link_new(index: SearchIndex, written: Sequence[tuple[str, str, str]]) -> list[Relation]:
    """Mentions in the ``written`` chunks of names ``index`` knows, titles first
    (:func:`~llama_kb.names.find_titles_first`)."""

    def lookup(keys: list[str]) -> Mapping[str, Mapping[str, tuple[bool, str | None]]]:
        found: dict[str, dict[str, tuple[bool, str | None]]] = {}
        for form in index.name_forms(keys, _LINKED_LABELS):
            found.setdefault(form.key, {})[form.node_id] = (form.label == gm.DOCUMENT, form.exact)
        return found

    relations: list[Relation] = []
    for start in range(0, len(written), _BATCH):
        batch = written[start : start + _BATCH]
        found = find_titles_first([t for _, _, t in batch], lookup, _LONGEST, unique=False)
        for (chunk_id, doc_id, _), mentions in zip(batch, found, strict=True):
            relations.extend(_relations(chunk_id, doc_id, mentions))
    return relations


def _link_older(
    index: SearchIndex, graph: KBGraphStore, node_ids: Sequence[str], written_ids: set[str]
) -> list[Relation]:
    """Mentions of the names of ``node_ids`` in older chunks ``index`` holds."""
    new_names = graph.named_nodes(ids=list(node_ids))
    if not new_names:
        return []
    fresh = NameMatcher().add_all((name, node_id) for node_id, name, _ in new_names)
    phrases = {" ".join(words) for _, name, _ in new_names for words in matchable_forms(name)}
    older = sorted(set(index.phrase_chunks(sorted(phrases))) - written_ids)
    relations: list[Relation] = []
    for start in range(0, len(older), _BATCH):
        records = index.chunk_records(older[start : start + _BATCH])
        found = mention_relations(
            ((c, str(meta.get("doc_id", "")), text) for c, (text, meta) in records.items()),
            fresh,
        )
        for rel in found:  # the chunk's key; narrowed by the caller for a restricted title
            rel.properties[ACCESS_FIELD] = str(records[rel.source_id][1].get(ACCESS_FIELD, PUBLIC))
        relations.extend(found)
    return relations


def _relations(chunk_id: str, doc_id: str, mentions: Iterable[Mention]) -> list[Relation]:
    own = gm.doc_node_id(doc_id)
    counts: dict[str, int] = {}
    for mention in mentions:
        if mention.node_id != own:
            counts[mention.node_id] = counts.get(mention.node_id, 0) + 1
    return [
        gm.relation(chunk_id, gm.MENTIONS, node_id, gm.MENTION_COST, signal="name", count=n)
        for node_id, n in counts.items()
    ]
