"""Proper names in facts become names chunks link to: the bridge between two passages that
mention a name no document is about."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
import servers
from llama_index.core import Document
from llama_index.core.base.embeddings.base import BaseEmbedding

from llama_kb import KBConfig, KnowledgeBase
from llama_kb import graph_model as gm
from llama_kb.access import ACCESS_FIELD
from llama_kb.ingest.fact_names import fact_names, is_proper_name
from llama_kb.types import TextChunk

DECADE = "Decade is a compilation album by the Canadian musician Neil Young, released in 1977."
SCOTT = "Scott Young was a Canadian journalist. Scott Young was the father of Neil Young."
TRIBUTE = "The tribute night ended with a few songs. Songs by Neil Young were played."
NEIL = gm.entity_node_id("Neil Young")

chroma_server = servers.chroma_server
falkordb_server = servers.falkordb_server


@pytest.fixture(params=["embedded", pytest.param("servers", marks=pytest.mark.integration)])
def env(request: pytest.FixtureRequest) -> dict[str, str]:
    """Where the knowledge base lives: embedded, or a Chroma server and FalkorDB (started by
    the tests)."""
    if request.param == "embedded":
        return {}
    chroma = request.getfixturevalue("chroma_server")
    return {**chroma.env, **request.getfixturevalue("falkordb_server").env}


def open_kb(
    path: Path, embedding: BaseEmbedding, env: dict[str, str] | None = None
) -> KnowledgeBase:
    config = KBConfig.from_env(path, env=env or {}, cache_size=0)
    return KnowledgeBase.open(config=config, embedding=embedding)


def doc(text: str, title: str, doc_id: str) -> Document:
    return Document(text=text, id_=doc_id, metadata={"title": title})


def chunk_of(kb: KnowledgeBase, word: str) -> str:
    return next(c for c, _ in kb.engine.search_index.lexical([word], 5, None))


def links(kb: KnowledgeBase, chunk_id: str) -> set[str]:
    return {name for name, _ in kb.engine.search_index.chunk_links([chunk_id])[chunk_id]}


def test_proper_names_are_capitalised_phrases_with_connectors_inside() -> None:
    assert is_proper_name("Neil Young") and is_proper_name("University of Göttingen")
    assert not is_proper_name("compilation album") and not is_proper_name("Bank of")
    assert not is_proper_name("1977") and not is_proper_name("A B C D E F G")


def test_fact_ends_that_are_names_become_entities_the_fact_chunk_mentions() -> None:
    chunk = TextChunk("c1", "d1", DECADE, 0, "hash")
    facts = [
        gm.fact_node("Decade", predicate, obj, chunk, DECADE, "pattern")
        for predicate, obj in [("album by", "Neil Young"), ("release in", "1977"), ("is", "album")]
    ]
    nodes, relations = fact_names(facts, title="Decade")  # its own title is not a new name
    assert [n.name for n in nodes] == ["Neil Young"] and nodes[0].id == NEIL
    assert [(r.source_id, r.label, r.target_id) for r in relations] == [("c1", gm.MENTIONS, NEIL)]
    private, _ = fact_names(facts, title="Decade", access="org:acme")
    assert private[0].id == NEIL + "@org:acme"  # a restricted document names its own node


def test_two_passages_that_mention_an_untitled_name_are_linked_through_it(
    tmp_path: Path, embedding: BaseEmbedding, env: dict[str, str]
) -> None:
    with open_kb(tmp_path / "kb", embedding, env) as kb:
        kb.add_documents([doc(DECADE, "Decade (album)", "decade"), doc(SCOTT, "Scott Young", "s")])
        assert NEIL in links(kb, chunk_of(kb, "compilation"))
        assert NEIL in links(kb, chunk_of(kb, "journalist"))
        found = kb.retrieve("Who is the father of the musician of Decade?", top_k=2)
        assert {h.doc_id for h in found.unstructured} == {"decade", "s"}


def test_an_older_chunk_is_linked_to_a_name_a_later_document_makes(
    tmp_path: Path, embedding: BaseEmbedding, env: dict[str, str]
) -> None:
    with open_kb(tmp_path / "kb", embedding, env) as kb:
        kb.add_documents([doc(TRIBUTE, "Tribute night", "tribute")])
        older = chunk_of(kb, "tribute")
        assert NEIL not in links(kb, older)  # nothing has made the name yet
        kb.add_documents([doc(DECADE, "Decade (album)", "decade")])
        assert NEIL in links(kb, older)


@pytest.mark.parametrize("together", [False, True])
def test_a_name_that_is_a_title_is_that_page_not_a_second_name(
    tmp_path: Path, embedding: BaseEmbedding, env: dict[str, str], together: bool
) -> None:
    page = doc("Neil Young is a Canadian musician.", "Neil Young", "neil")
    decade = doc(DECADE, "Decade (album)", "decade")
    with open_kb(tmp_path / "kb", embedding, env) as kb:
        if together:  # the album first: its name is made before the page is stored
            kb.add_documents([decade, page])
        else:
            kb.add_documents([page])
            kb.add_documents([decade])
        linked = links(kb, chunk_of(kb, "compilation"))
        assert "doc:neil" in linked and NEIL not in linked
        assert not kb.graph.named_nodes(ids=[NEIL])


def test_removing_every_chunk_that_names_it_removes_the_name(
    tmp_path: Path, embedding: BaseEmbedding, env: dict[str, str]
) -> None:
    with open_kb(tmp_path / "kb", embedding, env) as kb:
        kb.add_documents([doc(DECADE, "Decade (album)", "decade"), doc(SCOTT, "Scott Young", "s")])
        kb.remove(["decade"])
        assert kb.graph.named_nodes(ids=[NEIL])  # Scott Young's page still names it
        kb.remove(["s"])
        assert not kb.graph.named_nodes(ids=[NEIL])


@pytest.mark.parametrize("access", ["org:acme"])
def test_a_restricted_name_links_older_public_chunks_under_its_key(
    tmp_path: Path, embedding: BaseEmbedding, env: dict[str, str], access: str
) -> None:
    with open_kb(tmp_path / "kb", embedding, env) as kb:
        kb.add_documents([doc(TRIBUTE, "Tribute night", "tribute")])
        kb.add_documents([doc(DECADE, "Decade (album)", "decade")], access=access)
        older = chunk_of(kb, "tribute")
        private = f"{NEIL}@{access}"
        assert private in links(kb, older) and NEIL not in links(kb, older)
        keys = {r.properties[ACCESS_FIELD] for r in kb.graph.relations_among([older, private])}
        assert keys == {access}
        public = json.dumps(kb.retrieve("Neil Young Decade", top_k=5).to_dict())
        assert "@org:acme" not in public and "compilation" not in public
