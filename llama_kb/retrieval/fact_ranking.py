"""Typed facts for a query: candidates near the query's entities and hits, ranked by relevance.

Facts read at ingest (``fact`` nodes: sentences, records) are read from the store per query
(indexed by end name, document and chunk) into a :class:`FactTable`. Candidates are the facts
whose subject or object *is* one of the linked entities or a name in the question, the facts
read from those entities' pages, and the facts read from the top passages. Each gets a score
in [0, 1]::

    score = w_proximity * proximity + w_lexical * lexical + w_embedding * embedding

with the weights of :class:`~llama_kb.config.RankingConfig` (they sum to 1):

* ``proximity``: 1 for a fact about a query entity (an end is that entity), ``page_proximity``
  for a fact read from a query entity's page, ``hit_proximity`` for a fact about or read from
  a top passage's document (less ``hit_decay`` per rank below the first);
* ``lexical``: the query's content words found in the fact's text form (``subject
  predicate object``), compared on word prefixes: the share of the words asking the relation
  (less the words naming the query's entities) and the share of all of them, mixed by
  ``fact_name_words_share`` (a fact naming the query's entities is the closer one);
* ``embedding``: cosine of the query and the fact's relation phrase (embedded once per
  phrase and cached: relation phrases repeat across facts, so this stays cheap).

A fact with an end that describes rather than names (a lower-case phrase such as "second
son" or "film scores" that is not one of the query's entities) scores ``description_factor``
times as much: such ends share the question's words without answering it.
"""

from __future__ import annotations

import logging
import re
import threading
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass, replace
from typing import Any

import numpy as np

from llama_kb import graph_model as gm
from llama_kb.config import QueryOptions, RankingConfig
from llama_kb.names import STOPWORDS, aliases, name_key
from llama_kb.retrieval import explain_facts
from llama_kb.retrieval.index import Candidates
from llama_kb.retrieval.lexical import lexical_tokens
from llama_kb.retrieval.payload import Fact
from llama_kb.stores.phrase_vectors import PhraseVectors, unit
from llama_kb.types import SearchHit

logger = logging.getLogger(__name__)

_PREFIX = 5
_WORDS = re.compile(r"[\w'-]+")
_CACHE_LIMIT = 50_000
FACT_ROWS = 5_000
"""Most fact nodes read for one query (a hub name's facts are capped here)."""

Parts = tuple[float, float, float]
"""A fact's ``(proximity, lexical, embedding)``, raw (each in [0, 1]) or weighted."""


@dataclass(frozen=True)
class FactTable:
    """Every typed fact in the graph, indexed by end name key, document and chunk."""

    facts: tuple[Fact, ...]
    by_key: dict[str, tuple[int, ...]]
    by_doc: dict[str, tuple[int, ...]]
    by_chunk: dict[str, tuple[int, ...]]

    @classmethod
    def from_properties(cls, rows: Iterable[dict[str, Any]]) -> FactTable:
        """From the properties of ``fact`` nodes (as :meth:`SearchIndex.facts` returns them;
        their ``subject_key`` / ``object_key`` are used when given, else computed)."""
        facts: list[Fact] = []
        keys: list[tuple[str, str]] = []
        for props in rows:
            subject, obj = str(props.get("subject") or ""), str(props.get("object") or "")
            if not subject or not obj:
                continue
            subject_key = props.get("subject_key") or name_key(subject)
            object_key = props.get("object_key") or name_key(obj)
            keys.append((subject_key, object_key))
            facts.append(
                Fact(
                    subject=subject,
                    predicate=str(props.get("predicate") or ""),
                    object=obj,
                    subject_id=gm.entity_id_of_key(subject_key),
                    object_id=gm.entity_id_of_key(object_key),
                    source_ids=(str(props.get("chunk_id") or ""),),
                    evidence=str(props.get("evidence") or ""),
                    chunk_id=str(props.get("chunk_id") or "") or None,
                    doc_id=str(props.get("doc_id") or "") or None,
                    extractor=str(props.get("extractor") or "pattern"),
                )
            )
        by_key: dict[str, list[int]] = {}
        by_doc: dict[str, list[int]] = {}
        by_chunk: dict[str, list[int]] = {}
        for i, fact in enumerate(facts):
            for key in set(keys[i]):
                by_key.setdefault(key, []).append(i)
            by_doc.setdefault(fact.doc_id or "", []).append(i)
            by_chunk.setdefault(fact.chunk_id or "", []).append(i)
        return cls(
            tuple(facts),
            {k: tuple(v) for k, v in by_key.items()},
            {k: tuple(v) for k, v in by_doc.items()},
            {k: tuple(v) for k, v in by_chunk.items()},
        )


class FactRanker:
    """Scores candidate facts for a query (see the module docstring).

    Args:
        embedding: Embeds relation phrases (the same model as the query vector).
        ranking: Weights and constants.
        phrases: Relation-phrase vectors stored at ingest (embedded here when missing).
    """

    def __init__(
        self, embedding: Any, ranking: RankingConfig, phrases: PhraseVectors | None = None
    ) -> None:
        self.embedding = embedding
        self.ranking = ranking
        self.phrases = phrases
        self._phrases: dict[str, np.ndarray] = {}
        self._lock = threading.Lock()

    def rank(
        self,
        query: str,
        query_vector: Sequence[float] | None,
        table: FactTable,
        entities: dict[str, str],
        hits: Sequence[SearchHit],
        extra: Sequence[Fact] = (),
    ) -> list[tuple[Fact, Parts]]:
        """Candidate facts with ``score`` set and their raw parts, best first (ties by text).

        Args:
            query: The question.
            query_vector: Its embedding, or ``None`` to skip the embedding term.
            table: The typed facts of the knowledge base.
            entities: Linked entities, graph id -> name.
            hits: The passages returned for the query, best first, scores in [0, 1].
            extra: Facts found by graph traversal (LLM-extracted, loaded knowledge,
                structural); their proximity comes from their path cost.
        """
        proximity: dict[int, float] = {}
        entity_keys = {k for name in entities.values() for k in _keys(name)}
        mentioned = _named_in(query, table)
        entity_keys |= mentioned
        entity_docs = {i[len("doc:") :] for i in entities if i.startswith("doc:")}
        for key in entity_keys:
            for i in table.by_key.get(key, ()):
                proximity[i] = 1.0
        for doc in entity_docs:
            _raise(proximity, table.by_doc.get(doc, ()), self.ranking.page_proximity)
        for rank, hit in enumerate(hits):
            # by rank, not score: graph-route scores fall fast after the first passage
            weight = self.ranking.hit_proximity * (1.0 - self.ranking.hit_decay * rank)
            _raise(proximity, table.by_chunk.get(hit.chunk_id, ()), weight)
            title = hit.metadata.get("title")
            if isinstance(title, str):
                for key in _keys(title):
                    _raise(proximity, table.by_key.get(key, ()), weight)
        # the words naming the question's entities match every fact about them: only the
        # other words (the relation asked about) count lexically
        named = {w for key in mentioned for w in key.split("-")}
        named |= {w for name in entities.values() for w in name_key(aliases(name)[-1]).split("-")}
        tokens = lexical_tokens(query)
        words = ({w[:_PREFIX] for w in tokens if w not in named}, {w[:_PREFIX] for w in tokens})
        relevance = self._relevance(query_vector, words, table, proximity)
        candidates = [(table.facts[i], p, relevance[i]) for i, p in proximity.items()]
        if extra:
            extra_relevance = self._relevance_of(query_vector, words, extra)
            candidates.extend(
                (f, 1.0 / (1.0 + max(f.path_cost, 0.0)), r)
                for f, r in zip(extra, extra_relevance, strict=True)
            )
        w_near, w_lexical, w_embedding = fact_weights(self.ranking)
        scored = []
        for fact, near, (lexical, embedding) in candidates:
            # a fact with an end that only describes (lower case, not a query entity) counts
            # description_factor times: the raw parts carry that factor, so the score stays
            # the sum of weighted_parts(), inlined here because this runs for every candidate
            factor = self._naming(fact, entity_keys)
            raw = (near * factor, lexical * factor, embedding * factor)
            total = w_near * raw[0] + w_lexical * raw[1] + w_embedding * raw[2]
            score = round(min(1.0, max(0.0, total)), 6)
            scored.append((replace(fact, score=score), raw))
        return sorted(
            scored, key=lambda s: (-s[0].score, s[0].subject, s[0].predicate, s[0].object)
        )

    def _naming(self, fact: Fact, entity_keys: set[str]) -> float:
        """1 for a fact between names, ``description_factor`` if an end only describes."""
        for end in (fact.subject, fact.object):
            if not end[:1].isupper() and not end[:1].isdigit() and name_key(end) not in entity_keys:
                return self.ranking.description_factor
        return 1.0

    def _relevance(
        self,
        query_vector: Sequence[float] | None,
        words: tuple[set[str], set[str]],
        table: FactTable,
        rows: dict[int, float],
    ) -> dict[int, tuple[float, float]]:
        """``(lexical, embedding)`` relevance, each in [0, 1], of the facts at ``rows``."""
        ids = list(rows)
        values = self._relevance_of(query_vector, words, [table.facts[i] for i in ids])
        return dict(zip(ids, values, strict=True))

    def _relevance_of(
        self,
        query_vector: Sequence[float] | None,
        words: tuple[set[str], set[str]],
        facts: Sequence[Fact],
    ) -> list[tuple[float, float]]:
        r = self.ranking
        if not facts or r.fact_lexical_weight + r.fact_embedding_weight <= 0:
            return [(0.0, 0.0)] * len(facts)
        similarity = self._similarities(query_vector, [f.predicate for f in facts])
        share = r.fact_name_words_share
        relation_words, all_words = words
        lexical = [
            (1 - share) * _overlap(relation_words, found) + share * _overlap(all_words, found)
            for found in (_text_words(fact) for fact in facts)
        ]
        return [(lex, cosine) for lex, cosine in zip(lexical, similarity, strict=True)]

    def _similarities(
        self, query_vector: Sequence[float] | None, phrases: Sequence[str]
    ) -> list[float]:
        if query_vector is None or self.ranking.fact_embedding_weight == 0:
            return [0.0] * len(phrases)
        known = ((p, self._phrases.get(p)) for p in dict.fromkeys(phrases))
        vectors = {p: v for p, v in known if v is not None}
        missing = [p for p in dict.fromkeys(phrases) if p not in vectors]
        if missing:
            embed = self.embedding.get_text_embedding_batch
            if self.phrases is not None:  # stored at ingest; embedded here only if not
                found = self.phrases.ensure(missing, embed)
            else:
                found = {p: unit(v) for p, v in zip(missing, embed(missing), strict=True)}
            vectors.update(found)
            with self._lock:
                if len(self._phrases) + len(found) > _CACHE_LIMIT:
                    self._phrases.clear()
                self._phrases.update(found)
        q = unit(query_vector)
        return [max(0.0, float(vectors[p] @ q)) for p in phrases]


def select_facts(
    ranker: FactRanker,
    view: Candidates,
    query: tuple[str, Sequence[float] | None, Sequence[str]],
    hits: Sequence[SearchHit],
    traversed: Sequence[Fact],
    options: QueryOptions,
    on_error: Callable[[Exception], None],
) -> list[Fact]:
    """The engine's fact step: rank the typed facts near ``query`` (text, vector, linked
    entity ids) and its passages, read from the store for this query only, with the
    ``traversed`` ones (structural edges only with ``include_structural``); then keep the best
    per triple down to ``min_score``, at most ``max_facts``. A failing ranker goes to
    ``on_error`` and traversal order stands.
    """
    text, vector, entity_ids = query
    extra = [f for f in traversed if options.include_structural or not f.structural]
    parts: list[tuple[Fact, Parts]] | None = None
    try:
        entities = {e: view.name(e) for e in entity_ids}
        top = hits[: ranker.ranking.fact_hits]
        keys = {k for name in entities.values() for k in _keys(name)} | _gram_keys(text)
        keys |= {k for h in top if isinstance(t := h.metadata.get("title"), str) for k in _keys(t)}
        docs = [e[len("doc:") :] for e in entities if e.startswith("doc:")]
        rows = view.index.facts(sorted(keys), docs, [h.chunk_id for h in top], FACT_ROWS)
        table = FactTable.from_properties(rows)
        parts = ranker.rank(text, vector, table, entities, top, extra)
        ranked = [fact for fact, _ in parts]
    except Exception as e:
        on_error(e)
        ranked = sorted(extra, key=lambda f: f.path_cost)
    kept = merge_ranked(ranked, options.max_facts, options.min_score)
    if not options.explain:
        return kept
    weights = fact_weights(ranker.ranking)
    weighted = [(f, raw, weighted_parts(weights, raw)) for f, raw in parts or ()]
    return explain_facts.explained(kept, weighted, fact_key, options, vector, weights)


def fact_weights(ranking: RankingConfig) -> Parts:
    """The weights of ``(proximity, lexical, embedding)``, each over their sum."""
    p, lex, emb = (
        ranking.fact_proximity_weight,
        ranking.fact_lexical_weight,
        ranking.fact_embedding_weight,
    )
    total = p + lex + emb
    return (p / total, lex / total, emb / total)


def weighted_parts(weights: Parts, raw: Parts) -> Parts:
    """Each raw part times its weight (:func:`fact_weights`): a fact's score is their sum,
    rounded to 6 decimals and clipped to [0, 1] (it only clips if a weight is negative)."""
    return (weights[0] * raw[0], weights[1] * raw[1], weights[2] * raw[2])


def fact_key(fact: Fact) -> tuple[str, str, str]:
    """What makes two facts the same for :func:`merge_ranked`."""
    return (name_key(fact.subject), fact.predicate, name_key(fact.object))


def merge_ranked(facts: Iterable[Fact], limit: int, min_score: float | None) -> list[Fact]:
    """One fact per (subject, predicate, object) keeping the best score, at most ``limit``."""
    best: dict[tuple[str, str, str], Fact] = {}
    for fact in facts:
        key = fact_key(fact)
        if key not in best or fact.score > best[key].score:
            best[key] = fact
    ordered = sorted(best.values(), key=lambda f: (-f.score, f.subject, f.predicate, f.object))
    if min_score is not None:
        ordered = [f for f in ordered if f.score >= min_score]
    return ordered[:limit]


def _named_in(query: str, table: FactTable) -> set[str]:
    """Keys of fact ends named in ``query`` (see :func:`_gram_keys`) that ``table`` holds."""
    return {key for key in _gram_keys(query) if key in table.by_key}


def _gram_keys(query: str, longest: int = 6) -> set[str]:
    """Keys of the word n-grams of ``query`` that may name a fact end, lower-case concepts
    included: several words, or one capitalised word not first in the question."""
    words = _WORDS.findall(query)
    found: set[str] = set()
    for n in range(1, longest + 1):
        for i in range(len(words) - n + 1):
            gram = words[i : i + n]
            if n == 1 and (not gram[0][:1].isupper() or i == 0 or gram[0].lower() in STOPWORDS):
                continue
            if gram[0].lower() in STOPWORDS or gram[-1].lower() in STOPWORDS:
                continue
            if key := name_key(" ".join(gram)):
                found.add(key)
    return found


def _keys(name: str) -> set[str]:
    return {name_key(form) for form in aliases(name)} - {""}


def _raise(proximity: dict[int, float], rows: Iterable[int], value: float) -> None:
    for i in rows:
        if proximity.get(i, 0.0) < value:
            proximity[i] = value


def _text_words(fact: Fact) -> set[str]:
    """Word prefixes of the fact's text form."""
    return {w[:_PREFIX] for w in lexical_tokens(f"{fact.subject} {fact.predicate} {fact.object}")}


def _overlap(words: set[str], found: set[str]) -> float:
    return len(words & found) / len(words) if words else 0.0
