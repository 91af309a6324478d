"""Link names the exact matcher missed ("Vector Indexr", "Nathan Juran") by embedding similarity.

Only used when no graph name matches a query exactly. Candidate names come from the search
index's trigram lookup (:meth:`~llama_kb.stores.search.SearchIndex.similar_names`), then the
query's capitalised spans and those candidates are embedded and compared by cosine; name
vectors are cached (bounded) and, with the knowledge base's phrase vectors
(:mod:`llama_kb.stores.phrase_vectors`), kept on disk, so a name is embedded once; query
spans are never stored. Nothing is added at ingestion time.
"""

from __future__ import annotations

import threading
from collections import OrderedDict
from collections.abc import Sequence

import numpy as np
from llama_index.core.base.embeddings.base import BaseEmbedding

from llama_kb.background import Pending
from llama_kb.names import fold
from llama_kb.stores.phrase_vectors import PhraseVectors, unit
from llama_kb.stores.search import SearchIndex

NAME_SIMILARITY = 0.85
CANDIDATES_PER_SPAN = 16
_CACHE_LIMIT = 20_000


def trigrams(text: str) -> set[str]:
    """Character trigrams of the folded text, padded at word ends."""
    padded = f"  {' '.join(fold(text).split())} "
    return {padded[i : i + 3] for i in range(len(padded) - 2)}


class FuzzyNameLinker:
    """Nearest graph names to free-text spans.

    Args:
        embedding: Embeds spans and names (the knowledge base's model).
        threshold: Lowest cosine similarity that links.
    """

    def __init__(
        self,
        embedding: BaseEmbedding,
        threshold: float = NAME_SIMILARITY,
        phrases: PhraseVectors | None = None,
    ) -> None:
        self.embedding = embedding
        self.threshold = threshold
        self.phrases = phrases
        self._vectors: OrderedDict[str, np.ndarray] = OrderedDict()
        self._lock = threading.Lock()

    def name_vectors(self, names: Sequence[str]) -> dict[str, np.ndarray]:
        """Unit vectors of graph ``names`` (display names): from this process's bounded
        cache, else the knowledge base's phrase vectors, else embedded in one batch (and
        kept in both)."""
        with self._lock:
            known = {n: v for n in names if (v := self._vectors.get(n)) is not None}
        wanted = sorted(set(names) - set(known))
        embed = self.embedding.get_text_embedding_batch
        new: dict[str, np.ndarray] = {}
        if wanted and self.phrases is not None:  # names' vectors outlive the process
            new = self.phrases.ensure(wanted, embed)
        elif wanted:
            new = {n: unit(v) for n, v in zip(wanted, embed(wanted), strict=True)}
        known.update(new)
        with self._lock:
            self._vectors.update(new)
            while len(self._vectors) > _CACHE_LIMIT:
                self._vectors.popitem(last=False)
        return known

    def link(self, spans: Sequence[str], index: SearchIndex) -> list[tuple[str, str, str, float]]:
        """``(span, node id, name, similarity)`` for each span's best name above the threshold.

        The spans are embedded in a thread while the index looks their candidate names up."""
        embed = self.embedding.get_text_embedding_batch
        spans_embedded = Pending(embed, list(spans))
        candidates = index.similar_names(spans, CANDIDATES_PER_SPAN)
        names = {n: name for found in candidates.values() for n, name in found.items()}
        if not names:
            return []
        known = self.name_vectors(list(names.values()))
        span_vectors = {s: unit(v) for s, v in zip(spans, spans_embedded.result(), strict=True)}
        links = []
        for span, found in candidates.items():
            ids = list(found)
            if not ids:
                continue
            scores = [float(span_vectors[span] @ known[names[n]]) for n in ids]
            best = int(np.argmax(scores))
            if scores[best] >= self.threshold:
                links.append((span, ids[best], names[ids[best]], round(scores[best], 3)))
        return links
