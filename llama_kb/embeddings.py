"""The offline default embedding and resolving user-supplied embeddings.

The bundled models (:mod:`llama_kb.onnx_embedding`) run on CPU with no PyTorch and no network.
Any LlamaIndex :class:`~llama_index.core.base.embeddings.base.BaseEmbedding` or LangChain
:class:`~langchain_core.embeddings.Embeddings` can be used instead; :func:`resolve_embedding`
turns either into a LlamaIndex embedding.
"""

from __future__ import annotations

import logging
import threading
from collections.abc import Callable
from typing import Any

from llama_index.core.base.embeddings.base import BaseEmbedding, Embedding
from pydantic import Field

from llama_kb.errors import ConfigurationError
from llama_kb.onnx_embedding import (
    BGE_SMALL,
    MINILM,
    OnnxBgeSmallEmbedding,
    OnnxEmbedding,
    OnnxMiniLMEmbedding,
    cpu_session,
)

__all__ = [
    "DEFAULT_MODEL_NAME",
    "MODEL_ALIASES",
    "LangChainEmbeddingAdapter",
    "OnnxBgeSmallEmbedding",
    "OnnxEmbedding",
    "OnnxMiniLMEmbedding",
    "cpu_session",
    "default_embedding",
    "embedding_fingerprint",
    "is_bundled",
    "resolve_embedding",
]

DEFAULT_MODEL_NAME = MINILM.name
"""Model name of the default embedding, as recorded in a knowledge base's fingerprint."""

logger = logging.getLogger(__name__)
_shared_lock = threading.Lock()
_shared: dict[str, OnnxEmbedding] = {}
_BUNDLED: dict[str, type[OnnxEmbedding]] = {
    MINILM.name: OnnxMiniLMEmbedding,
    BGE_SMALL.name: OnnxBgeSmallEmbedding,
}
MODEL_ALIASES = {"minilm": MINILM.name, "bge-small": BGE_SMALL.name}
"""Short names of the bundled models (the CLI's ``--embedding``)."""


def default_embedding(model_name: str | None = None) -> BaseEmbedding:
    """A process-wide shared bundled embedding, so each ONNX model loads once per process.

    Args:
        model_name: A bundled model's name or alias (:data:`MODEL_ALIASES`);
            :data:`DEFAULT_MODEL_NAME` when ``None``.

    Returns:
        The same instance on every call with the same name.

    Raises:
        ConfigurationError: ``model_name`` is not a bundled model.
    """
    name = MODEL_ALIASES.get(model_name or "", model_name or DEFAULT_MODEL_NAME)
    if name not in _BUNDLED:
        raise ConfigurationError(f"unknown bundled embedding {name!r}; known: {sorted(_BUNDLED)}")
    shared = _shared.get(name)
    if shared is None:
        with _shared_lock:
            shared = _shared.setdefault(name, _BUNDLED[name]())
    return shared


def is_bundled(model_name: object) -> bool:
    """Whether ``model_name`` names one of the bundled ONNX models."""
    return isinstance(model_name, str) and model_name in _BUNDLED


class LangChainEmbeddingAdapter(BaseEmbedding):
    """A LangChain ``Embeddings`` seen as a LlamaIndex ``BaseEmbedding``.

    Queries go to ``embed_query``/``aembed_query`` and texts to
    ``embed_documents``/``aembed_documents``, so models that embed queries and documents
    differently keep doing so.

    Args:
        embeddings: The LangChain embeddings object.
        **kwargs: Further :class:`BaseEmbedding` fields (``embed_batch_size``, ...).
    """

    embeddings: Any = Field(description="The wrapped langchain_core Embeddings.", exclude=True)

    def __init__(self, embeddings: Any, **kwargs: Any) -> None:
        kwargs.setdefault("model_name", _langchain_model_name(embeddings))
        kwargs["embeddings"] = embeddings
        super().__init__(**kwargs)

    @classmethod
    def class_name(cls) -> str:
        """The LlamaIndex serialisation name."""
        return "LangChainEmbeddingAdapter"

    def _get_query_embedding(self, query: str) -> Embedding:
        return list(self.embeddings.embed_query(query))

    def _get_text_embedding(self, text: str) -> Embedding:
        return list(self.embeddings.embed_documents([text])[0])

    def _get_text_embeddings(self, texts: list[str]) -> list[Embedding]:
        return [list(v) for v in self.embeddings.embed_documents(list(texts))]

    async def _aget_query_embedding(self, query: str) -> Embedding:
        return list(await self.embeddings.aembed_query(query))

    async def _aget_text_embedding(self, text: str) -> Embedding:
        return list((await self.embeddings.aembed_documents([text]))[0])

    async def _aget_text_embeddings(self, texts: list[str]) -> list[Embedding]:
        return [list(v) for v in await self.embeddings.aembed_documents(list(texts))]


def _langchain_model_name(embeddings: object) -> str:
    for attr in ("model", "model_name", "model_id"):
        value = getattr(embeddings, attr, None)
        if isinstance(value, str) and value:
            return value
    return type(embeddings).__name__


def load_in_background(embedding: BaseEmbedding) -> threading.Thread | None:
    """Start loading ``embedding``'s model in a thread, when it loads lazily (a ``preload``
    method), and return the thread: opening a knowledge base overlaps the load with opening
    the stores, then joins it, so the first query never pays it (about 280 ms for the
    bundled MiniLM on a quiet machine, a second or more on a busy one). The thread is not a
    daemon, so the interpreter never exits in the middle of a load. A failure is left to
    the first embedding, which loads again and raises it."""
    preload = getattr(embedding, "preload", None)
    if not callable(preload):
        return None
    thread = threading.Thread(target=_quietly, args=(preload,), name="llama-kb-model-load")
    thread.start()
    return thread


def _quietly(load: Callable[[], object]) -> None:
    try:
        load()
    except Exception as e:  # raised again, with its message, by the first embedding
        logger.debug("loading the embedding model in the background failed: %s", e)


def resolve_embedding(embedding: object | None, recorded: str | None = None) -> BaseEmbedding:
    """Turn a configured embedding into a LlamaIndex ``BaseEmbedding``.

    Args:
        embedding: ``None`` for a bundled model, a LlamaIndex ``BaseEmbedding`` (returned
            as is) or a LangChain ``Embeddings`` (wrapped in a
            :class:`LangChainEmbeddingAdapter`).
        recorded: The model name a knowledge base was built with; with ``embedding=None``
            that bundled model is used, so a knowledge base keeps its vector space.

    Returns:
        The embedding to use.

    Raises:
        ConfigurationError: ``embedding`` is of any other type.
    """
    if embedding is None:
        return default_embedding(recorded if is_bundled(recorded) else None)
    if isinstance(embedding, BaseEmbedding):
        return embedding
    try:
        from langchain_core.embeddings import Embeddings
    except ImportError:
        pass
    else:
        if isinstance(embedding, Embeddings):
            return LangChainEmbeddingAdapter(embedding)
    raise ConfigurationError(
        f"Unsupported embedding of type {type(embedding).__module__}."
        f"{type(embedding).__qualname__}: pass None for the offline default, a LlamaIndex "
        "BaseEmbedding (llama_index.core.base.embeddings.base.BaseEmbedding) or a LangChain "
        "Embeddings (langchain_core.embeddings.Embeddings)."
    )


def embedding_fingerprint(embedding: BaseEmbedding) -> dict[str, str]:
    """What identifies an embedding's vector space, to detect a KB opened with another one.

    Args:
        embedding: A LlamaIndex embedding (as returned by :func:`resolve_embedding`).

    Returns:
        ``{"model_name": ..., "class": ...}``; for a wrapped LangChain embedding, ``class`` is
        the LangChain class name.
    """
    if isinstance(embedding, LangChainEmbeddingAdapter):
        cls_name = type(embedding.embeddings).__name__
    else:
        cls_name = type(embedding).__name__
    return {"model_name": embedding.model_name, "class": cls_name}
