"""What query-time retrieval reads from the stores: bounded lookups, never the whole corpus.

A :class:`SearchIndex` answers the questions one query asks: which chunks match these words
(a full-text index), which graph names are spelled like these words (an indexed name table),
which names a chunk belongs to or mentions, which chunks a name leads to (capped, title chunks
first), the typed facts about some names, documents or chunks, and the text of a few chunks.
Every answer costs what the query touches, not what the corpus holds, and the indexes behind
it are updated by the writes themselves, so nothing is rebuilt after a write.

The embedded SQLite store answers through :class:`~llama_kb.stores.sqlite_search.SQLiteSearchIndex`
(FTS5 and indexed tables in the graph file), the FalkorDB and Neo4j stores through
:class:`~llama_kb.stores.cypher_search.CypherSearchIndex` (the server's full-text and property
indexes, counts kept by the writes). A user's own LlamaIndex ``PropertyGraphStore``, whose
indexes cannot answer these questions, gets
:class:`~llama_kb.retrieval.memory_index.MemorySearchIndex`, an in-memory index rebuilt when
the store's revision moves.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Collection, Hashable, Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any, Protocol, TypeVar, runtime_checkable

from llama_kb.lru import LRU

H = TypeVar("H", bound=Hashable)
V = TypeVar("V")

Filters = Mapping[str, Any]
"""``{"field": value}`` (equality) or ``{"field": [a, b]}`` (any of) on chunk metadata."""

LINK_RELATIONS = ("PART_OF", "MENTIONS", "LINKS_TO")
"""Relations between a chunk and a name: its document (``PART_OF``) or a mention."""


@dataclass(frozen=True)
class NameStats:
    """How many chunks belong to (``titles``) and mention (``mentions``) a name."""

    titles: int = 0
    mentions: int = 0


@dataclass(frozen=True)
class NameForm:
    """A stored spelling of a graph name: ``key`` is its :func:`~llama_kb.names.name_key`;
    ``exact`` is set for one-word names, which only match with their exact case."""

    key: str
    node_id: str
    exact: str | None
    label: str = ""


@runtime_checkable
class SearchIndex(Protocol):
    """Bounded query-time lookups over the chunks and names of one knowledge base."""

    visible: frozenset[str] | None
    """The access keys this view reads (:mod:`llama_kb.access`); ``None``: every record."""

    @property
    def revision(self) -> int:
        """Grows with every write; caches key on it."""
        ...

    def access_keys(self) -> frozenset[str]:
        """The access keys stored records carry."""
        ...

    def scoped(self, visible: frozenset[str] | None) -> SearchIndex:
        """A view of this index that answers from records with access keys in ``visible``
        only (and from names and facts reached through them): what it returns, counts and
        scores is what an index holding only those records would return."""
        ...

    def chunk_count(self) -> int:
        """Number of stored chunks."""
        ...

    def metadata_fields(self) -> frozenset[str]:
        """Metadata fields chunks have (for validating filters)."""
        ...

    def lexical(
        self, terms: Sequence[str], k: int, filters: Filters | None
    ) -> list[tuple[str, float]]:
        """The ``k`` best chunks for ``terms`` by BM25, best first, as ``(chunk_id, score)``."""
        ...

    def name_forms(
        self, keys: Sequence[str], labels: Sequence[str] | None = None
    ) -> list[NameForm]:
        """Stored names whose folded spelling is one of ``keys`` (of ``labels``, if given)."""
        ...

    def phrase_chunks(self, phrases: Sequence[str]) -> set[str]:
        """Chunks whose text contains one of ``phrases`` (case- and accent-insensitive)."""
        ...

    def similar_names(self, texts: Sequence[str], k: int) -> dict[str, dict[str, str]]:
        """Each text -> up to ``k`` names spelled most like it (shared character trigrams),
        as node id -> display name, best first; all texts are looked up together."""
        ...

    def display_names(self, node_ids: Sequence[str]) -> dict[str, str]:
        """Node id -> display name, for the ids that exist and have a name."""
        ...

    def chunk_links(self, chunk_ids: Sequence[str]) -> dict[str, list[tuple[str, bool]]]:
        """Chunk id -> its names as ``(name id, is its document)``."""
        ...

    def name_links(self, name_ids: Sequence[str], cap: int) -> dict[str, list[tuple[str, bool]]]:
        """Name id -> at most ``cap`` chunks ``(chunk id, belongs to it)``, its own first."""
        ...

    def name_stats(self, name_ids: Sequence[str]) -> dict[str, NameStats]:
        """Name id -> how many chunks belong to and mention it."""
        ...

    def chunk_records(self, chunk_ids: Sequence[str]) -> dict[str, tuple[str, dict[str, Any]]]:
        """Chunk id -> ``(text, metadata)`` for the ids that exist."""
        ...

    def has_relations_besides(self, types: Collection[str]) -> bool:
        """Whether some stored relation has a type outside ``types`` (``True`` when unsure);
        the whole store's answer, whatever the view, so it reveals no more than timing."""
        ...

    def facts(
        self,
        keys: Sequence[str],
        doc_ids: Sequence[str],
        chunk_ids: Sequence[str],
        limit: int,
    ) -> list[dict[str, Any]]:
        """Properties of typed ``fact`` nodes with an end named by one of ``keys`` (name keys),
        or read from one of ``doc_ids`` or ``chunk_ids``; at most ``limit``."""
        ...


class LexicalPruning:
    """Which query words a lexical search scores: a word found in more than ``common_share``
    of the chunks weighs little in BM25 and its posting list costs the most, so it is
    skipped; the ``keep_rarest`` rarest words are always kept (1.0: every word is kept).
    Then, rarest first, words are kept while their chunk counts sum to at most
    ``postings_budget``: the cost of a query stays bounded as the corpus grows, and only the
    commonest (lowest-weighted) of its words are left out. Fuzzy name lookup prunes the
    character trigrams of a name the same way (``rare_grams``, ``gram_postings_budget``)."""

    common_share = 0.1
    keep_rarest = 2
    postings_budget = 4_000
    rare_grams = 6
    """Trigrams of a span that fuzzy name lookup matches on (the rarest ones)."""
    gram_postings_budget = 2_000
    """Most names those trigrams may hold in all (the rarest one is always kept): a lookup's
    cost follows the names it matches, which grow with the corpus."""

    def ceiling(self, chunks: int) -> float:
        """The most chunks a word may be found in and still be scored."""
        return max(self.common_share * chunks, 1.0)

    def kept_grams(self, df: Mapping[str, int]) -> list[str]:
        """The trigrams a fuzzy name lookup matches on: the ``rare_grams`` rarest some name
        holds, within ``gram_postings_budget`` (``df``: the names holding each, counted up to
        ``gram_postings_budget + 1``)."""
        held = [gram for gram, names in df.items() if names]
        return rarest_within(held, df, self.gram_postings_budget, most=self.rare_grams)

    def informative(self, words: Sequence[str], df: Mapping[str, int], chunks: int) -> list[str]:
        """``words`` (in order) without the common ones, ``df`` being each word's chunk count
        (exact up to :meth:`ceiling`)."""
        if self.common_share >= 1.0:
            return list(words)
        ceiling = self.ceiling(chunks)
        kept = set(rarest_within(words, df, self.postings_budget, self.keep_rarest, ceiling))
        return [w for w in words if w in kept]


def rarest_within(
    terms: Sequence[str],
    df: Mapping[str, int],
    budget: int,
    always: int = 1,
    ceiling: float = math.inf,
    most: int | None = None,
) -> list[str]:
    """At most ``most`` of ``terms``, rarest first by their counts ``df``: the ``always``
    rarest, then the next ones while each is counted at most ``ceiling`` times and the counts
    kept sum to at most ``budget`` (a query's postings: its cost)."""
    by_rarity = sorted(terms, key=lambda t: (df[t], t))[:most]
    kept = by_rarity[:always]
    postings = sum(df[t] for t in kept)
    for term in by_rarity[always:]:
        postings += df[term]
        if df[term] > ceiling or postings > budget:
            break
        kept.append(term)
    return kept


NAME_LINKS = 4_096
"""Names whose chunk lists (at most a walk's cap each) a store keeps, per revision and view:
hubs recur across queries (at 30k passages on FalkorDB, 58 % of the rows 200 questions' walks
read were of names an earlier question had read)."""
NAME_COUNTS = 50_000
"""Names whose stored counts a store keeps, per revision and view."""


@dataclass
class NameReads:
    """Names' chunk lists and stored counts one store's search indexes (every view) keep
    across queries, each under the store revision it was read at: a write moves the
    revision, so nothing stale is served.

    Attributes:
        links: ``(revision, view, cap), name`` -> the name's chunks (``name_links``).
        counts: ``(revision, view), name`` -> ``(NameStats or None,)`` (``name_stats``).
    """

    links: LRU[list[tuple[str, bool]]] = field(default_factory=lambda: LRU(NAME_LINKS))
    counts: LRU[tuple[NameStats | None]] = field(default_factory=lambda: LRU(NAME_COUNTS))


def cached_reads(
    cache: LRU[V],
    scope: Hashable | None,
    keys: Iterable[str],
    read: Callable[[list[str]], Mapping[str, V]],
) -> dict[str, V]:
    """The values of ``keys``, kept in ``cache`` under ``(scope, key)``: ``scope`` names what
    the values hold for (the store's revision, the view, a cap), so a key read before under
    the same scope is not read again; ``read`` reads the others, all at once. A ``None``
    scope (values that must not be kept) reads every key and keeps nothing."""
    unique = list(dict.fromkeys(keys))
    if scope is None:
        got = read(unique)
        return {key: got[key] for key in unique}
    found: dict[str, V] = {}
    missing: list[str] = []
    for key in unique:
        value = cache.get((scope, key))
        if value is None:
            missing.append(key)
        else:
            found[key] = value
    if missing:
        got = read(missing)
        for key in missing:
            found[key] = got[key]
            cache.put((scope, key), got[key])
    return {key: found[key] for key in unique}  # in the order asked, however many were kept


def shared_grams(holders: Mapping[str, Iterable[H]]) -> dict[H, int]:
    """How many of the trigrams in ``holders`` (trigram -> who holds it) each holder holds."""
    shared: dict[H, int] = {}
    for found in holders.values():
        for holder in dict.fromkeys(found):
            shared[holder] = shared.get(holder, 0) + 1
    return shared


def contenders(shared: Mapping[H, int], k: int) -> list[H]:
    """The holders :func:`ranked_by_shared` may put among its first ``k``: those holding at
    least as many trigrams as the ``k``-th most (only their names need reading)."""
    if k <= 0 or not shared:
        return []
    floor = sorted(shared.values(), reverse=True)[min(k, len(shared)) - 1]
    return [holder for holder, count in shared.items() if count >= floor]


def ranked_by_shared(
    shared: Mapping[str, int], names: Mapping[str, str], text: str, k: int
) -> dict[str, str]:
    """The ``k`` named ids holding the most trigrams (``shared``), then those whose names are
    closest in length to ``text``, then by id, as id -> name. The order depends on the listed
    names alone: a restricted view that lists its visible names gets an order no hidden name
    moves (a full-text score would weigh the trigrams by counts over every name)."""
    named = [n for n in shared if n in names]
    gap = {n: abs(len(names[n]) - len(text)) for n in named}
    return {n: names[n] for n in sorted(named, key=lambda n: (-shared[n], gap[n], n))[:k]}


def restricted(index: SearchIndex, visible: frozenset[str]) -> SearchIndex:
    """``index`` as a reader of the access keys ``visible`` sees it: itself when every stored
    record is visible, else its :meth:`~SearchIndex.scoped` view."""
    return index if index.access_keys() <= visible else index.scoped(visible)
