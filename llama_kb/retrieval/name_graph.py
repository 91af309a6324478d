"""The chunk–name graph and Personalized PageRank over it (HippoRAG-style, no LLM).

Chunks link to the *names* (document and entity nodes) they belong to (``T``: the
document title of the chunk, via ``PART_OF``) and mention (``M``: ``MENTIONS``,
``LINKS_TO``). A walk alternates chunk -> name -> chunk with transitions

* chunk -> name: row-normalised ``(T + M) · diag(idf)`` (rare names carry more mass; names
  that lead back to a single chunk are skipped);
* name -> chunk: row-normalised ``(title_pull · T + M)ᵀ`` (a name mostly leads to its own
  document, not to every chunk that mentions it — this lopsidedness matters most).

PPR with follow probability ``damping`` spreads seed mass from names found in the question
and from the top lexical/dense hits. Measured on 2WikiMultihopQA (see ``benchmarks/``).
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from dataclasses import dataclass

import numpy as np
import scipy.sparse as sp

TITLE_PULL = 100.0
DAMPING = 0.7
MAX_ITERATIONS = 15
_SPARSE_FROM = 20_000


@dataclass(frozen=True)
class NameGraph:
    """Row-stochastic transitions between chunks (rows of the index) and name nodes.

    The transposes are kept too: PPR multiplies by them every step.
    """

    name_ids: tuple[str, ...]
    name_index: dict[str, int]
    chunk_to_name: sp.csr_matrix
    name_to_chunk: sp.csr_matrix
    into_chunks: sp.csr_matrix
    into_names: sp.csr_matrix
    incidence: sp.csr_matrix
    """Binary chunk x name matrix: the chunk belongs to or mentions the name."""

    @property
    def n_chunks(self) -> int:
        """Number of chunk rows."""
        return self.chunk_to_name.shape[0]

    @classmethod
    def build(
        cls,
        n_chunks: int,
        title_edges: Iterable[tuple[int, str]],
        mention_edges: Iterable[tuple[int, str]],
        title_pull: float = TITLE_PULL,
    ) -> NameGraph:
        """Build from ``(chunk row, name node id)`` edges of both kinds."""
        name_index: dict[str, int] = {}

        def column(node_id: str) -> int:
            return name_index.setdefault(node_id, len(name_index))

        def incidence(edges: Iterable[tuple[int, str]]) -> tuple[list[int], list[int]]:
            rows, cols = [], []
            for row, node_id in edges:
                rows.append(row)
                cols.append(column(node_id))
            return rows, cols

        t_rows, t_cols = incidence(title_edges)
        m_rows, m_cols = incidence(mention_edges)
        shape = (n_chunks, len(name_index))
        titles = sp.csr_matrix((np.ones(len(t_rows)), (t_rows, t_cols)), shape=shape)
        mentions = sp.csr_matrix((np.ones(len(m_rows)), (m_rows, m_cols)), shape=shape)
        titles.data[:] = 1.0  # duplicates summed by the constructor count once
        mentions.data[:] = 1.0
        either = titles + mentions
        df = np.asarray((either > 0).sum(axis=0)).ravel()
        idf = np.log(1.0 + max(n_chunks, 1) / np.maximum(df, 1))
        # A name only one chunk mentions (and no document is titled), such as a section
        # heading, leads nowhere but back: walks do not enter it, though a seed on it
        # still reaches its chunk.
        titled = np.asarray(titles.sum(axis=0)).ravel() > 0
        dead_end = (df <= 1) & ~titled
        chunk_to_name = _row_normalise(either @ sp.diags(np.where(dead_end, 0.0, idf)))
        name_to_chunk = _row_normalise((title_pull * titles + mentions).T.tocsr())
        names = tuple(sorted(name_index, key=name_index.__getitem__))
        return cls(
            names,
            name_index,
            chunk_to_name,
            name_to_chunk,
            name_to_chunk.T.tocsr(),
            chunk_to_name.T.tocsr(),
            (either > 0).astype(float).tocsr(),
        )

    def personalized_pagerank(
        self,
        chunk_seeds: np.ndarray,
        name_seeds: np.ndarray,
        damping: float = DAMPING,
        max_iter: int = MAX_ITERATIONS,
        tol: float = 1e-6,
        sparse: bool | None = None,
    ) -> np.ndarray:
        """Chunk scores of a walk restarting (prob. ``1 - damping``) at the seeds.

        ``sparse`` (default: for graphs of 20,000 chunks or more) keeps scores as sparse
        vectors pruned each step, so the cost follows the seeds' neighbourhood rather than
        the corpus size.
        """
        total = chunk_seeds.sum() + name_seeds.sum()
        if total <= 0:
            return np.zeros(self.n_chunks)
        if self.n_chunks >= _SPARSE_FROM if sparse is None else sparse:
            return self._sparse_ppr(chunk_seeds / total, name_seeds / total, damping)
        seed_c, seed_n = chunk_seeds / total, name_seeds / total
        rank_c, rank_n = seed_c.copy(), seed_n.copy()
        restart = 1.0 - damping
        for _ in range(max_iter):
            next_c = restart * seed_c + damping * (self.into_chunks @ rank_n)
            next_n = restart * seed_n + damping * (self.into_names @ rank_c)
            delta = np.abs(next_c - rank_c).sum() + np.abs(next_n - rank_n).sum()
            rank_c, rank_n = next_c, next_n
            if delta < tol:
                break
        return rank_c

    def _sparse_ppr(
        self,
        seed_c: np.ndarray,
        seed_n: np.ndarray,
        damping: float,
        steps: int = 10,
        prune: float = 1e-4,
    ) -> np.ndarray:
        start_c, start_n = sp.csr_matrix(seed_c), sp.csr_matrix(seed_n)
        rank_c, rank_n = start_c, start_n
        restart = 1.0 - damping
        for _ in range(steps):
            next_c = restart * start_c + damping * (rank_n @ self.name_to_chunk)
            next_n = restart * start_n + damping * (rank_c @ self.chunk_to_name)
            for vector in (next_c, next_n):
                if vector.nnz:
                    vector.data[vector.data < prune * vector.data.max()] = 0
                    vector.eliminate_zeros()
            rank_c, rank_n = next_c, next_n
        return np.asarray(rank_c.todense()).ravel()

    def coverage(self, node_ids: Sequence[str]) -> np.ndarray:
        """For every chunk, how many of ``node_ids`` it belongs to or mentions."""
        wanted = np.zeros(len(self.name_ids))
        cols = [self.name_index[n] for n in node_ids if n in self.name_index]
        wanted[cols] = 1.0
        return np.asarray(self.incidence @ wanted).ravel()

    def name_vector(self, node_ids: Sequence[str]) -> np.ndarray:
        """Seed vector spreading unit mass evenly over the known ``node_ids``."""
        seeds = np.zeros(len(self.name_ids))
        cols = [self.name_index[n] for n in node_ids if n in self.name_index]
        if cols:
            seeds[cols] = 1.0 / len(cols)
        return seeds


def _row_normalise(matrix: sp.spmatrix) -> sp.csr_matrix:
    sums = np.asarray(matrix.sum(axis=1)).ravel()
    return (sp.diags(1.0 / np.maximum(sums, 1e-12)) @ matrix).tocsr()
