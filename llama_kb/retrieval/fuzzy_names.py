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

    def link(self, spans: Sequence[str], index: SearchIndex) -> list[tuple[str, str, str, float]]:
        """``(span, node id, name, similarity)`` for each span's best name above the threshold."""
        candidates = {span: index.similar_names(span, CANDIDATES_PER_SPAN) for span in spans}
        names = index.display_names(sorted({n for ids in candidates.values() for n in ids}))
        if not names:
            return []
        embed = self.embedding.get_text_embedding_batch
        with self._lock:
            known = {n: v for n in names.values() if (v := self._vectors.get(n)) is not None}
        wanted = sorted(set(names.values()) - set(known))
        if self.phrases is not None:  # names' vectors outlive the process; query spans do not
            span_vectors = {s: unit(v) for s, v in zip(spans, embed(list(spans)), strict=True)}
            new = self.phrases.ensure(wanted, embed) if wanted else {}
        else:
            vectors = [unit(v) for v in embed([*spans, *wanted])]
            span_vectors = dict(zip(spans, vectors[: len(spans)], strict=True))
            new = dict(zip(wanted, vectors[len(spans) :], strict=True))
        known.update(new)
        with self._lock:
            self._vectors.update(new)
            while len(self._vectors) > _CACHE_LIMIT:
                self._vectors.popitem(last=False)
        links = []
        for span, ids in candidates.items():
            ids = [n for n in ids if n in names]
            if not ids:
                continue
            scores = [float(span_vectors[span] @ known[names[n]]) for n in ids]
            best = int(np.argmax(scores))
            if scores[best] >= self.threshold:
                links.append((span, ids[best], names[ids[best]], round(scores[best], 3)))
        return links
