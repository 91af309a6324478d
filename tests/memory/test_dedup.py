"""Deduplication and merge within one access scope, with the real offline embedding.

The only double is the LLM: it answers the extraction, then each dedup decision.
"""

from __future__ import annotations

from contextlib import closing

import pytest
from conftest import ScriptedLLMDouble
from memory_helpers import decision, items

from llama_kb import ConfigurationError, KnowledgeBase
from llama_kb.access import Principal
from llama_kb.memory import MemoryAudit, RememberResult

ALICE = Principal(user_id="alice", org_id="acme")
CHAT = [
    {"id": "a", "role": "user", "content": "I prefer dark mode in my code editor."},
    {"id": "b", "role": "user", "content": "At Acme the on-call rotation changes every Monday."},
]
DARK = "Alice prefers dark mode in her code editor."
ON_CALL = "Acme's on-call rotation changes every Monday."


def _remember(
    kb: KnowledgeBase, answers: list[str], conversation_id: str, **options: object
) -> tuple[RememberResult, ScriptedLLMDouble]:
    llm = ScriptedLLMDouble(answers=answers)
    result = kb.remember(
        CHAT,
        principal=options.pop("principal", ALICE),
        llm=llm,
        conversation_id=conversation_id,
        **options,
    )
    assert llm.answers == [], "every scripted answer is used"
    return result, llm


def _first(kb: KnowledgeBase) -> str:
    result, _ = _remember(kb, [items((DARK, "individual", ["a"]))], "c1")
    return result.outcomes[0].piece_id


def test_an_exact_duplicate_is_existing_without_asking_the_llm(kb: KnowledgeBase) -> None:
    piece_id = _first(kb)
    result, llm = _remember(kb, [items((DARK, "individual", ["a"]))], "c2")
    assert [(o.action, o.piece_id) for o in result.outcomes] == [("existing", piece_id)]
    assert len(llm.prompts) == 1 and kb.knowledge.pieces.count() == 1
    with closing(MemoryAudit(kb.config.path)) as audit:
        assert [p.conversation_id for p in audit.provenance(piece_id)] == ["c1", "c2"]


def test_a_paraphrase_is_a_candidate_and_the_llm_calls_it_existing(kb: KnowledgeBase) -> None:
    piece_id = _first(kb)
    paraphrase = "Alice likes to use dark mode in the code editor."
    result, llm = _remember(
        kb, [items((paraphrase, "individual", ["a"])), decision("existing", piece_id)], "c2"
    )
    assert [(o.action, o.piece_id) for o in result.outcomes] == [("existing", piece_id)]
    assert f"piece_id={piece_id} (similarity 0.9" in llm.prompts[1]
    assert kb.knowledge.pieces.count() == 1


def test_a_merge_keeps_provenance_of_both_and_an_audit_record(kb: KnowledgeBase) -> None:
    piece_id = _first(kb)
    detail = "Alice prefers dark mode in her code editor, with a large font."
    merged = "Alice prefers dark mode with a large font in her code editor."
    result, _ = _remember(
        kb,
        [items((detail, "individual", ["a", "b"])), decision("merge", piece_id, merged)],
        "c2",
    )
    assert [(o.action, o.piece_id) for o in result.outcomes] == [("merged", piece_id)]
    piece = kb.knowledge.pieces.get([piece_id])[piece_id]
    assert (piece.content, piece.permissions) == (merged, "user:alice")
    with closing(MemoryAudit(kb.config.path)) as audit:
        sources = [(p.conversation_id, p.message_ids) for p in audit.provenance(piece_id)]
        assert sources == [("c1", ("a",)), ("c2", ("a", "b"))]
        record = audit.records("c2")[0]
    assert (record.action, record.before, record.after) == ("merged", DARK, merged)
    assert (record.reason, record.model, record.access) == (
        "merge!",
        "scripted-llm-double",
        "user:alice",
    )
    # the merged text is what search finds now
    hits = kb.retrieve_knowledge("large font editor", principal=ALICE).pieces
    assert hits[0][0].content == merged


def test_a_contradiction_is_recorded_and_nothing_is_overwritten(kb: KnowledgeBase) -> None:
    first, _ = _remember(kb, [items((ON_CALL, "organization", ["b"]))], "c1")
    old_id = first.outcomes[0].piece_id
    thursday = "Acme's on-call rotation changes every Thursday."
    result, _ = _remember(
        kb, [items((thursday, "organization", ["b"])), decision("contradiction", old_id)], "c2"
    )
    outcome = result.outcomes[0]
    assert (outcome.action, outcome.related_piece_id) == ("contradiction", old_id)
    stored = kb.knowledge.pieces.get([old_id, outcome.piece_id])
    assert stored[old_id].content == ON_CALL and stored[outcome.piece_id].content == thursday
    with closing(MemoryAudit(kb.config.path)) as audit:
        record = audit.records("c2")[0]
    assert (record.action, record.piece_id, record.related_piece_id) == (
        "contradiction",
        outcome.piece_id,
        old_id,
    )
    assert (record.before, record.after) == (ON_CALL, thursday)


def test_a_near_duplicate_in_another_scope_never_merges(kb: KnowledgeBase) -> None:
    _remember(kb, [items((ON_CALL, "organization", ["b"]))], "c1")
    # the same statement as alice's own note, and for another organization: no candidate,
    # so no decision is asked (the script has no answer for one)
    own, _ = _remember(kb, [items((ON_CALL, "individual", ["b"]))], "c2")
    other, _ = _remember(
        kb, [items((ON_CALL, "organization", ["b"]))], "c3", principal="carol@globex"
    )
    actions = [(o.action, o.access) for o in (*own.outcomes, *other.outcomes)]
    assert actions == [("added", "user:alice"), ("added", "org:globex")]
    assert kb.knowledge.pieces.count() == 3


def test_the_threshold_is_configurable(kb: KnowledgeBase) -> None:
    _first(kb)
    paraphrase = "Alice likes to use dark mode in the code editor."
    result, _ = _remember(kb, [items((paraphrase, "individual", ["a"]))], "c2", threshold=0.99)
    assert [o.action for o in result.outcomes] == ["added"]
    with pytest.raises(ConfigurationError, match="threshold"):
        kb.remember(CHAT, principal=ALICE, llm=ScriptedLLMDouble(answers=[]), threshold=0)
