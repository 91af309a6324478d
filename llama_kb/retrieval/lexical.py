"""BM25 (Okapi) over chunk texts, as a sparse matrix: scoring a query is one mat-vec."""

from __future__ import annotations

import re
from collections.abc import Sequence

import numpy as np
import scipy.sparse as sp

from llama_kb.names import STOPWORDS, fold

_WORD = re.compile(r"\w+", re.UNICODE)


def lexical_tokens(text: str) -> list[str]:
    """Case- and accent-folded words of ``text`` without stopwords."""
    return [t for t in (fold(w) for w in _WORD.findall(text)) if t not in STOPWORDS]


class BM25Index:
    """Okapi BM25 over a fixed list of texts (rebuild to change it).

    Args:
        texts: The documents, in the order scores are returned.
        k1: Term-frequency saturation.
        b: Length normalisation.
    """

    def __init__(self, texts: Sequence[str], k1: float = 1.2, b: float = 0.75) -> None:
        self.vocabulary: dict[str, int] = {}
        rows: list[int] = []
        cols: list[int] = []
        counts: list[float] = []
        lengths = np.zeros(len(texts))
        for row, text in enumerate(texts):
            words = lexical_tokens(text)
            lengths[row] = len(words)
            tf: dict[int, int] = {}
            for word in words:
                col = self.vocabulary.setdefault(word, len(self.vocabulary))
                tf[col] = tf.get(col, 0) + 1
            rows.extend([row] * len(tf))
            cols.extend(tf)
            counts.extend(tf.values())
        n_docs, n_terms = len(texts), len(self.vocabulary)
        col_array = np.asarray(cols, dtype=np.int64)
        df = np.bincount(col_array, minlength=n_terms)
        self.idf = np.log(1.0 + (n_docs - df + 0.5) / (df + 0.5))
        tf_values = np.asarray(counts, dtype=float)
        row_array = np.asarray(rows, dtype=np.int64)
        mean_length = lengths.mean() if n_docs and lengths.mean() > 0 else 1.0
        denominator = tf_values + k1 * (1 - b + b * lengths[row_array] / mean_length)
        weights = tf_values * (k1 + 1) / denominator
        self._matrix = sp.csr_matrix((weights, (row_array, col_array)), shape=(n_docs, n_terms))

    def __len__(self) -> int:
        return self._matrix.shape[0]

    def scores(self, query: str) -> np.ndarray:
        """BM25 score of every text for ``query`` (zeros when no query word is known)."""
        ids = [self.vocabulary[t] for t in lexical_tokens(query) if t in self.vocabulary]
        if not ids:
            return np.zeros(len(self))
        weights = np.zeros(self._matrix.shape[1])
        np.add.at(weights, ids, self.idf[ids])
        return np.asarray(self._matrix @ weights).ravel()
