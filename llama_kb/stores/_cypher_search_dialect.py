"""Where FalkorDB and Neo4j differ for the search index: full-text calls and key lookups.

FalkorDB's full-text indexes (RediSearch) are per label and queried by label; Neo4j's are
named, and use Lucene query syntax. FalkorDB indexes list properties for ``IN``; Neo4j has no
such index, so name and fact keys are looked up in a full-text index of their text form.
Every index splits at whitespace only and stems nothing (see :mod:`._cypher_search_props`).
"""

from __future__ import annotations

from dataclasses import dataclass

from llama_kb.stores._cypher_base import CHUNK_LABEL, ENTITY_LABEL, NODE_LABEL
from llama_kb.stores._cypher_search_stats import ACCESS_LABEL, NAME_STAT_LABEL


@dataclass(frozen=True)
class SearchDialect:
    """Cypher fragments of one server for :class:`~llama_kb.stores.cypher_search.CypherSearchIndex`.

    Attributes:
        chunk_text: Yields ``node, score`` for the chunk full-text query ``$q``.
        name_grams: Yields ``node, score`` for the name-trigram full-text query ``$q``.
        name_key: Matches ``n``, the named nodes with key ``k`` (a variable).
        fact_key: Matches ``n``, the fact nodes with an end key ``k`` (a variable);
            ``{fact}`` is the fact node pattern.
        any_of: Joins full-text alternatives (``|`` or ``OR``).
        setup: Index statements run when a store opens.
    """

    chunk_text: str
    name_grams: str
    name_key: str
    fact_key: str
    any_of: str
    setup: tuple[str, ...]


_NO_STEM = "stopwords: []"

FALKORDB_SEARCH = SearchDialect(
    chunk_text=f"CALL db.idx.fulltext.queryNodes('{CHUNK_LABEL}', $q) YIELD node, score",
    name_grams=f"CALL db.idx.fulltext.queryNodes('{ENTITY_LABEL}', $q) YIELD node, score",
    name_key=f"MATCH (n:{ENTITY_LABEL}) WHERE k IN n.kb_keys",
    fact_key="MATCH {fact} WHERE k IN n.kb_fact_keys",
    any_of="|",
    setup=(
        f"CALL db.idx.fulltext.createNodeIndex({{label: '{CHUNK_LABEL}', {_NO_STEM}}}, "
        "{field: 'kb_lex', nostem: true})",
        f"CALL db.idx.fulltext.createNodeIndex({{label: '{ENTITY_LABEL}', {_NO_STEM}}}, "
        "{field: 'kb_grams', nostem: true})",
        f"CREATE INDEX FOR (n:{ENTITY_LABEL}) ON (n.kb_keys)",
        "CREATE INDEX FOR (n:fact) ON (n.kb_fact_keys)",
        "CREATE INDEX FOR (n:fact) ON (n.doc_id)",
        "CREATE INDEX FOR (n:fact) ON (n.chunk_id)",
        "CREATE INDEX FOR (n:LlamaKBMeta) ON (n.key)",
        f"CREATE INDEX FOR (n:{NAME_STAT_LABEL}) ON (n.node)",
        f"CREATE INDEX FOR (n:{ACCESS_LABEL}) ON (n.access)",
    ),
)

_WHITESPACE = "OPTIONS {indexConfig: {`fulltext.analyzer`: 'whitespace'}}"

NEO4J_SEARCH = SearchDialect(
    chunk_text="CALL db.index.fulltext.queryNodes('llama_kb_chunks', $q) YIELD node, score",
    name_grams="CALL db.index.fulltext.queryNodes('llama_kb_names', $q) YIELD node, score",
    name_key=(
        "CALL db.index.fulltext.queryNodes('llama_kb_keys', 'kb_key_text:\"' + k + '\"') "
        "YIELD node AS n WITH k, n WHERE k IN n.kb_keys"
    ),
    fact_key=(
        "CALL db.index.fulltext.queryNodes('llama_kb_keys', 'kb_fact_key_text:\"' + k + '\"') "
        "YIELD node AS n WITH k, n WHERE k IN n.kb_fact_keys"
    ),
    any_of=" OR ",
    setup=(
        f"CREATE FULLTEXT INDEX llama_kb_chunks IF NOT EXISTS FOR (n:{CHUNK_LABEL}) "
        f"ON EACH [n.kb_lex] {_WHITESPACE}",
        f"CREATE FULLTEXT INDEX llama_kb_names IF NOT EXISTS FOR (n:{ENTITY_LABEL}) "
        f"ON EACH [n.kb_grams] {_WHITESPACE}",
        f"CREATE FULLTEXT INDEX llama_kb_keys IF NOT EXISTS FOR (n:{ENTITY_LABEL}) "
        f"ON EACH [n.kb_key_text, n.kb_fact_key_text] {_WHITESPACE}",
        f"CREATE INDEX llama_kb_chunk_id IF NOT EXISTS FOR (n:{NODE_LABEL}) ON (n.chunk_id)",
        f"CREATE INDEX llama_kb_name_stat IF NOT EXISTS FOR (n:{NAME_STAT_LABEL}) ON (n.node)",
        f"CREATE INDEX llama_kb_access IF NOT EXISTS FOR (n:{ACCESS_LABEL}) ON (n.access)",
    ),
)
