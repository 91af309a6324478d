"""Stored counts behind the Cypher search index, kept current by the writes.

A principal's lexical scores, chunk count and name neighbourhood sizes must be those of a
store holding only what it may read (see :mod:`llama_kb.stores.search`), so the counts are
kept per access key, in bookkeeping nodes (labelled ``LlamaKBMeta`` too, so node counts and
reads skip them):

* ``(:LlamaKBAccess {access, chunks, tokens, relations, fields})``: per access key, the
  chunks, their ``kb_len`` sum (BM25's average length), the relations, and the metadata
  fields chunks have had;
* ``(:LlamaKBNameStat {node, access, titles, mentions, edges})``: per name and access key,
  the chunks that belong to (``PART_OF``) or mention it, and every relation touching it (a
  name exists for a principal only through a relation it reads).

A write reads the state of the chunks and relations it touches before and after itself
(bounded by what it writes) and applies the difference: nothing is recounted.
"""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field
from typing import Any

from llama_kb.access import PUBLIC
from llama_kb.stores._cypher_base import CHUNK_LABEL, META_LABEL, CypherRunner, _batches
from llama_kb.stores._cypher_search_props import SEARCH_PROPERTIES
from llama_kb.stores.search import LINK_RELATIONS

ACCESS_LABEL = "LlamaKBAccess"
NAME_STAT_LABEL = "LlamaKBNameStat"
NOT_FIELDS = frozenset({"id", "text", "embedding"}) | SEARCH_PROPERTIES
"""Chunk node properties that are not metadata fields."""

RelationKey = tuple[str, str, str]
"""``(source id, type, target id)``: one stored relation."""


@dataclass
class Deltas:
    """Changes to the stored counts, collected from before / after states."""

    access: dict[str, list[int]] = field(default_factory=lambda: defaultdict(lambda: [0, 0, 0]))
    fields: dict[str, set[str]] = field(default_factory=lambda: defaultdict(set))
    names: dict[tuple[str, str], list[int]] = field(
        default_factory=lambda: defaultdict(lambda: [0, 0, 0])
    )

    def chunks(self, rows: Iterable[tuple[str, int, Sequence[str]]], sign: int) -> None:
        """Count (``sign`` 1) or uncount (-1) chunks given as ``(access, length, keys)``."""
        for access, length, keys in rows:
            counts = self.access[access]
            counts[0] += sign
            counts[1] += sign * length
            if sign > 0:
                self.fields[access].update(k for k in keys if k not in NOT_FIELDS)

    def relations(self, rows: Iterable[tuple[str, str, str, str]], sign: int) -> None:
        """Count or uncount relations given as ``(source, target, type, access)``."""
        for source, target, rel_type, access in rows:
            self.access[access][2] += sign
            link = rel_type in LINK_RELATIONS
            target_counts = self.names[(target, access)]
            target_counts[0] += sign * (link and rel_type == "PART_OF")
            target_counts[1] += sign * (link and rel_type != "PART_OF")
            target_counts[2] += sign
            self.names[(source, access)][2] += sign

    def empty(self) -> bool:
        """Whether applying these changes would change nothing."""
        return not any(any(v) for v in self.access.values()) and not any(
            any(v) for v in self.names.values()
        ) and not self.fields  # fmt: skip


class SearchStats:
    """Reads and updates the stored counts of one Cypher store (``runner``)."""

    def __init__(self, runner: CypherRunner) -> None:
        self.runner = runner
        self.scope = runner.dialect.any_node

    def chunk_rows(self, ids: Sequence[str]) -> dict[str, tuple[str, int, list[str]]]:
        """Chunk id -> ``(access, kb_len, property keys)`` of the stored ones among ``ids``."""
        rows: list[list[Any]] = []
        for batch in _batches(ids):
            rows.extend(
                self.runner._query(
                    f"UNWIND $ids AS node_id MATCH (n{self.scope}:{CHUNK_LABEL} {{id: node_id}}) "
                    f"RETURN n.id, coalesce(n.access, '{PUBLIC}'), coalesce(n.kb_len, 0), keys(n)",
                    {"ids": batch},
                    action="read chunk counts",
                )
            )
        return {r[0]: (str(r[1]), int(r[2]), list(r[3])) for r in rows}

    def relation_rows(self, keys: Sequence[RelationKey]) -> dict[RelationKey, str]:
        """``(source, type, target)`` -> access key of the stored ones among ``keys``."""
        found: dict[RelationKey, str] = {}
        data = [{"s": s, "type": t, "t": o} for s, t, o in dict.fromkeys(keys)]
        for start in range(0, len(data), 5000):
            rows = self.runner._per_id_label(
                "UNWIND $rows AS row MATCH (s:{label} {id: row.s})-[r]->(t) "
                "WHERE t.id = row.t AND type(r) = row.type "
                f"RETURN s.id, type(r), t.id, coalesce(r.access, '{PUBLIC}')",
                {"rows": data[start : start + 5000]},
                action="read relation counts",
            )
            found.update({(r[0], r[1], r[2]): str(r[3]) for r in rows})
        return found

    def touching(self, ids: Sequence[str]) -> list[tuple[str, str, str, str]]:
        """``(source, target, type, access)`` of every relation touching a node in ``ids``."""
        rows: list[list[Any]] = []
        for batch in _batches(ids):
            rows.extend(
                self.runner._per_id_label(
                    "UNWIND $ids AS node_id MATCH (n:{label} {id: node_id})-[r]-() "
                    "RETURN DISTINCT startNode(r).id, endNode(r).id, type(r), "
                    f"coalesce(r.access, '{PUBLIC}')",
                    {"ids": batch},
                    action="read relation counts",
                )
            )
        return list(dict.fromkeys((str(a), str(b), str(c), str(d)) for a, b, c, d in rows))

    def apply(self, deltas: Deltas) -> None:
        """Add ``deltas`` to the stored counts (name counts reaching zero are dropped)."""
        if deltas.empty():
            return
        access_rows = [
            {"key": f"access:{a}", "access": a, "chunks": c[0], "tokens": c[1],
             "relations": c[2], "fields": sorted(deltas.fields.get(a, ()))}
            for a, c in deltas.access.items()
        ] + [
            {"key": f"access:{a}", "access": a, "chunks": 0, "tokens": 0, "relations": 0,
             "fields": sorted(f)}
            for a, f in deltas.fields.items() if a not in deltas.access
        ]  # fmt: skip
        self.runner._query(
            f"UNWIND $rows AS row MERGE (s:{META_LABEL}:{ACCESS_LABEL} {{key: row.key}}) "
            "ON CREATE SET s.access = row.access, s.chunks = 0, s.tokens = 0, s.relations = 0, "
            "s.fields = [] SET s.chunks = s.chunks + row.chunks, s.tokens = s.tokens + "
            "row.tokens, s.relations = s.relations + row.relations, s.fields = s.fields + "
            "[f IN row.fields WHERE NOT f IN s.fields]",
            {"rows": access_rows},
            write=True,
            action="update search counts",
        )
        name_rows = [
            {"key": f"name:{a}:{n}", "node": n, "access": a, "titles": c[0], "mentions": c[1],
             "edges": c[2]}
            for (n, a), c in deltas.names.items() if any(c)
        ]  # fmt: skip
        for start in range(0, len(name_rows), 5000):
            self.runner._query(
                f"UNWIND $rows AS row MERGE (s:{META_LABEL}:{NAME_STAT_LABEL} {{key: row.key}}) "
                "ON CREATE SET s.node = row.node, s.access = row.access, s.titles = 0, "
                "s.mentions = 0, s.edges = 0 SET s.titles = s.titles + row.titles, "
                "s.mentions = s.mentions + row.mentions, s.edges = s.edges + row.edges "
                "WITH s WHERE s.edges <= 0 DELETE s",
                {"rows": name_rows[start : start + 5000]},
                write=True,
                action="update search counts",
            )


def chunk_deltas(
    deltas: Deltas,
    before: dict[str, tuple[str, int, list[str]]],
    after: dict[str, tuple[str, int, list[str]]],
) -> None:
    """Add the change from chunk states ``before`` to ``after`` to ``deltas``."""
    deltas.chunks(before.values(), -1)
    deltas.chunks(after.values(), 1)


def relation_deltas(
    deltas: Deltas, before: dict[RelationKey, str], after: dict[RelationKey, str]
) -> None:
    """Add the change from relation states ``before`` to ``after`` to ``deltas``."""
    deltas.relations(((s, o, t, a) for (s, t, o), a in before.items()), -1)
    deltas.relations(((s, o, t, a) for (s, t, o), a in after.items()), 1)
