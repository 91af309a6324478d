"""Agent-level knowledge declared in YAML (seed 004).

An agent config names the files (paths or globs, relative to the config file) the agent knows
and how much of it to use per query::

    agent_id: financial_advisor
    description: Financial advisor with expertise in investment strategies
    knowledge:
      - path: ./knowledge/*.md
        description: Basic investment concepts and terminology
      - path: ./knowledge/portfolio_strategies.pdf
    knowledge_options:
      max_results: 5
      relevance_threshold: 0.3

Each agent gets its own knowledge base directory (default ``.llama-kb/<agent_id>`` next to the
config). :meth:`AgentKnowledge.sync` ingests the sources; the ingest manifest makes files that
did not change cost nothing, so embeddings are regenerated only for changed files. Other keys
(``model``, ``system_message``, ...) are accepted and ignored; ``${VAR}`` is not expanded.
"""

from __future__ import annotations

import glob
from pathlib import Path
from typing import Any

from pydantic import BaseModel, ConfigDict, Field, ValidationError

from llama_kb.access import OptionalAccessKey
from llama_kb.errors import ConfigurationError, MissingDependencyError
from llama_kb.knowledge_base import KnowledgeBase
from llama_kb.retrieval.payload import FusedContext
from llama_kb.types import IngestReport, SearchHit

__all__ = ["AgentConfig", "AgentKnowledge", "KnowledgeOptions", "KnowledgeSource"]


class KnowledgeSource(BaseModel):
    """One file or glob the agent knows, relative to the config file, and who may read it
    (an access key or seed 001's permission mapping; default: the knowledge base's default)."""

    model_config = ConfigDict(extra="forbid")
    path: str = Field(min_length=1)
    description: str | None = None
    access: OptionalAccessKey = None


class KnowledgeOptions(BaseModel):
    """Query-time controls (seed 004)."""

    model_config = ConfigDict(extra="forbid")
    max_results: int = Field(default=5, ge=1, le=100)
    relevance_threshold: float | None = Field(default=None, ge=-1.0, le=1.0)


class AgentConfig(BaseModel):
    """An agent's declared knowledge."""

    model_config = ConfigDict(extra="ignore")
    agent_id: str = Field(pattern=r"^[A-Za-z0-9][A-Za-z0-9_.-]{0,63}$")
    description: str | None = None
    knowledge: list[KnowledgeSource] = Field(default_factory=list)
    knowledge_options: KnowledgeOptions = KnowledgeOptions()
    kb: str | None = Field(
        default=None, description="knowledge base directory, relative to the config"
    )


def load_agent_config(path: str | Path) -> AgentConfig:
    """Read and validate an agent config (YAML or JSON).

    Raises:
        MissingDependencyError: PyYAML is not installed.
        ConfigurationError: The file is unreadable or invalid.
    """
    try:
        import yaml
    except ImportError as e:
        raise MissingDependencyError("pyyaml", "yaml", "Reading agent configs") from e
    try:
        data = yaml.safe_load(Path(path).read_text(encoding="utf-8"))
    except (OSError, yaml.YAMLError) as e:
        raise ConfigurationError(f"cannot read agent config {path}: {e}") from e
    try:
        return AgentConfig.model_validate(data)
    except ValidationError as e:
        raise ConfigurationError(f"invalid agent config {path}: {e}") from e


class AgentKnowledge:
    """An agent's own view of knowledge: its config plus its knowledge base.

    Use :meth:`open`; close it (or use ``with``) when done.
    """

    def __init__(self, config: AgentConfig, base_dir: Path, kb: KnowledgeBase) -> None:
        self.config = config
        self.base_dir = base_dir
        self.kb = kb

    @classmethod
    def open(
        cls, path: str | Path, kb_dir: str | Path | None = None, **kb_options: Any
    ) -> AgentKnowledge:
        """Load the config at ``path`` and open (or create) the agent's knowledge base."""
        config_path = Path(path).expanduser().resolve()
        config = load_agent_config(config_path)
        base = config_path.parent
        root = Path(kb_dir) if kb_dir else base / (config.kb or f".llama-kb/{config.agent_id}")
        return cls(config, base, KnowledgeBase.open(root, **kb_options))

    def sources(self) -> list[Path]:
        """The files the config declares (globs expanded, sorted, existing files only)."""
        return sorted(self._access_by_file())

    def _access_by_file(self) -> dict[Path, str | None]:
        found: dict[Path, str | None] = {}
        for source in self.config.knowledge:
            pattern = str(self.base_dir / source.path)
            for name in glob.glob(pattern, recursive=True):
                path = Path(name)
                if not path.is_file():
                    continue
                if path in found and found[path] != source.access:
                    raise ConfigurationError(
                        f"{path} is declared by two knowledge sources with different access "
                        f"({found[path]} and {source.access}); give it one"
                    )
                found[path] = source.access
        return found

    def sync(self, show_progress: bool = False) -> IngestReport:
        """Ingest the declared files, each source with its ``access``; unchanged files are
        skipped, vanished ones removed."""
        files = self._access_by_file()
        if not files:
            raise ConfigurationError(
                f"agent {self.config.agent_id!r} declares no existing knowledge files "
                f"(looked for {[s.path for s in self.config.knowledge]} under {self.base_dir})"
            )
        groups: dict[str | None, list[Path]] = {}
        for path in sorted(files):
            groups.setdefault(files[path], []).append(path)
        report = IngestReport()
        for access, group in groups.items():
            report.merge(
                self.kb.ingest(group, prune=True, show_progress=show_progress, access=access)
            )
        return report

    def defaults(self) -> dict[str, Any]:
        """``top_k`` / ``min_score`` defaults from ``knowledge_options``."""
        opts = self.config.knowledge_options
        return {"top_k": opts.max_results, "min_score": opts.relevance_threshold}

    def search(
        self, query: str, max_results: int | None = None, relevance_threshold: float | None = None
    ) -> list[SearchHit]:
        """Passages for ``query``: at most ``max_results``, each scoring at least the threshold."""
        opts = self.config.knowledge_options
        floor = opts.relevance_threshold if relevance_threshold is None else relevance_threshold
        hits = self.kb.search(query, top_k=max_results or opts.max_results)
        return [h for h in hits if floor is None or h.score >= floor]

    def retrieve(self, query: str, **options: Any) -> FusedContext:
        """Unified retrieval with the agent's defaults (``options`` override them)."""
        return self.kb.retrieve(query, **{**self.defaults(), **options})

    def close(self) -> None:
        """Close the knowledge base."""
        self.kb.close()

    def __enter__(self) -> AgentKnowledge:
        return self

    def __exit__(self, *exc_info: object) -> None:
        self.close()
