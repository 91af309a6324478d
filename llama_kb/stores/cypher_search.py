"""The :class:`~llama_kb.stores.search.SearchIndex` of the Cypher graph stores (FalkorDB, Neo4j).

Every lookup is a bounded, parameterised query inside the server, over indexes the writes keep
current (:mod:`._cypher_search_props`, :mod:`._cypher_search_stats`): the server's full-text
index over pre-tokenised chunk words (lexical candidates, phrases) and name trigrams (fuzzy
names), indexed name and fact keys, relation reads with ``LIMIT`` per name (its own chunks
first), and stored counts per access key. Lexical scores are FTS5's BM25, computed from the
postings of the query's words only, so the same knowledge base scores the same on SQLite and
on a server for the words both keep (a server keeps fewer common ones: ``postings_budget``).
A restricted view (:meth:`CypherSearchIndex.scoped`) passes its access keys as a
query parameter and counts over them only.
"""

from __future__ import annotations

from collections.abc import Sequence
from functools import partial
from itertools import zip_longest
from typing import Any

from llama_kb.stores import _sqlite_bm25 as bm25
from llama_kb.stores._cypher_base import kb_label
from llama_kb.stores._cypher_per_value import rows_per_value, unions
from llama_kb.stores._cypher_search_base import BATCH, CypherSearchBase
from llama_kb.stores._cypher_search_props import (
    gram_tokens,
    lexical_words,
    name_forms,
    or_query,
    phrase_query,
    word_token,
)
from llama_kb.stores._cypher_search_rows import (
    LINKS,
    add_facts,
    chunk_metadata,
    contenders_query,
    fact_query,
    filter_cypher,
    hub_branch,
    links_with_counts,
    name_counts_query,
    name_links_query,
    scored_postings_branch,
    summed,
)
from llama_kb.stores.query_scope import once
from llama_kb.stores.search import (
    Filters,
    NameForm,
    NameStats,
    cached_reads,
    ranked_by_shared,
)


class CypherSearchIndex(CypherSearchBase):
    """Bounded query-time lookups over one Cypher graph store (arguments:
    :class:`~._cypher_search_base.CypherSearchBase`)."""

    postings_budget = 2_000
    """Half of SQLite's, chosen (stop 34) when each posting was a row sent to Python; since
    stop 38 the server scores postings itself, and the budget bounds that work. At 30k
    passages on FalkorDB, recall@5 66.4 against 65.9 with SQLite's; both shared sets the same
    or higher (measured on SQLite, whose scores this index reproduces; README, Scale)."""

    def scoped(self, visible: frozenset[str] | None) -> CypherSearchIndex:
        """This index restricted to records with access keys in ``visible``."""
        return CypherSearchIndex(self._store, visible, self._shared)

    def lexical(
        self, terms: Sequence[str], k: int, filters: Filters | None = None
    ) -> list[tuple[str, float]]:
        """BM25 top ``k`` chunks for ``terms`` (FTS5's formula over the visible chunks).

        Words found in more than ``common_share`` of the chunks are skipped (the rarest
        ``keep_rarest`` are always kept); counting a word stops there, so a common word costs
        at most that many index entries. The server scores each kept word's postings and
        sums them per chunk, and sends back the ``k`` best only. Filters narrow the result,
        not the statistics.
        """
        words = list(dict.fromkeys(w for t in terms for w in lexical_words(t)))
        if not words or k <= 0:
            return []
        rows = self._access_rows()
        chunks, tokens = sum(int(r[1]) for r in rows), sum(int(r[2]) for r in rows)
        if not chunks:
            return []
        kept, df = self._kept(words, chunks)
        passes, params = filter_cypher(filters)
        branch = scored_postings_branch(
            self._search.chunk_text, self._only("n"), passes if filters else None
        )
        idf = {word_token(w): bm25.idf(df[w], chunks) for w in kept}
        derived = {
            "phrase": lambda token: or_query([token], self._search.any_of),
            "spaced": lambda token: " " + token,
            "idf": idf.__getitem__,
        }
        params |= {"k": k, "k1": bm25.K1, "b": bm25.B, "average": tokens / chunks}
        groups = list(unions(branch, list(idf), derived))
        scored: dict[str, float] = {}
        for _, union, own in groups:  # one group unless a query keeps over BRANCHES words
            for chunk, score in self._query(
                summed(union, len(groups) == 1), params | own, "lexical search"
            ):
                scored[str(chunk)] = scored.get(str(chunk), 0.0) + float(score)
        return sorted(scored.items(), key=lambda x: (-x[1], x[0]))[:k]

    def _kept(self, words: list[str], chunks: int) -> tuple[list[str], dict[str, int]]:
        """``words`` without the common ones (see :meth:`lexical`), and the visible chunks
        holding each (exact for the words kept)."""
        if self.common_share >= 1.0:
            return words, self._df(words, None)
        ceiling = self.ceiling(chunks)
        df = self._df(words, int(ceiling) + 1)
        common = [w for w in words if df[w] > ceiling]
        if len(words) - len(common) < self.keep_rarest and common:
            df.update(self._df(common, None))  # the rarest of the common ones: exact counts
        return self.informative(words, df, chunks), df

    def _df(self, words: list[str], cap: int | None) -> dict[str, int]:
        """Visible chunks holding each word, counted up to ``cap``; every word not counted
        before at the store's current revision is counted in one round trip."""
        limit = "" if cap is None else " WITH n LIMIT $cap"
        branch = (
            f"{self._search.chunk_text.replace('$q', '$value')} WITH node AS n "
            f"WHERE true{self._only('n')}{limit} RETURN {{at}} AS kb_at, count(n) AS found"
        )

        def count(missing: list[str]) -> dict[str, int]:
            tokens = {w: word_token(w) for w in missing}
            rows = rows_per_value(
                self._query, branch, list(tokens.values()), "lexical statistics", {"cap": cap}
            )
            # a branch whose count is 0 returns no row (its position is a grouping key)
            return {w: int(rows[t][0][0]) if rows[t] else 0 for w, t in tokens.items()}

        return cached_reads(self._word_counts, (self._revision(), self._view, cap), words, count)

    def phrase_chunks(self, phrases: Sequence[str], batch: int = 200) -> set[str]:
        """Chunks whose text (or title) contains one of ``phrases`` (full-text phrases)."""
        quoted = list(dict.fromkeys(q for p in phrases if (q := phrase_query(p))))
        found: set[str] = set()
        for start in range(0, len(quoted), batch):
            rows = self._query(
                f"{self._search.chunk_text} WITH node AS n WHERE true{self._only('n')} RETURN n.id",
                {"q": self._search.any_of.join(quoted[start : start + batch])},
                "phrase search",
            )
            found.update(str(r[0]) for r in rows)
        return found

    def name_forms(
        self, keys: Sequence[str], labels: Sequence[str] | None = None
    ) -> list[NameForm]:
        """Stored names spelled as one of ``keys`` (of ``labels``, if given)."""
        forms: list[NameForm] = []
        rows = self._each(
            f"UNWIND $ids AS k {self._search.name_key}{self._named('n')} "
            "WITH DISTINCT k, n RETURN k, n.id, n.name, labels(n)",
            keys,
            "look names up",
        )
        for key, node_id, name, graph_labels in rows:
            label = kb_label(graph_labels)
            spellings = name_forms(name) if name else {}
            if (labels is None or label in labels) and key in spellings:
                forms.append(NameForm(key, node_id, spellings[key], label))
        return forms

    def similar_names(self, texts: Sequence[str], k: int) -> dict[str, dict[str, str]]:
        """Names sharing the most character trigrams with each text (the server's full-text
        index over name trigrams), among the names holding its ``rare_grams`` rarest
        trigrams within ``gram_postings_budget``; ranked by
        :func:`~llama_kb.stores.search.ranked_by_shared` among the
        :func:`~llama_kb.stores.search.contenders`, which the server finds and names
        (:func:`~._cypher_search_rows.contenders_query`). All texts share each round trip:
        the counts of trigrams not counted yet, then the contenders. A view counts and lists
        its visible names only (at most ``gram_postings_budget + 1`` per trigram, one
        bounded query each); counts are kept per revision and view."""
        grams = {text: gram_tokens(text) for text in dict.fromkeys(texts)}
        grams = {text: found for text, found in grams.items() if found}
        if not grams or k <= 0:
            return {text: {} for text in texts}
        cap = self.gram_postings_budget + 1

        def count(missing: list[str]) -> dict[str, int]:
            if self.visible is None:  # the server counts every trigram's names in one query
                queries = {or_query([g], self._search.any_of): g for g in missing}
                counted = self._query(
                    f"UNWIND $grams AS g {self._search.name_grams.replace('$q', 'g')} "
                    "RETURN g, count(node)",
                    {"grams": list(queries)},
                    "fuzzy name counts",
                )
                found = {queries[str(q)]: min(int(n), cap) for q, n in counted}
                return {g: found.get(g, 0) for g in missing}
            return self._visible_gram_counts(missing, cap)

        scope = (self._revision(), self._view, cap, "trigrams")
        every = [g for found in grams.values() for g in found]
        df = cached_reads(self._word_counts, scope, every, count)
        kept = [self.kept_grams({g: df[g] for g in found}) for found in grams.values()]
        spans = [[or_query([g], self._search.any_of) for g in found] for found in kept]
        rows = self._query(
            contenders_query(self._search.name_grams.replace("$q", "g"), self._named("n")),
            {"spans": spans, "cap": cap, "most": max(map(len, kept)), "k": k},
            "fuzzy name search",
        )
        looked_up = list(grams)
        shared: dict[str, dict[str, int]] = {text: {} for text in looked_up}
        names: dict[str, str] = {}
        for at, node_id, name, held in rows:
            if name is not None:
                shared[looked_up[int(at)]][str(node_id)] = int(held)
                names[str(node_id)] = str(name)
        return {
            text: ranked_by_shared(shared[text], names, text, k) if text in shared else {}
            for text in texts
        }

    def _visible_gram_counts(self, grams: Sequence[str], cap: int) -> dict[str, int]:
        """Gram -> how many visible names hold it, counted up to ``cap``."""
        branch = (
            f"{self._search.name_grams.replace('$q', '$value')} WITH node AS n{self._named('n')} "
            "WITH DISTINCT n LIMIT $cap RETURN {at} AS kb_at, count(n) AS found"
        )
        queries = {or_query([g], self._search.any_of): g for g in grams}
        rows = rows_per_value(self._query, branch, list(queries), "fuzzy name counts", {"cap": cap})
        return {queries[q]: int(found[0][0]) if found else 0 for q, found in rows.items()}

    def display_names(self, node_ids: Sequence[str]) -> dict[str, str]:
        """Node id -> name for the (visible) named nodes among ``node_ids``."""
        rows = self._each(
            f"UNWIND $ids AS i MATCH {self._entity} WHERE n.name IS NOT NULL"
            f"{self._named('n')} RETURN DISTINCT n.id, n.name",
            node_ids,
            "read names",
        )
        return {str(a): str(b) for a, b in rows}

    def chunk_links(self, chunk_ids: Sequence[str]) -> dict[str, list[tuple[str, bool]]]:
        """Chunk id -> ``(name id, is its document)`` for its ``PART_OF`` / mention edges.

        The same round trip reads the linked names' stored counts for :meth:`name_stats`
        (within one query, :mod:`.query_scope`): a walk asks for them next.
        """
        pattern = f"{self._chunk}-[r:{LINKS}]->(m)"
        query = links_with_counts(pattern, self._only("r"), self._visible_counts())
        rows = self._each(query, chunk_ids, "read links")
        links: dict[str, list[tuple[str, bool]]] = {c: [] for c in chunk_ids}
        known = self._name_counts()
        for chunk_id, name, own, titles, mentions, edges in rows:
            links[str(chunk_id)].append((str(name), bool(own)))
            if str(name) not in known:
                known[str(name)] = NameStats(int(titles), int(mentions)) if edges else None
        return links

    def name_links(self, name_ids: Sequence[str], cap: int) -> dict[str, list[tuple[str, bool]]]:
        """Name id -> up to ``cap`` chunks, its own (``PART_OF``) first, then mentions.

        Names whose stored totals fit in ``cap`` are read whole, each hub stops at ``cap``
        chunks of each kind; both kinds share a round trip. A name read at the store's
        current revision (in this view, with this cap) is not read again: hubs recur across
        queries.
        """
        scope = (self._revision(), self._view, cap)
        read = partial(self._read_name_links, cap=cap)
        return cached_reads(self._shared.names.links, scope, name_ids, read)

    def _read_name_links(self, names: list[str], cap: int) -> dict[str, list[tuple[str, bool]]]:
        stats = self.name_stats(names)
        small = [n for n in names if n in stats and stats[n].titles + stats[n].mentions <= cap]
        fitting = set(small)
        hubs = [n for n in names if n in stats and n not in fitting]
        batches = [small[start : start + BATCH] for start in range(0, len(small), BATCH)]
        groups = unions(hub_branch(self._entity, self._only("r")), hubs)
        links: dict[str, list[tuple[str, bool]]] = {n: [] for n in names}
        for batch, group in zip_longest(batches, groups):
            parts, params = [], {"cap": cap, "ids": batch or []}
            if batch:
                parts.append(name_links_query(self._entity, self._only("r")))
            if group:
                parts.append(group[1])
                params |= group[2]
            for name, chunk_id, own in self._query(" UNION ALL ".join(parts), params, "read links"):
                links[str(name)].append((str(chunk_id), bool(own)))
        for name in small:
            links[name].sort(key=lambda link: (not link[1], link[0]))
        for hub in hubs:  # own first (in the server's order), then mentions
            links[hub] = sorted(links[hub], key=lambda link: not link[1])[:cap]
        return links

    def name_stats(self, name_ids: Sequence[str]) -> dict[str, NameStats]:
        """Name id -> chunks that belong to / mention it (stored counts, per access key;
        within one query each name is read once, :mod:`.query_scope`, and across queries
        once per store revision and view)."""
        known = self._name_counts()
        missing = [n for n in dict.fromkeys(name_ids) if n not in known]
        if missing:
            scope = (self._revision(), self._view)
            read = cached_reads(self._shared.names.counts, scope, missing, self._read_name_stats)
            known.update((n, found[0]) for n, found in read.items())
        return {n: stats for n in dict.fromkeys(name_ids) if (stats := known[n]) is not None}

    def _read_name_stats(self, names: list[str]) -> dict[str, tuple[NameStats | None]]:
        rows = self._each(name_counts_query(self._visible_counts()), names, "read name counts")
        found = {str(i): NameStats(int(t), int(m)) for i, t, m in rows}
        return {n: (found.get(n),) for n in names}

    def _visible_counts(self) -> str:
        """`` WHERE`` condition keeping the stored name counts (alias ``s``) of visible keys."""
        return "" if self.visible is None else " WHERE s.access IN $visible"

    def _name_counts(self) -> dict[str, NameStats | None]:
        """Name id -> stored counts (``None``: no visible relation) read so far in this
        query."""
        return once((id(self._store), "name counts", self._view), dict)

    def chunk_records(self, chunk_ids: Sequence[str]) -> dict[str, tuple[str, dict[str, Any]]]:
        """Chunk id -> ``(text, metadata)``."""
        rows = self._each(
            f"UNWIND $ids AS i MATCH {self._chunk} WHERE true{self._only('n')} "
            "RETURN n.id, n.text, n{.*, kb_lex: null, kb_repeats: null, embedding: null}",
            chunk_ids,
            "read chunks",
        )
        return {str(c): (text or "", chunk_metadata(props or {})) for c, text, props in rows}

    def facts(
        self,
        keys: Sequence[str],
        doc_ids: Sequence[str],
        chunk_ids: Sequence[str],
        limit: int,
        per_key: int = 200,
    ) -> list[dict[str, Any]]:
        """Typed fact nodes about ``keys`` (at most ``per_key`` each) or read from ``doc_ids``
        / ``chunk_ids``; at most ``limit`` per lookup, all in one round trip. Each carries
        ``subject_key`` / ``object_key`` (their name keys) too."""
        by_key = self._search.fact_key.format(fact=self._fact)
        rows = self._query(
            fact_query(by_key, self._fact, self._only("n")),
            {
                "keys": list(dict.fromkeys(keys)),
                "docs": list(dict.fromkeys(doc_ids)),
                "chunks": list(dict.fromkeys(chunk_ids)),
                "per": per_key,
                "limit": limit,
            },
            "read facts",
        )
        found: dict[str, dict[str, Any]] = {}
        add_facts(found, rows)
        return list(found.values())
