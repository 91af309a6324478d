"""KnowledgeProvider routing, section formatters, KnowledgeFormatter, byte-for-byte output."""

from __future__ import annotations

import json
import subprocess
import sys
import textwrap
from pathlib import Path

import jinja2
import pytest
from knowledge_helpers import REPO, SEED_EXAMPLE, SEED_QUERY, SEED_SECTIONS, team_document

from llama_kb import ConfigurationError, KnowledgeBase
from llama_kb.knowledge import (
    FormatStringFormatter,
    KnowledgeFormatter,
    KnowledgePiece,
    KnowledgeProvider,
    KnowledgeSection,
    RetrievalResult,
    load_knowledge,
    retrieve_knowledge,
)
from llama_kb.knowledge.model import EntityMetadata
from llama_kb.knowledge.retrieval import GraphContextItem


@pytest.fixture
def seed_kb(kb: KnowledgeBase) -> KnowledgeBase:
    assert load_knowledge(kb, SEED_EXAMPLE).ok
    return kb


@pytest.fixture
def team_kb(kb: KnowledgeBase) -> KnowledgeBase:
    assert load_knowledge(kb, team_document()).ok
    return kb


# -- the seed's own example ----------------------------------------------------------------------


def test_seed_example_as_alice(seed_kb: KnowledgeBase) -> None:
    sections = KnowledgeProvider(seed_kb, entity_id="user:alice")(SEED_QUERY)
    assert "specialization: turbomachinery" in sections["user_profile"]
    assert "team: aero" in sections["user_profile"]
    assert sections["instructions"].startswith(
        "[procedure] Initialize transient LES from converged RANS"
    )
    assert sections == SEED_SECTIONS
    assert list(sections) == sorted(sections)


_PROCESS_SCRIPT = """
import json, sys
from llama_kb import KnowledgeBase
from llama_kb.knowledge import KnowledgeProvider, load_knowledge
with KnowledgeBase.open(sys.argv[1]) as kb:
    assert load_knowledge(kb, sys.argv[2]).ok
    sections = KnowledgeProvider(kb, entity_id="user:alice")(sys.argv[3])
sys.stdout.write(json.dumps(sections, ensure_ascii=False))
"""


def test_same_output_byte_for_byte_across_processes(seed_kb: KnowledgeBase, tmp_path: Path) -> None:
    script = textwrap.dedent(_PROCESS_SCRIPT)
    runs = [
        subprocess.Popen(
            [sys.executable, "-c", script, str(tmp_path / name), str(SEED_EXAMPLE), SEED_QUERY],
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            cwd=REPO,
        )
        for name in ("first", "second")
    ]
    outputs = []
    for process in runs:
        out, err = process.communicate(timeout=120)
        assert process.returncode == 0, err.decode()
        outputs.append(out)
    in_process = KnowledgeProvider(seed_kb, entity_id="user:alice")(SEED_QUERY)
    assert outputs[0] == outputs[1] == json.dumps(in_process, ensure_ascii=False).encode()


# -- routing -------------------------------------------------------------------------------------


def test_routing_rules(team_kb: KnowledgeBase) -> None:
    provider = KnowledgeProvider(team_kb, entity_id="user:alice", top_k=3)
    sections = provider.sections(SEED_QUERY)
    assert list(sections) == sorted(sections)
    profile = sections["user_profile"]
    assert profile.metadata == {"specialization": "turbomachinery", "team": "aero"}
    assert profile.global_metadata == {"organization": "NASA"}
    # a relation from the entity without a linked piece goes to user_profile ...
    assert [r.relation_type for r in profile.relationships] == ["MEMBER_OF"]
    # ... one that links a piece goes where the piece goes; other relations go to context
    assert [r.relation_type for r in sections["instructions"].relationships] == ["SPECIALIZES_IN"]
    assert [r.relation_type for r in sections["context"].relationships] == [
        "COLLABORATES_WITH",
        "USES",
    ]
    for name, section in sections.items():
        assert all(piece.info_type == name for piece, _ in section.pieces)

    text = provider(SEED_QUERY)
    assert text["user_profile"] == (
        "specialization: turbomachinery\nteam: aero\n\n"
        "organization: NASA\n\n"
        "MEMBER_OF → team:aero (Aero team)"
    )
    assert text["instructions"].startswith("[procedure] Initialize transient LES")
    assert "user:bob COLLABORATES_WITH → user:alice (jet noise study)" in text["context"]
    assert "bob-fwh" not in json.dumps(text) and "FW-H" not in json.dumps(text)


def test_custom_routing_targets(team_kb: KnowledgeBase) -> None:
    provider = KnowledgeProvider(
        team_kb,
        entity_id="user:alice",
        metadata_info_type="profile",
        entity_edge_info_type="about_me",
        default_edge_info_type="background",
        graph_traversal_depth=1,
    )
    sections = provider.sections("")
    assert sections["profile"].metadata["team"] == "aero"
    assert [r.relation_type for r in sections["about_me"].relationships] == ["MEMBER_OF"]
    assert [r.relation_type for r in sections["background"].relationships] == ["COLLABORATES_WITH"]


def test_section_formatters(team_kb: KnowledgeBase) -> None:
    def shout(section: KnowledgeSection) -> str:
        return f"{section.info_type.upper()}: {len(section.pieces)} pieces"

    provider = KnowledgeProvider(
        team_kb,
        entity_id="user:alice",
        formatters={
            "user_profile": "Profile of the user:\n{text}",
            "instructions": (
                "{% for p in pieces %}{{ loop.index }}. {{ p.content }} "
                "({{ p.knowledge_type }}){% endfor %}"
            ),
            "context": shout,
            "skills": jinja2.Template("{{ pieces | length }} skill(s)"),
        },
    )
    text = provider(SEED_QUERY)
    assert text["user_profile"].startswith("Profile of the user:\nspecialization: turbomachinery")
    assert text["instructions"].startswith(
        "1. Initialize transient LES from converged RANS -- cuts spin-up by ~40% (procedure)"
    )
    assert text["context"].startswith("CONTEXT: ")
    assert text["skills"] == "1 skill(s)"
    assert provider(SEED_QUERY) == text


def test_bad_formatters_are_reported(team_kb: KnowledgeBase) -> None:
    with pytest.raises(ConfigurationError, match="must be a callable, a Jinja2 template"):
        KnowledgeProvider(team_kb, formatters={"context": 42})
    provider = KnowledgeProvider(
        team_kb, entity_id="user:alice", formatters={"user_profile": "{nope}"}
    )
    with pytest.raises(ConfigurationError, match="unknown field 'nope'"):
        provider(SEED_QUERY)
    strict = KnowledgeProvider(
        team_kb, entity_id="user:alice", formatters={"user_profile": "{{ nope }}"}
    )
    with pytest.raises(jinja2.UndefinedError):
        strict(SEED_QUERY)
    assert FormatStringFormatter("{{literal}} {info_type}")(KnowledgeSection("x")) == (
        "{literal} x"
    )


# -- KnowledgeFormatter --------------------------------------------------------------------------


def _result() -> RetrievalResult:
    def piece(pid: str, content: str, kind: str, tags: list[str]) -> KnowledgePiece:
        return KnowledgePiece(piece_id=pid, content=content, knowledge_type=kind, tags=tags)

    return RetrievalResult(
        query="q",
        entity_id="user:alice",
        metadata=EntityMetadata(
            entity_id="user:alice",
            entity_type="user",
            properties={"team": "aero", "specialization": "turbomachinery", "langs": ["c", "py"]},
        ),
        global_metadata=EntityMetadata(
            entity_id="global", entity_type="global", properties={"organization": "NASA"}
        ),
        pieces=[
            (piece("smag", "Smagorinsky constant of 0.1 works", "fact", ["les"]), 0.5),
            (piece("les", "Initialize LES from RANS", "procedure", ["les", "rans"]), 1.0),
            (piece("abc", "Same score, earlier id", "note", []), 0.5),
        ],
        graph_context=[
            GraphContextItem(
                "USES",
                "user:alice",
                "technique:dyn",
                "Alice",
                "Dynamic",
                1,
                1.0,
                from_entity=True,
                properties={"description": "15% better"},
            ),
            GraphContextItem(
                "SPECIALIZES_IN",
                "user:alice",
                "technique:les",
                "Alice",
                "LES",
                1,
                1.0,
                from_entity=True,
            ),
            GraphContextItem(
                "USES", "technique:les", "technique:abc", "LES", "technique:abc", 2, 0.5
            ),
        ],
    )


def test_formatter_output_is_exactly_the_seed_layout() -> None:
    assert KnowledgeFormatter().format(_result()) == (
        "[Metadata]\n"
        'langs: ["c", "py"]\n'
        "specialization: turbomachinery\n"
        "team: aero\n"
        "\n"
        "[Global Metadata]\n"
        "organization: NASA\n"
        "\n"
        "[Knowledge]\n"
        "[procedure] Initialize LES from RANS\n"
        "  Tags: les, rans\n"
        "---\n"
        "[note] Same score, earlier id\n"
        "---\n"
        "[fact] Smagorinsky constant of 0.1 works\n"
        "  Tags: les\n"
        "\n"
        "[Relationships]\n"
        "SPECIALIZES_IN → technique:les (LES)\n"
        "technique:les USES → technique:abc\n"
        "USES → technique:dyn (15% better)"
    )


def test_formatter_options() -> None:
    text = KnowledgeFormatter(
        section_delimiter="\n====\n",
        item_delimiter="\n~\n",
        include_tags=False,
        include_scores=True,
    ).format(_result())
    assert "Tags:" not in text and "\n====\n[Knowledge]\n" in text
    assert "[procedure] Initialize LES from RANS\n  Score: 1.000\n~\n[note]" in text
    empty = RetrievalResult(query="q")
    assert KnowledgeFormatter().format(empty) == ""


def test_formatted_retrieval_has_no_timestamps(team_kb: KnowledgeBase) -> None:
    result = retrieve_knowledge(team_kb, SEED_QUERY, entity_id="user:alice")
    text = KnowledgeFormatter(include_scores=True).format(result)
    assert all(p.created_at is not None for p, _ in result.pieces)
    assert str(result.pieces[0][0].created_at.year) not in text
