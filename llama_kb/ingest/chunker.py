"""The chunker a pipeline uses: token-aware (default) or by characters, plus window checks.

:class:`Chunker` turns a :class:`~llama_kb.config.ChunkingConfig` and the embedding into a
function from documents to chunks, and counts chunks whose embedded text (see
:func:`embedding_text`) is longer than the model window: with the token chunker that count
is 0 (the report's ``chunks_over_window``).
"""

from __future__ import annotations

import itertools
from collections.abc import Iterable, Iterator, Sequence
from typing import Any, TypeVar

from llama_kb.config import ChunkingConfig
from llama_kb.ingest.chunking import chunk_document
from llama_kb.ingest.token_chunking import TokenSplitter
from llama_kb.ingest.tokens import TokenCounter, token_counter
from llama_kb.types import SourceDocument, TextChunk

__all__ = ["Chunker", "embedding_text"]

T = TypeVar("T")
_PRIMED_DOCUMENTS = 256  # documents whose paragraphs are counted in one tokenizer batch


def embedding_text(chunk: TextChunk) -> str:
    """The text embedded for a chunk: its title (when not already leading) and its text."""
    title = chunk.metadata.get("title")
    if isinstance(title, str) and title and not chunk.text.lstrip("# ").startswith(title):
        return f"{title}\n{chunk.text}"
    return chunk.text


class Chunker:
    """Chunks documents as configured and checks chunks against the model window.

    Args:
        config: Unit, size and overlap.
        embedding: The knowledge base's embedding (its tokenizer and window).
    """

    def __init__(self, config: ChunkingConfig, embedding: Any) -> None:
        self.config = config
        self.counter: TokenCounter = token_counter(embedding, config.window)
        self._splitter = (
            TokenSplitter.from_config(config, self.counter) if config.unit == "tokens" else None
        )

    def __call__(self, doc: SourceDocument) -> list[TextChunk]:
        """The document's chunks."""
        if self._splitter is not None:
            return chunk_document(doc, splitter=self._splitter)
        return chunk_document(doc, self.config.size, self.config.overlap)

    def over_window(self, chunks: Sequence[TextChunk]) -> int:
        """How many chunks the model would truncate (their embedded text is too long).

        Chunks the token splitter made are known from its counts; others are counted."""
        counts = [self._known_tokens(c) for c in chunks]
        unknown = [i for i, n in enumerate(counts) if n is None]
        texts = [embedding_text(chunks[i]) for i in unknown]
        for i, n in zip(unknown, self.counter.count_batch(texts), strict=True):
            counts[i] = n
        return sum(1 for n in counts if n is not None and n > self.counter.window)

    def _known_tokens(self, chunk: TextChunk) -> int | None:
        if self._splitter is None:
            return None
        title = chunk.metadata.get("title")
        prefixed = len(embedding_text(chunk)) != len(chunk.text)
        return self._splitter.chunk_tokens(chunk.text, title if prefixed else None)

    def batches(
        self, items: Iterable[tuple[T, SourceDocument]], max_chunks: int
    ) -> Iterator[list[tuple[T, SourceDocument, list[TextChunk]]]]:
        """Chunk ``(tag, document)`` pairs, in batches of about ``max_chunks`` chunks."""
        batch: list[tuple[T, SourceDocument, list[TextChunk]]] = []
        size = 0
        pending = iter(items)
        while group := list(itertools.islice(pending, _PRIMED_DOCUMENTS)):
            if self._splitter is not None:
                self._splitter.prime([doc for _, doc in group])
            for tag, doc in group:
                chunks = self(doc)
                batch.append((tag, doc, chunks))
                size += len(chunks)
                if size >= max_chunks:
                    yield batch
                    batch, size = [], 0
        if batch:
            yield batch
