"""Framework documents in and out: LlamaIndex Document/TextNode, LangChain Document, str."""

from __future__ import annotations

import pytest
from langchain_core.documents import Document as LCDocument
from llama_index.core.schema import Document, NodeRelationship, RelatedNodeInfo, TextNode

from langchain_kb import UnifiedKBRetriever
from llama_kb import KnowledgeBase

GRAPH_UPDATER = (
    "The Graph Updater writes relations into the property graph. "
    "It depends on the Document Interpreter for parsed input."
)


def _doc_ids(kb: KnowledgeBase) -> set[str]:
    return {d.doc_id for d in kb.documents()}


def test_llamaindex_document_round_trip(kb: KnowledgeBase) -> None:
    doc = Document(text=GRAPH_UPDATER, id_="li-1", metadata={"title": "Graph Updater"})
    report = kb.add_documents([doc])
    assert report.added == ["li-1"]
    (stored,) = kb.documents()
    assert (stored.doc_id, stored.source, stored.title) == ("li-1", "inline:li-1", "Graph Updater")
    hit = kb.search("What writes relations into the graph?", top_k=1)[0]
    assert hit.doc_id == "li-1"
    assert kb.add_documents([doc]).unchanged == ["li-1"]  # same content: not embedded again
    changed = Document(text=GRAPH_UPDATER + " It runs nightly.", id_="li-1")
    assert kb.add_documents([changed]).updated == ["li-1"]
    assert kb.delete(["li-1"]) == ["li-1"]
    assert kb.documents() == [] and kb.vectors.count() == 0


def test_textnodes_grouped_by_ref_doc_id(kb: KnowledgeBase) -> None:
    parent = RelatedNodeInfo(node_id="manual")
    nodes = [
        TextNode(id_=f"n{i}", text=text, relationships={NodeRelationship.SOURCE: parent})
        for i, text in enumerate([GRAPH_UPDATER, "The Vector Indexer embeds chunks."])
    ]
    kb.add_documents(nodes)
    assert _doc_ids(kb) == {"n0", "n1"}
    assert {d.source for d in kb.documents()} == {"inline:manual"}
    assert sorted(kb.delete(["manual"])) == ["n0", "n1"]  # delete_ref_doc convention
    assert kb.documents() == []


def test_langchain_document_ids_and_metadata(kb: KnowledgeBase) -> None:
    with_id = LCDocument(page_content=GRAPH_UPDATER, id="lc-1", metadata={"access": "public"})
    without_id = LCDocument(page_content="The Vector Indexer embeds chunks.")
    report = kb.add_documents([with_id, without_id])
    assert report.ok and len(report.added) == 2
    by_id = {d.doc_id: d for d in kb.documents()}
    assert by_id["lc-1"].access == "public"
    (generated,) = set(by_id) - {"lc-1"}
    again = kb.add_documents([LCDocument(page_content="The Vector Indexer embeds chunks.")])
    assert again.unchanged == [generated]  # a stable id: the same document is stored once
    assert kb.add_documents(["plain text document"], ids=["s-1"]).added == ["s-1"]


def test_graph_facts_pruned_on_delete(kb: KnowledgeBase) -> None:
    kb.add_documents(
        [
            Document(text=GRAPH_UPDATER, id_="updater", metadata={"title": "Graph Updater"}),
            Document(
                text="The Document Interpreter parses files for the Graph Updater.",
                id_="interpreter",
                metadata={"title": "Document Interpreter"},
            ),
        ]
    )
    mentions = {(s, t) for s, t, _, _ in kb.graph.iter_relations(["MENTIONS"])}
    assert any(t == "doc:interpreter" for _, t in mentions)
    kb.delete(["interpreter"])
    remaining = {(s, t) for s, t, _, _ in kb.graph.iter_relations()}
    assert not any("interpreter" in s for s, _ in remaining)


def test_langchain_face_add_documents_and_delete(kb: KnowledgeBase) -> None:
    retriever = UnifiedKBRetriever(kb=kb, k=2)
    ids = retriever.add_documents(
        [LCDocument(page_content=GRAPH_UPDATER, metadata={"title": "Graph Updater"})],
        ids=["lc-face"],
    )
    assert ids == ["lc-face"]
    docs = retriever.invoke("What writes relations into the property graph?")
    assert docs[0].metadata["doc_id"] == "lc-face"
    assert retriever.delete(["lc-face"]) is True
    assert retriever.delete(["lc-face"]) is False
    assert kb.vectors.count() == 0


def test_llamaindex_face_insert_and_delete_ref_doc(kb: KnowledgeBase) -> None:
    retriever = kb.as_retriever(top_k=2)
    retriever.insert(Document(text=GRAPH_UPDATER, id_="li-face"))
    nodes = retriever.retrieve("What writes relations into the property graph?")
    assert nodes[0].node.metadata["doc_id"] == "li-face"
    retriever.delete_ref_doc("li-face")
    assert kb.documents() == []


async def test_langchain_face_async_add_and_delete(kb: KnowledgeBase) -> None:
    retriever = UnifiedKBRetriever(kb=kb, k=2)
    ids = await retriever.aadd_documents([LCDocument(page_content=GRAPH_UPDATER)], ids=["lc-a"])
    assert ids == ["lc-a"]
    docs = await retriever.ainvoke("What writes relations into the property graph?")
    assert docs[0].metadata["doc_id"] == "lc-a"
    assert await retriever.adelete(["lc-a"]) is True
    assert kb.documents() == []


async def test_llamaindex_face_async_insert_and_delete(kb: KnowledgeBase) -> None:
    retriever = kb.as_retriever(top_k=2)
    await retriever.ainsert(Document(text=GRAPH_UPDATER, id_="li-a"))
    await retriever.ainsert_nodes([TextNode(text="The Vector Indexer embeds chunks.", id_="n-a")])
    assert _doc_ids(kb) == {"li-a", "n-a"}
    nodes = await retriever.aretrieve("What writes relations into the property graph?")
    assert nodes[0].node.metadata["doc_id"] == "li-a"
    await retriever.adelete_ref_doc("li-a")
    assert _doc_ids(kb) == {"n-a"}


def test_unsupported_and_empty_documents_are_refused(kb: KnowledgeBase) -> None:
    from llama_kb.errors import DocumentError

    with pytest.raises(DocumentError, match="unsupported document type"):
        kb.add_documents([42])
    with pytest.raises(DocumentError, match="empty text"):
        kb.add_documents([Document(text="   ", id_="blank")])
