"""Link names the exact matcher missed ("Vector Indexr", "Nathan Juran") by embedding similarity.

Only used when no graph name matches a query exactly. Candidate names are preselected by
shared character trigrams (cheap, in memory), then the query's capitalised spans and those
candidates are embedded and compared by cosine; names are embedded once and cached.
Nothing is added at ingestion time.
"""

from __future__ import annotations

import threading
from collections import Counter
from collections.abc import Sequence

import numpy as np
from llama_index.core.base.embeddings.base import BaseEmbedding

from llama_kb.names import fold

NAME_SIMILARITY = 0.85
CANDIDATES_PER_SPAN = 16


def trigrams(text: str) -> set[str]:
    """Character trigrams of the folded text, padded at word ends."""
    padded = f"  {' '.join(fold(text).split())} "
    return {padded[i : i + 3] for i in range(len(padded) - 2)}


class FuzzyNameLinker:
    """Nearest graph names to free-text spans.

    Args:
        names: Graph node id -> display name.
        embedding: Embeds spans and names (the knowledge base's model).
        threshold: Lowest cosine similarity that links.
    """

    def __init__(
        self, names: dict[str, str], embedding: BaseEmbedding, threshold: float = NAME_SIMILARITY
    ) -> None:
        self.names = names
        self.embedding = embedding
        self.threshold = threshold
        self._index: dict[str, list[str]] | None = None
        self._sizes: dict[str, int] = {}
        self._vectors: dict[str, np.ndarray] = {}
        self._lock = threading.Lock()

    def reuse_vectors(self, other: FuzzyNameLinker) -> None:
        """Keep ``other``'s cached name vectors for names that did not change."""
        self._vectors.update(
            (n, v) for n, v in other._vectors.items() if self.names.get(n) == other.names.get(n)
        )

    def link(self, spans: Sequence[str]) -> list[tuple[str, str, float]]:
        """``(span, node id, similarity)`` for each span's best name above the threshold."""
        candidates = {span: self._candidates(span) for span in spans}
        wanted = sorted({n for ids in candidates.values() for n in ids} - set(self._vectors))
        texts = list(spans) + [self.names[n] for n in wanted]
        if not wanted and not any(candidates.values()):
            return []
        vectors = np.asarray(self.embedding.get_text_embedding_batch(texts), dtype=np.float32)
        span_vectors = dict(zip(spans, vectors[: len(spans)], strict=True))
        with self._lock:
            self._vectors.update(zip(wanted, vectors[len(spans) :], strict=True))
        links = []
        for span, ids in candidates.items():
            if not ids:
                continue
            scores = [float(span_vectors[span] @ self._vectors[n]) for n in ids]
            best = int(np.argmax(scores))
            if scores[best] >= self.threshold:
                links.append((span, ids[best], round(scores[best], 3)))
        return links

    def _candidates(self, span: str) -> list[str]:
        index = self._trigram_index()
        grams = trigrams(span)
        common = max(50, len(self.names) // 20)  # grams like " th" say nothing
        shared: Counter[str] = Counter()
        for gram in grams:
            postings = index.get(gram, ())
            if len(postings) <= common:
                shared.update(postings)

        def jaccard(node_id: str) -> float:
            both = shared[node_id]
            return both / (len(grams) + self._sizes[node_id] - both)

        ranked = sorted(shared, key=lambda n: (-jaccard(n), n))
        return ranked[:CANDIDATES_PER_SPAN]

    def _trigram_index(self) -> dict[str, list[str]]:
        with self._lock:
            if self._index is None:
                index: dict[str, list[str]] = {}
                for node_id, name in self.names.items():
                    grams = trigrams(name)
                    self._sizes[node_id] = len(grams)
                    for gram in grams:
                        index.setdefault(gram, []).append(node_id)
                self._index = index
            return self._index
