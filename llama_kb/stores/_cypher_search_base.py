"""What every lookup of a Cypher search index shares: its store and view, parameterised
queries with the view's access keys, and the whole-store counts kept per store revision."""

from __future__ import annotations

from collections.abc import Callable, Collection, Sequence
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from llama_kb.access import PUBLIC
from llama_kb.lru import LRU
from llama_kb.stores._cypher_base import CHUNK_LABEL, ENTITY_LABEL
from llama_kb.stores._cypher_search_dialect import FALKORDB_SEARCH, NEO4J_SEARCH, SearchDialect
from llama_kb.stores._cypher_search_stats import ACCESS_LABEL, NAME_STAT_LABEL
from llama_kb.stores.query_scope import once
from llama_kb.stores.search import LexicalPruning, NameReads

if TYPE_CHECKING:
    from llama_kb.stores._cypher_reads import CypherReads

_ACCESS = f"coalesce({{row}}.access, '{PUBLIC}')"
BATCH = 500
"""Ids per query of a batched lookup."""
WORD_COUNTS = 50_000
"""Query words (and, for restricted views, name trigrams) whose counts a store keeps, per
revision and view (least recently used first out): a word counted at the current revision is
not asked again."""
STORE_READS = 8
"""Whole-store reads a store keeps (two per revision: the latest revisions' stay)."""


@dataclass
class SharedReads:
    """What one store's search indexes (every view) keep across queries, each entry under the
    store revision it was read at: a write moves the revision, so nothing stale is served.

    Attributes:
        word_counts: Lexical statistics (and, for restricted views, name trigram counts).
        store_reads: Whole-store reads (access counts, relation types).
        names: Names' chunk lists and stored counts.
    """

    word_counts: LRU[int] = field(default_factory=lambda: LRU(WORD_COUNTS))
    store_reads: LRU[list[list[Any]]] = field(default_factory=lambda: LRU(STORE_READS))
    names: NameReads = field(default_factory=NameReads)


class CypherSearchBase(LexicalPruning):
    """A Cypher search index's store, view and shared reads.

    Args:
        store: The graph store (its query runner and dialect).
        visible: Only records with these access keys (and names reached through them);
            ``None``: everything.
        shared: What earlier queries read, shared by the views of one store.
    """

    def __init__(
        self,
        store: CypherReads,
        visible: frozenset[str] | None = None,
        shared: SharedReads | None = None,
    ) -> None:
        self._store = store
        self.visible = visible
        self._shared = shared if shared is not None else SharedReads()
        self._word_counts = self._shared.word_counts
        self._store_reads = self._shared.store_reads
        self._keys = sorted(visible) if visible is not None else []
        self._view = None if visible is None else tuple(self._keys)
        self._search: SearchDialect = (
            NEO4J_SEARCH if store.dialect.name == "neo4j" else FALKORDB_SEARCH
        )
        scope = store.dialect.any_node
        self._chunk = f"(n{scope}:{CHUNK_LABEL} {{id: i}})"
        self._entity = f"(n{scope}:{ENTITY_LABEL} {{id: i}})"
        self._fact = f"(n{scope}:fact)"

    # -- plumbing ---------------------------------------------------------------------

    def _query(self, query: str, params: dict[str, Any], action: str) -> list[list[Any]]:
        return self._store._query(query, {**params, "visible": self._keys}, action=action)

    def _each(
        self, query: str, values: Sequence[str], action: str, **params: Any
    ) -> list[list[Any]]:
        """Rows of ``query`` run over ``values`` (unique, as ``$ids``) in batches."""
        rows: list[list[Any]] = []
        unique = list(dict.fromkeys(values))
        for start in range(0, len(unique), BATCH):
            batch = unique[start : start + BATCH]
            rows.extend(self._query(query, {**params, "ids": batch}, action))
        return rows

    def _only(self, row: str) -> str:
        """`` AND`` condition keeping visible records of alias ``row``."""
        return "" if self.visible is None else f" AND {_ACCESS.format(row=row)} IN $visible"

    def _named(self, row: str) -> str:
        """Clause keeping names (alias ``row``) a visible relation touches."""
        if self.visible is None:
            return ""
        return (
            f" MATCH (s:{NAME_STAT_LABEL} {{node: {row}.id}}) "
            "WHERE s.access IN $visible AND s.edges > 0"
        )

    def _access_rows(self, everything: bool = False) -> list[list[Any]]:
        """``[access, chunks, tokens, relations, fields]`` per access key (read once per
        store revision); only the visible keys unless ``everything``."""
        rows = self._per_revision("search counts", self._read_access_rows)
        if self.visible is None or everything:
            return rows
        return [r for r in rows if r[0] in self.visible]

    def _read_access_rows(self) -> list[list[Any]]:
        return self._query(
            f"MATCH (s:{ACCESS_LABEL}) RETURN s.access, s.chunks, s.tokens, s.relations, s.fields",
            {},
            "read search counts",
        )

    def _per_revision(self, what: str, read: Callable[[], list[list[Any]]]) -> list[list[Any]]:
        """The rows of a whole-store ``read`` (``what``), read once per store revision."""
        key = (self._revision(), what)
        rows = self._store_reads.get(key)
        if rows is None:
            rows = read()
            self._store_reads.put(key, rows)
        return rows

    def _revision(self) -> int:
        return once((id(self._store), "revision"), lambda: self._store.revision)

    # -- SearchIndex: whole-store answers -----------------------------------------

    @property
    def revision(self) -> int:
        """The store's write counter."""
        return self._store.revision

    def access_keys(self) -> frozenset[str]:
        """Access keys of the stored chunks and relations (all of them, in a view too)."""
        rows = self._access_rows(everything=True)
        return frozenset(str(r[0]) for r in rows if r[1] > 0 or r[3] > 0)

    def chunk_count(self) -> int:
        """Number of stored (visible) chunks (a stored count)."""
        return sum(int(r[1]) for r in self._access_rows())

    def has_relations_besides(self, types: Collection[str]) -> bool:
        """Whether a relation type outside ``types`` is in the graph's schema (whatever the
        view; a type whose relations were all deleted may still count: ``True`` is safe)."""
        rows = self._per_revision(
            "relation types",
            lambda: self._query(
                "CALL db.relationshipTypes() YIELD relationshipType RETURN relationshipType",
                {},
                "read relation types",
            ),
        )
        return any(str(r[0]) not in types for r in rows)

    def metadata_fields(self) -> frozenset[str]:
        """Metadata fields (visible) chunks have had."""
        return frozenset(f for r in self._access_rows() for f in (r[4] or ()))
