"""Validated configuration for a knowledge base.

Explicit arguments win over :meth:`KBConfig.from_env`; nothing reads ``.env`` files.
Secrets are :class:`pydantic.SecretStr` and are never written to ``kb.json`` or logs.
"""

from __future__ import annotations

import json
import os
from collections.abc import Mapping
from pathlib import Path
from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field, SecretStr, ValidationError, model_validator

from llama_kb.access import access_key
from llama_kb.errors import ConfigurationError
from llama_kb.types import Route

DEFAULT_KB_DIR = ".llama_kb"


class _Model(BaseModel):
    model_config = ConfigDict(extra="forbid", frozen=True)


class ChunkingConfig(_Model):
    """How documents are cut into chunks.

    By default sizes are counted in the embedding model's tokens (``unit="tokens"``): a chunk
    holds at most ``chunk_size`` tokens including its title prefix, and ``chunk_size`` defaults
    to the model's window (256 tokens for the bundled MiniLM), so nothing is cut off before it
    is embedded. Cuts fall on paragraph, then sentence (or, in code, line) boundaries.
    ``unit="characters"`` keeps the earlier character chunker (default 1000/200).

    Attributes:
        unit: ``"tokens"`` (default) or ``"characters"``.
        chunk_size: Maximum chunk size in ``unit``; ``None`` = the model window (tokens) or
            1000 (characters). In tokens it is capped at the model window.
        chunk_overlap: About how much consecutive chunks share; ``None`` = 32 tokens (at most
            a quarter of ``chunk_size``) or 200 characters. In tokens the overlap is made of
            whole sentences or lines.
        window: The embedding window in tokens when the model does not say (``None``: 256
            for the bundled model, 512 for any other).
    """

    unit: Literal["tokens", "characters"] = "tokens"
    chunk_size: int | None = Field(default=None, gt=0)
    chunk_overlap: int | None = Field(default=None, ge=0)
    window: int | None = Field(default=None, gt=8)

    @property
    def size(self) -> int:
        """The chunk size with its default filled in (tokens: before capping at the window)."""
        if self.chunk_size is not None:
            return self.chunk_size
        return 1000 if self.unit == "characters" else 1 << 30

    @property
    def overlap(self) -> int:
        """The overlap with its default filled in."""
        if self.chunk_overlap is not None:
            return self.chunk_overlap
        return 200 if self.unit == "characters" else min(32, self.size // 4)

    @model_validator(mode="after")
    def _overlap_below_size(self) -> ChunkingConfig:
        if self.overlap >= self.size:
            raise ValueError("chunk_overlap must be smaller than chunk_size")
        return self


class ChromaServerConfig(_Model):
    """A Chroma HTTP server, used instead of the embedded ``PersistentClient``."""

    host: str
    port: int = Field(default=8000, gt=0, lt=65536)
    ssl: bool = False
    headers: dict[str, SecretStr] = Field(default_factory=dict)
    tenant: str = "default_tenant"
    database: str = "default_database"

    @property
    def address(self) -> str:
        """``http(s)://host:port`` for messages."""
        return f"{'https' if self.ssl else 'http'}://{self.host}:{self.port}"


class Neo4jConfig(_Model):
    """A Neo4j server used as the graph store."""

    uri: str
    username: str = "neo4j"
    password: SecretStr
    database: str = "neo4j"


class FalkorDBConfig(_Model):
    """A FalkorDB (Redis protocol) server used as the graph store."""

    url: SecretStr = Field(description="e.g. redis://127.0.0.1:6379 (may carry a password)")
    graph: str = "llama_kb"


class QueryOptions(_Model):
    """Query-time options: the one place their defaults live, validated once per query.

    ``KBConfig.retrieval`` holds a knowledge base's defaults; each call overrides any of
    them. Faces map their own names onto these (LangChain ``k`` / ``search_kwargs``,
    LlamaIndex ``similarity_top_k``, seed ``max_results``): see
    :func:`llama_kb.retrieval.options.resolve_options`.
    """

    top_k: int = Field(default=5, gt=0, description="passages to return")
    min_score: float | None = Field(
        default=None,
        ge=0,
        le=1,
        description="drop passages and facts scoring below this (scores are in [0, 1])",
    )
    filters: dict[str, Any] | None = Field(
        default=None, description="chunk metadata field -> value or list of values"
    )
    route: Route | None = Field(default=None, description="force semantic/factual/hybrid")
    max_cost: float = Field(default=1.0, ge=0, description="graph traversal cost budget")
    max_hops: int = Field(default=4, ge=0, description="graph traversal depth")
    max_nodes: int = Field(default=50, gt=0, description="nodes read by one traversal")
    max_facts: int = Field(default=20, gt=0, description="facts to return")
    include_structural: bool = Field(
        default=False,
        description="also return structural edges (MENTIONS, LINKS_TO, IN_SECTION) as facts",
    )
    strict: bool = Field(default=False, description="raise instead of degrading")
    explain: bool = Field(
        default=False, description="record every candidate's score parts in trace['explain']"
    )
    include_embedding: bool = Field(
        default=False,
        description="also record the query embedding in trace['explain'] (turns explain on)",
    )

    @model_validator(mode="before")
    @classmethod
    def _embedding_explains(cls, data: Any) -> Any:
        if isinstance(data, dict) and data.get("include_embedding"):
            return {**data, "explain": True}
        return data


class RankingConfig(_Model):
    """Ranking weights and constants of the unified retriever (tuned on one half of 2WikiMultihopQA
    and of MuSiQue, checked on the other).

    Attributes:
        rrf_k: Reciprocal-rank-fusion constant for the semantic route.
        lexical_share: Share of BM25 (vs dense) in the base score of graph routes.
        min_candidates: Dense and lexical candidates fetched at least, whatever ``top_k``.
        hit_seeds: Top base-score chunks that seed the walk on hybrid routes.
        hit_seed_mass: Share of the walk's restart mass on hit seeds when names were linked.
        hit_temperature: Softmax temperature over the hit seeds' base scores.
        base_share: Share of the base score added to the normalised walk score.
        described_threshold: Share of a query's words outside the names linked in it from
            which the query counts as described rather than named.
        described_base_share: ``base_share`` for described queries (their walk, seeded by
            fewer of their words, knows less).
        coverage_bonus: Bonus per extra query entity a chunk touches.
        refine_from_top: Top chunks whose documents seed the hybrid graph deep-dive.
        ppr_damping: Follow probability of the Personalized PageRank.
        ppr_iterations: Most PageRank iterations.
        ppr_prune: Each PageRank step drops entries below this share of its largest one, so
            the walk reads only the neighbourhoods that still hold mass.
        ppr_frontier: Most names a PageRank step spreads from (the heaviest): each is a read,
            and near hubs hundreds of names stay above the prune.
        title_pull: How much more a name leads to its own document than to mentions of it.
        untitled_weight: Factor on the walk's step into a name that titles no document (the
            names facts hold, :mod:`~llama_kb.ingest.fact_names`) against a title's.
        name_similarity: Lowest cosine that links a query span to a graph name by embedding.
        fact_proximity_weight: Weight of graph proximity in a fact's score.
        fact_lexical_weight: Weight of query words found in a fact's text form.
        fact_embedding_weight: Weight of the query / relation-phrase cosine.
        fact_name_words_share: Share of the lexical term matching all the query's words
            (the rest matches only the words that are not names of its entities).
        description_factor: Score factor of a fact with an end that describes (a
            lower-case phrase that is not a query entity) rather than names.
        page_proximity: Proximity of a fact read from a query entity's own page.
        hit_proximity: Proximity of a fact about or read from the first returned passage.
        hit_decay: How much ``hit_proximity`` falls per rank below the first passage.
        fact_hits: Top passages whose facts are candidates.
        rerank_depth: Fused passages a reranker reorders (when one is set).
        bridge_weight: Weight of the second hop (question + best passage,
            :mod:`~llama_kb.retrieval.bridge_hop`) against the fused ranking; 0 turns the
            hop off.
        bridge_keep: Best fused passages the hop of a described query never moves: 1, with
            ``bridge_weight`` 1.2 and ``bridge_rrf_k`` 2, lets the hop's best passage take
            second place (MuSiQue R@2 48.0 / 48.8 -> 50.4 / 50.6 on the tune / check
            halves, R@5 not lower; docs/benchmarks.md, "Stop 46").
        bridge_named_keep: The same for the hop of a named query (``bridge_names``): 2, as
            the walk from a named page usually reaches the next page by its title (2Wiki
            R@2 80.8 with 2, 74.2 with 1).
        bridge_named_weight: ``bridge_weight`` for the hop of a named query: 0.8 (MuSiQue
            tune R@5 65.7 at 0.5, 66.8 at 0.8 and 1.0; 2Wiki R@2 79.8 at 1.2).
        bridge_depth: Passages the hop searches for.
        bridge_pool: Fused passages the hop's results are fused with.
        bridge_rrf_k: The ``k`` of that reciprocal rank fusion (small: rank matters).
        bridge_words: Words of the best passage embedded with the question: those the
            question does not hold, its names first (``bridge_hop.bridge_text``). 8 had the
            best recall on the tune half of MuSiQue among 4 to 16 (README, "Stop 40"); more
            cost embedding time.
        bridge_seed_steps: PageRank steps of the ranking the hop starts from (its best
            passage without dense hits, ``bridge_hop.start``), and of the walk read ahead
            (``ranking.walk_ahead``): 1 finds as good a passage as 2 or the full walk on both
            shared sets, and takes a FalkorDB round trip or two off the slowest questions
            (docs/scale.md, "Stop 47").
        bridge_names: Queries that are not described and link at most this many names take
            the hop too, with the question less those names (the part their page does not
            answer) in place of the question. 1 adds 2.0 / 1.2 points of R@5 on the two
            halves of MuSiQue and loses none on 2Wiki, but a second embedding and dense
            search for most named queries put ``kb.retrieve`` at 1.9x a raw query at 10k
            passages (1.5x without; bound 1.5), so 0 (the default) keeps the hop to described
            queries (docs/benchmarks.md, "Stop 46").
        name_hop_weight: Weight of the hop through the best passage's names
            (:mod:`~llama_kb.retrieval.name_hop`) against the ranking; 0 turns it off. 0.6,
            chosen on the tune halves at stop 48, and on by default since stop 56: beside
            the dense hop and the question cover it adds 2.0 points of R@5 on MuSiQue (2.2 /
            1.8 on the two halves) and 0.3 on 2Wiki (R@2 +1.2), at 1.39x a raw query at 10k
            passages against 1.38x without it (docs/benchmarks.md, "Stop 56").
        name_hop_described: Whether a described query takes the name hop when it takes the
            second dense hop too (``bridge_weight`` above 0); with the dense hop off,
            described queries take the name hop whatever this says. Off, MuSiQue R@5 is 0.9
            lower and a described query does one hop's reads fewer.
        name_hop_keep: Best passages the name hop never moves.
        name_hop_rrf_k: The ``k`` of its reciprocal rank fusion.
        name_hop_depth: Chunks the name hop fuses in.
        name_hop_max_degree: Names with more chunks than this (hubs) are not followed.
        name_hop_name_weight: Weight of the cosine between the rest of the question and the
            name a chunk is reached through (its answer type).
        name_hop_own_bonus: Added when the chunk belongs to that name's own document.
        question_cover_weight: Weight, against a place's prior, of the question's words a
            described query's passage adds to those placed above it
            (:mod:`~llama_kb.retrieval.question_cover`); 0 turns the reordering off. 1.0,
            chosen on the MuSiQue tune half: R@2 / R@5 50.6 / 64.6 -> 51.9 / 66.1 there,
            50.2 / 66.8 -> 51.2 / 67.1 on the check half; 2Wiki unchanged.
        question_cover_prior_k: The ``k`` of a place's prior ``(k + 1) / (k + 1 + rank)``.

    The three fact weights are normalised by their sum, so a fact score stays in [0, 1].
    """

    rrf_k: int = Field(default=60, gt=0)
    lexical_share: float = Field(default=0.5, ge=0, le=1)
    min_candidates: int = Field(default=10, gt=0)
    hit_seeds: int = Field(default=10, ge=0)
    hit_seed_mass: float = Field(default=0.3, ge=0, le=1)
    hit_temperature: float = Field(default=0.05, gt=0)
    base_share: float = Field(default=0.03, ge=0)
    described_threshold: float = Field(default=0.7, ge=0, le=1)
    described_base_share: float = Field(default=0.3, ge=0)
    coverage_bonus: float = Field(default=0.1, ge=0)
    refine_from_top: int = Field(default=3, ge=0)
    ppr_damping: float = Field(default=0.7, gt=0, lt=1)
    ppr_iterations: int = Field(default=10, gt=0)
    ppr_prune: float = Field(default=0.01, ge=0, lt=1)
    ppr_frontier: int = Field(default=32, gt=0)
    title_pull: float = Field(default=100.0, gt=0)
    untitled_weight: float = Field(default=0.3, ge=0)
    name_similarity: float = Field(default=0.85, ge=0, le=1)
    fact_proximity_weight: float = Field(default=0.3, ge=0)
    fact_lexical_weight: float = Field(default=0.2, ge=0)
    fact_embedding_weight: float = Field(default=0.5, ge=0)
    fact_name_words_share: float = Field(default=0.5, ge=0, le=1)
    description_factor: float = Field(default=0.85, ge=0, le=1)
    page_proximity: float = Field(default=0.8, ge=0, le=1)
    hit_proximity: float = Field(default=0.9, ge=0, le=1)
    hit_decay: float = Field(default=0.05, ge=0, le=0.2)
    fact_hits: int = Field(default=5, ge=0)
    rerank_depth: int = Field(default=20, gt=0)
    bridge_weight: float = Field(default=1.2, ge=0)
    bridge_keep: int = Field(default=1, ge=0)
    bridge_named_keep: int = Field(default=2, ge=0)
    bridge_named_weight: float = Field(default=0.8, ge=0)
    bridge_depth: int = Field(default=10, gt=0)
    bridge_pool: int = Field(default=30, gt=0)
    bridge_rrf_k: float = Field(default=2.0, gt=0)
    bridge_words: int = Field(default=8, gt=0)
    bridge_seed_steps: int = Field(default=1, gt=0)
    bridge_names: int = Field(default=0, ge=0)
    name_hop_weight: float = Field(default=0.6, ge=0)
    name_hop_described: bool = True
    name_hop_keep: int = Field(default=1, ge=0)
    name_hop_rrf_k: float = Field(default=2.0, gt=0)
    name_hop_depth: int = Field(default=10, gt=0)
    name_hop_max_degree: int = Field(default=100, gt=0)
    name_hop_name_weight: float = Field(default=1.0, ge=0)
    name_hop_own_bonus: float = Field(default=0.1, ge=0)
    question_cover_weight: float = Field(default=1.0, ge=0)
    question_cover_prior_k: float = Field(default=1.0, ge=0)

    @model_validator(mode="after")
    def _some_fact_weight(self) -> RankingConfig:
        if self.fact_proximity_weight + self.fact_lexical_weight + self.fact_embedding_weight <= 0:
            raise ValueError("at least one fact weight must be positive")
        return self


class LimitsConfig(_Model):
    """Resource limits on ingested input; anything above a limit is refused and reported.

    Attributes:
        max_file_bytes: Largest file read (bytes on disk).
        max_decompressed_bytes: Largest decompressed content of a ``.docx`` or ``.pdf``
            (the zip-bomb guard); also the largest single compressed stream in a PDF.
        max_compression_ratio: Highest decompressed/compressed ratio of a ``.docx`` archive.
        max_text_chars: Longest text of one document, in characters.
        max_json_depth: Deepest nesting of arrays and objects in one JSON record.
        max_records_per_file: Most records (JSONL lines) read from one file.
        follow_symlinks_outside: Follow symbolic links that lead outside the walked directory.
    """

    max_file_bytes: int = Field(default=100 * 2**20, gt=0)
    max_decompressed_bytes: int = Field(default=200 * 2**20, gt=0)
    max_compression_ratio: float = Field(default=200.0, gt=1)
    max_text_chars: int = Field(default=5_000_000, gt=0)
    max_json_depth: int = Field(default=64, gt=0)
    max_records_per_file: int = Field(default=1_000_000, gt=0)
    follow_symlinks_outside: bool = False


class SecretsConfig(_Model):
    """Secret scanning of ingested documents and loaded knowledge.

    Modes: ``off`` (no scan), ``warn`` (ingest, report a warning), ``redact`` (replace each
    secret with ``[REDACTED:<type>]``, report a warning), ``reject`` (refuse the input and
    report a failure). Reports name the file, line and secret type, never the secret.

    Attributes:
        documents: Mode for files ingested with ``kb.ingest``.
        knowledge: Mode for ``kb.load_knowledge`` items (``redact`` rejects there too: a
            knowledge item is structured data that is not safe to rewrite).
        entropy: Also flag quoted high-entropy strings (detect-secrets' entropy plugins).
    """

    documents: Literal["off", "warn", "redact", "reject"] = "redact"
    knowledge: Literal["off", "warn", "redact", "reject"] = "reject"
    entropy: bool = True


class AccessConfig(_Model):
    """Who may read what (seed 001; see :mod:`llama_kb.access`).

    Attributes:
        default: Access key of documents ingested without one (``public``,
            ``org:<org id>[#group,...]``, ``user:<user id>``).
        require_principal: Refuse queries that do not say who asks (else they read public
            records only).
    """

    default: str = "public"
    require_principal: bool = False

    @model_validator(mode="after")
    def _valid_default(self) -> AccessConfig:
        try:
            access_key(self.default)
        except ConfigurationError as e:
            raise ValueError(str(e)) from None
        return self


class KBConfig(_Model):
    """Everything needed to open a knowledge base.

    Args:
        path: The knowledge base directory (local state: manifest, embedded stores).
        collection: Name of the Chroma collection (and FalkorDB graph prefix).
        chunking: Chunk size and overlap.
        chroma: A Chroma server; ``None`` keeps vectors in ``path``.
        neo4j: A Neo4j server for the graph; ``None`` means embedded unless ``falkordb`` is set.
        falkordb: A FalkorDB server for the graph.
        retrieval: Query-time defaults (:class:`QueryOptions`).
        ranking: Ranking weights (:class:`RankingConfig`).
        embed_batch_size: Texts embedded per model call during ingestion.
        limits: Resource limits on ingested input (:class:`LimitsConfig`).
        secrets: Secret scanning modes (:class:`SecretsConfig`).
        cache_size: Query results kept per process, keyed by query, options and index
            revision (a write invalidates them); 0 disables the cache.
    """

    path: Path = Path(DEFAULT_KB_DIR)
    collection: str = Field(
        default="llama_kb", pattern=r"^[A-Za-z0-9][A-Za-z0-9._-]{1,62}[A-Za-z0-9]$"
    )
    chunking: ChunkingConfig = ChunkingConfig()
    chroma: ChromaServerConfig | None = None
    neo4j: Neo4jConfig | None = None
    falkordb: FalkorDBConfig | None = None
    retrieval: QueryOptions = QueryOptions()
    ranking: RankingConfig = RankingConfig()
    embed_batch_size: int = Field(default=64, gt=0)
    limits: LimitsConfig = LimitsConfig()
    secrets: SecretsConfig = SecretsConfig()
    cache_size: int = Field(default=256, ge=0)
    access: AccessConfig = AccessConfig()

    @model_validator(mode="after")
    def _one_graph_server(self) -> KBConfig:
        if self.neo4j is not None and self.falkordb is not None:
            raise ValueError("configure either neo4j or falkordb as the graph store, not both")
        return self

    @classmethod
    def build(cls, **values: Any) -> KBConfig:
        """Validate ``values`` into a config, raising :class:`ConfigurationError` on error."""
        try:
            return cls(**values)
        except ValidationError as e:
            raise ConfigurationError(_describe(e)) from e

    @classmethod
    def from_env(
        cls, path: str | Path | None = None, env: Mapping[str, str] | None = None, **overrides: Any
    ) -> KBConfig:
        """Read server settings from the environment; unset variables mean embedded stores.

        Recognised: ``LLAMA_KB_DIR``, ``CHROMA_HOST``, ``CHROMA_PORT``, ``CHROMA_SSL``,
        ``CHROMA_TENANT``, ``CHROMA_DATABASE``, ``FALKORDB_URL``, ``NEO4J_URI``,
        ``NEO4J_USERNAME``, ``NEO4J_PASSWORD``, ``NEO4J_DATABASE``.

        Args:
            path: Knowledge base directory; defaults to ``LLAMA_KB_DIR`` or ``./.llama_kb``.
            env: Mapping to read instead of ``os.environ`` (useful in tests).
            **overrides: Explicit values that win over the environment.
        """
        env = os.environ if env is None else env
        values: dict[str, Any] = {"path": path or env.get("LLAMA_KB_DIR") or DEFAULT_KB_DIR}
        if env.get("CHROMA_HOST"):
            values["chroma"] = {
                "host": env["CHROMA_HOST"],
                "port": env.get("CHROMA_PORT", "8000"),
                "ssl": env.get("CHROMA_SSL", "false").lower() in {"1", "true", "yes"},
                "tenant": env.get("CHROMA_TENANT", "default_tenant"),
                "database": env.get("CHROMA_DATABASE", "default_database"),
            }
        if env.get("NEO4J_URI"):
            if not env.get("NEO4J_PASSWORD"):
                raise ConfigurationError("NEO4J_URI is set but NEO4J_PASSWORD is not")
            values["neo4j"] = {
                "uri": env["NEO4J_URI"],
                "username": env.get("NEO4J_USERNAME", "neo4j"),
                "password": env["NEO4J_PASSWORD"],
                "database": env.get("NEO4J_DATABASE", "neo4j"),
            }
        if env.get("FALKORDB_URL"):
            values["falkordb"] = {"url": env["FALKORDB_URL"]}
        values.update(overrides)
        return cls.build(**values)

    @classmethod
    def from_file(cls, file: str | Path) -> KBConfig:
        """Load a config from a JSON or YAML file (YAML needs PyYAML)."""
        file = Path(file)
        try:
            text = file.read_text(encoding="utf-8")
        except OSError as e:
            raise ConfigurationError(f"cannot read config file {file}: {e.strerror}") from e
        if file.suffix.lower() in {".yaml", ".yml"}:
            try:
                import yaml
            except ImportError as e:
                raise ConfigurationError(
                    f"{file} is YAML; install PyYAML (pip install pyyaml) or use JSON"
                ) from e
            data = yaml.safe_load(text)
        else:
            try:
                data = json.loads(text)
            except json.JSONDecodeError as e:
                raise ConfigurationError(f"{file} is not valid JSON: {e}") from e
        if not isinstance(data, dict):
            raise ConfigurationError(f"{file} must hold a mapping of settings")
        return cls.build(**data)

    def public_dict(self) -> dict[str, Any]:
        """Settings safe to write to disk or logs: secrets are masked."""
        return json.loads(self.model_dump_json())


def _describe(error: ValidationError) -> str:
    parts = []
    for item in error.errors():
        where = ".".join(str(p) for p in item["loc"]) or "config"
        parts.append(f"{where}: {item['msg']}")
    return "invalid configuration: " + "; ".join(parts)
