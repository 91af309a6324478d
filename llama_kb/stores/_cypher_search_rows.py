"""Query text of a Cypher search index's multi-part reads, its rows turned into results, and
metadata filters into conditions."""

from __future__ import annotations

from typing import Any

from llama_kb.names import name_key
from llama_kb.stores._cypher_base import IDENTIFIER
from llama_kb.stores._cypher_search_stats import NAME_STAT_LABEL, NOT_FIELDS
from llama_kb.stores.search import Filters

FACT_KEYS = ("subject", "predicate", "object", "chunk_id", "doc_id", "evidence", "extractor")
FACT_RETURN = "n.id, " + ", ".join(f"n.{k}" for k in FACT_KEYS)
"""What a query returns for a fact node ``n``: its id and :data:`FACT_KEYS`."""


LINKS = "PART_OF|MENTIONS|LINKS_TO"
"""The relation types a walk follows between chunks and names."""

_NAME_SUMS = "sum(s.titles) AS t, sum(s.mentions) AS mn, sum(s.edges) AS e"
"""A name's stored counts (``s``) summed over its access keys."""


def fact_query(by_key: str, fact: str, only: str) -> str:
    """Facts about the keys ``$keys`` (``by_key`` matches ``n`` for key ``k``; at most
    ``$per`` each, by id), then facts read from the documents ``$docs`` and the chunks
    ``$chunks`` (``fact``: the fact node pattern ``n``; ``only``: the visibility condition),
    each part at most ``$limit`` rows. FalkorDB does not reset a ``LIMIT`` inside ``CALL {}``
    per row, so a key's share is cut from its collected facts."""
    parts = [
        f"UNWIND $keys AS k {by_key}{only} WITH k, n ORDER BY n.id "
        "WITH k, collect(n)[..$per] AS found UNWIND found AS n WITH DISTINCT n "
        f"RETURN {FACT_RETURN} LIMIT $limit",
        *(
            f"MATCH {fact} WHERE n.{field} IN ${values}{only} RETURN {FACT_RETURN} LIMIT $limit"
            for field, values in (("doc_id", "docs"), ("chunk_id", "chunks"))
        ),
    ]
    return " UNION ALL ".join(parts)


def name_links_query(entity: str, only: str) -> str:
    """For each name id ``i`` in ``$ids`` (``entity`` matches ``n`` with id ``i``): every
    chunk linked to it (``only``: the visibility condition on ``r``), as ``name, id, own``
    rows (``own``: the chunk belongs to the name)."""
    return (
        f"UNWIND $ids AS i MATCH {entity}<-[r:{LINKS}]-(c) "
        f"WHERE c.id <> i{only} RETURN i AS name, c.id AS id, type(r) = 'PART_OF' AS own"
    )


def hub_branch(entity: str, only: str) -> str:
    """A :func:`~._cypher_per_value.unions` branch reading up to ``$cap`` chunks that
    belong to the name ``entity`` matches (``n`` with id ``i``, the branch's ``$value``) and
    up to ``$cap`` that mention it (``only``: the visibility condition on ``r``), as
    :func:`name_links_query` rows."""
    return " UNION ALL ".join(
        f"WITH $value AS i MATCH {entity}<-[r:{types}]-(c) WHERE c.id <> i{only} "
        f"RETURN {distinct}i AS name, c.id AS id, {own} AS own LIMIT $cap"
        for types, distinct, own in (
            ("PART_OF", "", "true"),
            ("MENTIONS|LINKS_TO", "DISTINCT ", "false"),
        )
    )


def contenders_query(name_grams: str, named: str) -> str:
    """For each text ``at`` in ``$spans`` (its trigrams' full-text queries, run as ``g`` by
    ``name_grams``; ``named``: the visibility clause on ``n``): the names holding its
    trigrams (up to ``$cap`` per trigram) that hold at least as many of them as the ``$k``-th
    most (:func:`~llama_kb.stores.search.contenders`; ``$most``: the most trigrams a text
    has), as ``at, id, name, shared`` rows. Counting inside the server sends a few rows per
    text, not every holder."""
    return (
        f"UNWIND range(0, size($spans) - 1) AS at UNWIND $spans[at] AS g {name_grams} "
        f"WITH at, g, node AS n{named} WITH at, g, collect(DISTINCT n)[..$cap] AS holders "
        "UNWIND holders AS n WITH at, n, count(*) AS shared "
        "WITH at, collect([n, shared]) AS found "
        "WITH at, found, size([c IN range(1, $most) "
        "WHERE size([f IN found WHERE f[1] >= c]) >= $k]) AS floor "
        "UNWIND found AS f WITH at, f WHERE f[1] >= floor "
        "RETURN at, f[0].id, f[0].name, f[1]"
    )


def links_with_counts(pattern: str, only: str, counts: str) -> str:
    """For each ``i`` in ``$ids``: the relations ``r`` that ``pattern`` finds to another node
    ``m`` (``only``: their visibility condition), each with ``m``'s stored counts summed over
    its visible rows (``counts``: their condition on ``s``): ``i, m.id, is PART_OF, titles,
    mentions, edges``."""
    return (
        f"UNWIND $ids AS i MATCH {pattern} WHERE m.id <> i{only} "
        f"OPTIONAL MATCH (s:{NAME_STAT_LABEL} {{node: m.id}}){counts} "
        f"WITH i, m, r, {_NAME_SUMS} RETURN i, m.id, type(r) = 'PART_OF', t, mn, e"
    )


def name_counts_query(counts: str) -> str:
    """For each name id ``i`` in ``$ids`` with visible relations: ``i, titles, mentions``
    (its stored counts summed over its rows that pass ``counts``, a condition on ``s``)."""
    return (
        f"UNWIND $ids AS i MATCH (s:{NAME_STAT_LABEL} {{node: i}}){counts} "
        f"WITH i, {_NAME_SUMS} WHERE e > 0 RETURN i, t, mn"
    )


def scored_postings_branch(chunk_text: str, only: str, passes: str | None) -> str:
    """A :func:`~._cypher_per_value.unions` branch returning ``id, score``: each (visible:
    ``only``; passing a filter: ``passes``) chunk the full-text query ``chunk_text`` (on
    ``$phrase``) finds for the stored word token ``$value``, with the word's BM25 share
    (``$idf``, ``$k1``, ``$b``, ``$average``: FTS5's formula, as :mod:`._sqlite_bm25`).

    A word's count in a chunk the full-text index found for it is one more than its places
    in ``kb_repeats`` (a token ends at its only ``_``; ``$spaced`` is the token after a
    space): splitting that short string per posting costs about half the lexical search's
    server time less than splitting the whole ``kb_lex`` (FalkorDB evaluates every branch
    of a ``CASE``, so there is no cheaper path for the words that occur once). Never a
    string built from a property (``' ' + n.kb_lex``): in FalkorDB 4 that corrupts the
    server's index list.
    """
    condition = f" AND {passes}" if passes else ""
    return (
        f"{chunk_text.replace('$q', '$phrase')} WITH node AS n WHERE true{only}{condition} "
        "WITH n, size(split(n.kb_repeats, $spaced)) AS tf "
        "RETURN n.id AS id, $idf * tf * ($k1 + 1.0) / "
        "(tf + $k1 * (1.0 - $b + $b * coalesce(n.kb_len, 0) / $average)) AS score"
    )


def summed(union: str, limited: bool) -> str:
    """The chunks of ``union`` (rows ``id, score``) with their scores summed, best first
    (ties by id), the ``$k`` best when ``limited``."""
    limit = " LIMIT $k" if limited else ""
    return (
        f"CALL {{ {union} }} WITH id, sum(score) AS score "
        f"RETURN id, score ORDER BY score DESC, id{limit}"
    )


def add_facts(found: dict[str, dict[str, Any]], rows: list[list[Any]]) -> None:
    """Add the rows ``(id, *FACT_KEYS)`` not in ``found``, with their ends' name keys."""
    for row in rows:
        props = dict(zip(FACT_KEYS, row[1:], strict=True))
        for end in ("subject", "object"):
            value = props[end]
            props[f"{end}_key"] = (name_key(value) or None) if isinstance(value, str) else None
        found.setdefault(str(row[0]), props)


def chunk_metadata(props: dict[str, Any]) -> dict[str, Any]:
    """A chunk node's metadata: its properties without the search and storage ones."""
    return {k: v for k, v in props.items() if k not in NOT_FIELDS and v is not None}


def filter_cypher(filters: Filters | None) -> tuple[str, dict[str, Any]]:
    """A boolean expression on ``n`` (the chunk) for ``filters``, values as parameters."""
    if not filters:
        return "true", {}
    conds: list[str] = []
    params: dict[str, Any] = {}
    for i, (key, wanted) in enumerate(filters.items()):
        values = list(wanted) if isinstance(wanted, list | tuple | set) else [wanted]
        if not IDENTIFIER.match(str(key)) or not values:
            return "false", {}
        conds.append(f"n.`{key}` IN $f{i}")
        params[f"f{i}"] = values
    return "(" + " AND ".join(conds) + ")", params
