"""One query's candidate chunks as rows, for the array-based ranking and the debug view.

The engine never holds the corpus: a :class:`Candidates` view covers only the chunks a query
touched (dense hits, lexical hits, chunks the graph walk reached). Rows index that view; text
and metadata are read from the store only for the rows that need them (the returned hits,
filtered selection, ``explain``).
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

import numpy as np

from llama_kb import graph_model as gm
from llama_kb.retrieval.walk import LocalGraph
from llama_kb.stores.search import SearchIndex


@dataclass
class Candidates:
    """Rows of the chunks one query ranks; records fetched on demand and cached."""

    index: SearchIndex
    chunk_ids: tuple[str, ...] = ()
    names: dict[str, str] = field(default_factory=dict)
    """Graph node id -> display name, for the names the query touched."""
    records: dict[str, tuple[str, dict[str, Any]]] = field(default_factory=dict)
    walked: LocalGraph | None = None
    """The graph neighbourhoods this query's walks read (:meth:`local_graph`)."""

    def __post_init__(self) -> None:
        self.row_of = {c: i for i, c in enumerate(self.chunk_ids)}

    def set_rows(self, chunk_ids: Sequence[str]) -> None:
        """Make ``chunk_ids`` (deduplicated, in order) the rows."""
        self.chunk_ids = tuple(dict.fromkeys(chunk_ids))
        self.row_of = {c: i for i, c in enumerate(self.chunk_ids)}

    def local_graph(self, title_pull: float, untitled_weight: float = 1.0) -> LocalGraph:
        """The query's graph for a walk: a second walk (the second hop's passage is ranked
        before the query's own ranking) reads only what the first did not."""
        walked = self.walked
        if walked is None or (walked.title_pull, walked.untitled_weight) != (
            title_pull,
            untitled_weight,
        ):
            walked = LocalGraph(self.index, self.index.chunk_count(), title_pull, untitled_weight)
            self.walked = walked
        return walked

    def fetch(self, chunk_ids: Iterable[str]) -> None:
        """Read the text and metadata of ``chunk_ids`` not read yet."""
        missing = [c for c in dict.fromkeys(chunk_ids) if c not in self.records]
        if missing:
            self.records.update(self.index.chunk_records(missing))

    def record(self, chunk_id: str) -> tuple[str, dict[str, Any]]:
        """``(text, metadata)`` of a chunk (empty when the store lost it)."""
        self.fetch([chunk_id])
        return self.records.get(chunk_id, ("", {}))

    @property
    def metadata(self) -> list[dict[str, Any]]:
        """Metadata per row (reads every candidate: for the debug view)."""
        self.fetch(self.chunk_ids)
        return [self.records.get(c, ("", {}))[1] for c in self.chunk_ids]

    def doc_node(self, chunk_id: str) -> str:
        """Graph id of the chunk's document node."""
        return gm.doc_node_id(str(self.record(chunk_id)[1].get("doc_id", "")))

    def name(self, node_id: str) -> str:
        """Display name of a graph node (read once), else its id."""
        if node_id not in self.names:
            self.names.update(self.index.display_names([node_id]))
        return self.names.get(node_id, node_id)

    def matching(self, rows: Sequence[int], filters: dict[str, Any] | None) -> list[int]:
        """``rows`` whose chunk metadata equals (or is in) each filter value, in order."""
        if not filters:
            return list(rows)
        self.fetch(self.chunk_ids[r] for r in rows)
        return [
            r
            for r in rows
            if matches_filters(self.records.get(self.chunk_ids[r], ("", {}))[1], filters)
        ]

    def mask(self, filters: dict[str, Any] | None) -> np.ndarray | None:
        """Boolean mask of rows the filters allow (``None`` without filters)."""
        if not filters:
            return None
        allowed = set(self.matching(range(len(self.chunk_ids)), filters))
        return np.fromiter(
            (r in allowed for r in range(len(self.chunk_ids))), bool, len(self.chunk_ids)
        )


def matches_filters(metadata: dict[str, Any], filters: Mapping[str, Any]) -> bool:
    """Whether ``metadata`` equals (or is in) each filter value."""
    for key, wanted in filters.items():
        allowed = set(wanted) if isinstance(wanted, list | tuple | set) else {wanted}
        if metadata.get(key) not in allowed:
            return False
    return True


def top_rows(scores: np.ndarray, k: int, mask: np.ndarray | None = None) -> Sequence[int]:
    """Indices of the ``k`` highest scores (ties broken by row), restricted to ``mask``."""
    if mask is not None:
        scores = np.where(mask, scores, -np.inf)
    k = min(k, int(np.isfinite(scores).sum()))
    if k <= 0:
        return []
    top = np.argpartition(-scores, k - 1)[:k]
    return list(top[np.lexsort((top, -scores[top]))])
