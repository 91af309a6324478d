"""Linking chunks to the names they mention at ingest."""

from __future__ import annotations

from llama_index.core import Document

from llama_kb import KBConfig, KnowledgeBase


def test_a_page_qualified_by_its_state_is_reached_from_a_mention_of_its_head(
    tmp_path, embedding
) -> None:
    with KnowledgeBase.open(
        tmp_path / "kb", embedding=embedding, config=KBConfig(cache_size=0)
    ) as kb:
        kb.add_documents(
            [
                Document(
                    text="Harold Pell is a graduate of West Chicago High School.",
                    metadata={"title": "Harold Pell"},
                ),
                Document(
                    text="West Chicago is a city in DuPage County, Illinois.",
                    metadata={"title": "West Chicago, Illinois"},
                ),
            ]
        )
        index = kb.engine.search_index
        pell = next(c for c, _ in index.lexical(["pell"], 5, None))
        linked = {name for name, _ in index.chunk_links([pell])[pell]}
        assert any(index.display_names([n]).get(n) == "West Chicago, Illinois" for n in linked)
