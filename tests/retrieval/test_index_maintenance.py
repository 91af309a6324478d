"""The store-side indexes follow every write: add, change and remove keep lexical search,
name linking, graph links and dense search consistent, with no rebuild step."""

from __future__ import annotations

from pathlib import Path

from llama_kb import KnowledgeBase
from llama_kb import graph_model as gm


def write(folder: Path, name: str, text: str) -> Path:
    path = folder / name
    path.write_text(text, encoding="utf-8")
    return path


def lexical_docs(kb: KnowledgeBase, *words: str) -> set[str]:
    index = kb.engine.search_index
    hits = [c for c, _ in index.lexical(list(words), 20, None)]
    return {meta["doc_id"] for _, meta in index.chunk_records(hits).values()}


def dense_docs(kb: KnowledgeBase, query: str) -> set[str]:
    return {h.doc_id for h in kb.search(query, top_k=20)}


def test_add_change_remove_keep_every_index_consistent(kb: KnowledgeBase, tmp_path: Path) -> None:
    folder = tmp_path / "src"
    folder.mkdir()
    write(folder, "zorblat.md", "# Zorblat Engine\n\nThe Zorblat Engine turns quinoa into power.\n")
    write(folder, "other.md", "# Harbour\n\nBoats rest in the harbour at night.\n")
    kb.ingest(folder, root=folder)
    (zorblat,) = [d.doc_id for d in kb.documents() if d.source.endswith("zorblat.md")]
    assert lexical_docs(kb, "quinoa") == {zorblat}
    assert zorblat in dense_docs(kb, "quinoa power")
    first = kb.retrieve("What does the Zorblat Engine do?")
    assert first.trace["linked_entities"][0]["id"] == gm.doc_node_id(zorblat)
    assert first.unstructured[0].doc_id == zorblat

    # a new document mentioning the title is linked to it, and old chunks to new titles
    write(folder, "plant.md", "# Quinoa Plant\n\nThe plant feeds the Zorblat Engine.\n")
    kb.ingest(folder, root=folder)
    (plant,) = [d.doc_id for d in kb.documents() if d.source.endswith("plant.md")]
    mentions = {(s, t) for s, t, rel, _ in kb.graph.iter_relations([gm.MENTIONS])}
    plant_chunks = {
        c for c, t, rel, _ in kb.graph.iter_relations([gm.PART_OF]) if t == gm.doc_node_id(plant)
    }
    zorblat_chunks = {
        c for c, t, rel, _ in kb.graph.iter_relations([gm.PART_OF]) if t == gm.doc_node_id(zorblat)
    }
    assert {(c, gm.doc_node_id(zorblat)) for c in plant_chunks} <= mentions
    assert not any(t == gm.doc_node_id(plant) for s, t in mentions if s in zorblat_chunks)
    assert lexical_docs(kb, "quinoa") == {zorblat, plant}

    # change: the old words leave every index, the new ones arrive
    write(
        folder,
        "zorblat.md",
        "# Zorblat Engine\n\nThe Zorblat Engine now burns millet and the Quinoa Plant.\n",
    )
    kb.ingest(folder, root=folder)
    assert lexical_docs(kb, "millet") == {zorblat}
    assert lexical_docs(kb, "power") == set()
    mentions = {(s, t) for s, t, rel, _ in kb.graph.iter_relations([gm.MENTIONS])}
    new_chunks = {
        c for c, t, rel, _ in kb.graph.iter_relations([gm.PART_OF]) if t == gm.doc_node_id(zorblat)
    }
    assert {(c, gm.doc_node_id(plant)) for c in new_chunks} <= mentions

    # remove: the document is gone from lexical, names, dense search and retrieval
    (folder / "zorblat.md").unlink()
    kb.ingest(folder, root=folder, prune=True)
    assert lexical_docs(kb, "millet") == set()
    assert zorblat not in dense_docs(kb, "millet Zorblat Engine")
    assert kb.engine.search_index.name_forms(["zorblat-engine"]) == []
    after = kb.retrieve("What does the Zorblat Engine do?")
    assert zorblat not in {h.doc_id for h in after.unstructured}
    assert all(e["id"] != gm.doc_node_id(zorblat) for e in after.trace["linked_entities"])


def test_a_write_invalidates_the_query_cache(kb: KnowledgeBase, tmp_path: Path) -> None:
    folder = tmp_path / "src"
    folder.mkdir()
    write(folder, "a.md", "# Alpha\n\nAlpha talks about glaciers.\n")
    kb.ingest(folder)
    first = kb.retrieve("glaciers")
    again = kb.retrieve("glaciers")
    assert (first.trace["cache"], again.trace["cache"]) == ("miss", "hit")
    assert [h.chunk_id for h in again.unstructured] == [h.chunk_id for h in first.unstructured]
    again.unstructured.clear()  # a caller's changes never reach the cache
    assert kb.retrieve("glaciers").unstructured
    write(folder, "b.md", "# Beta\n\nBeta also covers glaciers and ice.\n")
    kb.ingest(folder)
    fresh = kb.retrieve("glaciers")
    assert fresh.trace["cache"] == "miss"
    assert len({h.doc_id for h in fresh.unstructured}) == 2


def test_retrieve_many_matches_retrieve(example_kb: KnowledgeBase) -> None:
    questions = ["What does the Graph Updater do?", "How is the Vector Indexer related to Chroma?"]
    batch = example_kb.retrieve_many(questions, top_k=3)
    example_kb.engine.cache.clear()
    single = [example_kb.retrieve(q, top_k=3) for q in questions]
    assert [[h.chunk_id for h in c.unstructured] for c in batch] == [
        [h.chunk_id for h in c.unstructured] for c in single
    ]
