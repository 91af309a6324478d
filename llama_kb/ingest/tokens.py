"""Counting text in the embedding model's tokens, to size chunks to the model's window.

The bundled all-MiniLM-L6-v2 reads 256 WordPiece tokens, ``[CLS]`` and ``[SEP]`` included,
so 254 tokens of text. For any other embedding the same WordPiece tokenizer serves as an
estimate (most sub-word tokenizers give similar counts on English text) with a window of
512 tokens unless configured.
"""

from __future__ import annotations

import threading
from collections.abc import Sequence
from typing import Any

from llama_kb.embeddings import MAX_SEQ_LENGTH, OnnxMiniLMEmbedding, load_tokenizer

__all__ = ["TokenCounter", "token_counter"]

_SPECIAL_TOKENS = 2  # [CLS] and [SEP]
_OTHER_MODEL_WINDOW = 512


class TokenCounter:
    """Counts tokens the way the embedding model sees text.

    Args:
        window: Tokens of text the model reads (special tokens excluded).
        exact: Whether the counts are the model's own (``False``: an estimate).
    """

    def __init__(self, window: int, exact: bool) -> None:
        self.window = window
        self.exact = exact
        self._tokenizer: Any = None
        self._lock = threading.Lock()

    def _load(self) -> Any:
        if self._tokenizer is None:
            with self._lock:
                if self._tokenizer is None:
                    self._tokenizer = load_tokenizer()
        return self._tokenizer

    def count_batch(self, texts: Sequence[str]) -> list[int]:
        """Token counts of ``texts`` (without special tokens), in order."""
        if not texts:
            return []
        encodings = self._load().encode_batch(list(texts), add_special_tokens=False)
        return [len(e.ids) for e in encodings]

    def count(self, text: str) -> int:
        """Token count of one text."""
        return self.count_batch([text])[0]


def token_counter(embedding: Any, window: int | None = None) -> TokenCounter:
    """The token counter and window for ``embedding``.

    Args:
        embedding: The knowledge base's embedding.
        window: Model window in tokens (special tokens included) when configured; ``None``
            means 256 for the bundled model and 512 for any other.
    """
    exact = isinstance(embedding, OnnxMiniLMEmbedding)
    if window is None:
        window = MAX_SEQ_LENGTH if exact else _OTHER_MODEL_WINDOW
    return TokenCounter(window - _SPECIAL_TOKENS, exact)
