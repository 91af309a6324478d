"""Link the names a query mentions to graph nodes: the engine's first step."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from llama_kb.graph_model import DOCUMENT
from llama_kb.names import candidate_spans, find_titles_first
from llama_kb.retrieval.fuzzy_names import FuzzyNameLinker
from llama_kb.retrieval.index import Candidates


def link_query(
    query: str,
    view: Candidates,
    fuzzy: FuzzyNameLinker,
    degrade: Callable[[str, Exception], None],
    before_fuzzy: Callable[[], None] | None = None,
) -> list[dict[str, Any]]:
    """Graph names in the query: exact/alias matches (an indexed lookup of its word spans,
    titles first: :func:`~llama_kb.names.find_titles_first`),
    else embedding similarity of its capitalised spans to names spelled like them (see
    :mod:`.fuzzy_names`; a failing embedding degrades to the exact matches).
    ``before_fuzzy`` is called when that slower lookup starts."""

    def lookup(keys: list[str]) -> dict[str, dict[str, tuple[bool, str | None]]]:
        found: dict[str, dict[str, tuple[bool, str | None]]] = {}
        for form in view.index.name_forms(keys):
            found.setdefault(form.key, {})[form.node_id] = (form.label == DOCUMENT, form.exact)
        return found

    mentions = find_titles_first([query], lookup)[0]
    view.names.update(view.index.display_names([m.node_id for m in mentions]))
    linked = [
        {"id": m.node_id, "name": view.name(m.node_id), "surface": m.surface, "method": "name"}
        for m in mentions
    ]
    spans = candidate_spans(query) if not linked else []
    if not spans:
        return linked
    if before_fuzzy is not None:
        before_fuzzy()
    try:
        found = fuzzy.link(spans, view.index)
    except Exception as e:
        degrade("embedding", e)
        return linked
    by_id: dict[str, dict[str, Any]] = {}
    for span, node_id, name, similarity in found:
        view.names[node_id] = name
        by_id[node_id] = {
            "id": node_id,
            "name": name,
            "surface": span,
            "method": "embedding",
            "similarity": similarity,
        }
    return list(by_id.values())
