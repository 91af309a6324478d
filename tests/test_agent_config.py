"""Agent knowledge declared in YAML (seed 004): sources, incremental sync, query controls."""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest
from conftest import EXAMPLE_DOCS, CountingEmbedding

from llama_kb.agent_config import AgentKnowledge, load_agent_config
from llama_kb.errors import ConfigurationError

CONFIG = """\
agent_id: pipeline_expert
description: Knows the ingestion pipeline
model: {provider: openai, api_key: "${OPENAI_API_KEY}"}
knowledge:
  - path: "./knowledge/*.md"
    description: Component notes
  - path: "./knowledge/team.txt"
knowledge_options:
  max_results: 2
  relevance_threshold: 0.2
"""


@pytest.fixture
def agent_file(tmp_path: Path) -> Path:
    shutil.copytree(EXAMPLE_DOCS, tmp_path / "knowledge")
    path = tmp_path / "agent.yaml"
    path.write_text(CONFIG, encoding="utf-8")
    return path


def test_config_is_validated(tmp_path: Path, agent_file: Path) -> None:
    config = load_agent_config(agent_file)
    assert config.agent_id == "pipeline_expert"
    assert [s.path for s in config.knowledge] == ["./knowledge/*.md", "./knowledge/team.txt"]
    bad = tmp_path / "bad.yaml"
    bad.write_text("agent_id: x\nknowledge_options: {max_results: 0}\n", encoding="utf-8")
    with pytest.raises(ConfigurationError, match="max_results"):
        load_agent_config(bad)


def test_sync_embeds_only_changed_files_and_honours_query_controls(
    agent_file: Path, embedding
) -> None:
    counting = CountingEmbedding(inner=embedding)
    with AgentKnowledge.open(agent_file, embedding=counting) as agent:
        assert agent.kb.config.path == agent_file.parent / ".llama-kb" / "pipeline_expert"
        assert len(agent.sources()) == 5
        first = agent.sync()
        assert len(first.added) == 5 and counting.texts_embedded > 0
        embedded = counting.texts_embedded
        assert len(agent.sync().unchanged) == 5 and counting.texts_embedded == embedded
        (agent_file.parent / "knowledge" / "team.txt").write_text("Ada leads the team.\n")
        third = agent.sync()
        assert len(third.updated) == 1 and len(third.unchanged) == 4
        # the changed chunk, and the new name its fact makes ("Ada", embedded for fuzzy linking)
        assert counting.texts_embedded == embedded + 2

        hits = agent.search("Which model embeds the chunks?")
        assert 1 <= len(hits) <= 2 and all(h.score >= 0.2 for h in hits)
        assert agent.search("Which model embeds the chunks?", relevance_threshold=0.99) == []
        assert len(agent.retrieve("What does the Vector Indexer do?").unstructured) <= 2


def test_each_source_ingests_with_its_access(tmp_path: Path, agent_file: Path, embedding) -> None:
    text = agent_file.read_text().replace(
        '  - path: "./knowledge/team.txt"',
        '  - path: "./knowledge/team.txt"\n    access: {level: individual, userId: ada}',
    )
    agent_file.write_text(text, encoding="utf-8")
    with AgentKnowledge.open(agent_file, embedding=embedding) as agent:
        assert agent.sync().ok
        stored = {Path(d.source).name: d.access for d in agent.kb.documents()}
        assert stored["team.txt"] == "user:ada"
        assert {a for name, a in stored.items() if name != "team.txt"} == {"public"}
    bad = tmp_path / "bad.yaml"
    bad.write_text("agent_id: x\nknowledge: [{path: a.md, access: {level: galaxy}}]\n")
    with pytest.raises(ConfigurationError, match="unknown access level"):
        load_agent_config(bad)
