"""Counting text in the embedding model's tokens, to size chunks to the model's window.

A bundled model is counted with its own tokenizer and window (all-MiniLM-L6-v2 reads 256
WordPiece tokens, ``[CLS]`` and ``[SEP]`` included, so 254 tokens of text; bge-small-en-v1.5
512). For any other embedding MiniLM's WordPiece tokenizer serves as an estimate (most
sub-word tokenizers give similar counts on English text) with a window of 512 tokens unless
configured.
"""

from __future__ import annotations

import threading
from collections.abc import Sequence
from typing import Any

from llama_kb.onnx_embedding import MINILM, OnnxEmbedding, OnnxModel

__all__ = ["TokenCounter", "token_counter"]

_SPECIAL_TOKENS = 2  # [CLS] and [SEP]
_OTHER_MODEL_WINDOW = 512


class TokenCounter:
    """Counts tokens the way the embedding model sees text.

    Args:
        window: Tokens of text the model reads (special tokens excluded).
        exact: Whether the counts are the model's own (``False``: an estimate).
        model: The bundled model whose tokenizer counts.
    """

    def __init__(self, window: int, exact: bool, model: OnnxModel = MINILM) -> None:
        self.window = window
        self.exact = exact
        self.model = model
        self._tokenizer: Any = None
        self._lock = threading.Lock()

    def _load(self) -> Any:
        if self._tokenizer is None:
            with self._lock:
                if self._tokenizer is None:
                    self._tokenizer = self.model.load_tokenizer()
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
            means a bundled model's own window and 512 for any other.
    """
    if isinstance(embedding, OnnxEmbedding):
        spec = embedding.spec
        return TokenCounter((window or spec.window) - _SPECIAL_TOKENS, True, spec)
    return TokenCounter((window or _OTHER_MODEL_WINDOW) - _SPECIAL_TOKENS, False)
