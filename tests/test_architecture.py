"""The package's layers: data flows one way, and no module sits in an import loop.

Each layer may import only the layers below it (see "Architecture" in the README and each
package's ``__init__`` docstring). Imports under ``TYPE_CHECKING`` do not run and are not
counted; imports inside functions are.
"""

from __future__ import annotations

import grimp
import pytest

LAYERS: list[grimp.Layer] = [
    grimp.Layer("langchain_kb"),
    grimp.Layer("llama_kb.__main__"),
    grimp.Layer("llama_kb.cli"),
    grimp.Layer("llama_kb.knowledge_cli"),
    grimp.Layer("llama_kb.integrations", "llama_kb.doctor", independent=True),
    grimp.Layer("llama_kb.agent_config"),
    grimp.Layer("llama_kb.knowledge_base"),
    grimp.Layer("llama_kb.kb_directory"),
    grimp.Layer("llama_kb.memory"),
    grimp.Layer("llama_kb.knowledge", "llama_kb.agent_graph", independent=True),
    grimp.Layer("llama_kb.retrieval", "llama_kb.ingest", independent=True),
    grimp.Layer("llama_kb.stores"),
    grimp.Layer("llama_kb.embeddings"),
    grimp.Layer("llama_kb.config", "llama_kb.graph_model", independent=True),
    grimp.Layer(
        "llama_kb.types",
        "llama_kb.errors",
        "llama_kb.names",
        "llama_kb.lru",
        "llama_kb.background",
        independent=True,
    ),
]

ALLOWED_UPWARD = {
    # ``kb.as_retriever()`` / ``kb.as_query_engine()`` build the LlamaIndex face on demand, as
    # LlamaIndex's own ``VectorStoreIndex.as_retriever`` does: a deferred import inside the
    # method, so the facade loads and works without the face.
    ("llama_kb.knowledge_base", "llama_kb.integrations.llamaindex"),
}


@pytest.fixture(scope="module")
def graph() -> grimp.ImportGraph:
    return grimp.build_graph("llama_kb", "langchain_kb", exclude_type_checking_imports=True)


def _upward(graph: grimp.ImportGraph) -> list[str]:
    found = []
    for dependency in graph.find_illegal_dependencies_for_layers(layers=LAYERS):
        for route in dependency.routes:
            for head in route.heads:
                for tail in route.tails:
                    if (head, tail) not in ALLOWED_UPWARD or route.middle:
                        found.append(f"{head} -> {' -> '.join(route.middle)} -> {tail}")
    return sorted(found)


def _cycles(graph: grimp.ImportGraph) -> list[str]:
    """Imports ``a -> b`` where ``b`` leads back to ``a``: each is part of a loop."""
    return sorted(
        f"{module} -> {imported} -> ... -> {module}"
        for module in graph.modules
        for imported in graph.find_modules_directly_imported_by(module)
        if graph.chain_exists(importer=imported, imported=module)
    )


def test_no_layer_imports_a_higher_one(graph: grimp.ImportGraph) -> None:
    assert _upward(graph) == []


def test_no_import_cycles(graph: grimp.ImportGraph) -> None:
    assert _cycles(graph) == []


def test_the_check_catches_an_upward_import_and_a_cycle(graph: grimp.ImportGraph) -> None:
    graph.add_import(importer="llama_kb.stores.graph", imported="llama_kb.retrieval.engine")
    try:
        assert any("llama_kb.stores.graph" in line for line in _upward(graph))
        assert any("llama_kb.stores.graph" in group for group in _cycles(graph))
    finally:
        graph.remove_import(importer="llama_kb.stores.graph", imported="llama_kb.retrieval.engine")
