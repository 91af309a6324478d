"""Secret detection: recall and false positives on the planted corpus, the four modes on
documents and knowledge, and reports that never carry a secret."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from hardening_helpers import snapshot
from llama_index.core.base.embeddings.base import BaseEmbedding

from benchmarks.secret_check_corpus import CHECK_HARMLESS, CHECK_SECRETS
from benchmarks.secret_corpus import HARMLESS, HELDOUT_HARMLESS, HELDOUT_SECRETS, SECRETS, Case
from benchmarks.secret_holdout3_corpus import HOLDOUT3_HARMLESS, HOLDOUT3_SECRETS
from benchmarks.secret_holdout4_corpus import HOLDOUT4_HARMLESS, HOLDOUT4_SECRETS
from benchmarks.secret_holdout5_corpus import HOLDOUT5_HARMLESS, HOLDOUT5_SECRETS
from benchmarks.secret_holdout6_corpus import HOLDOUT6_HARMLESS, HOLDOUT6_SECRETS
from benchmarks.secret_holdout7_corpus import HOLDOUT7_HARMLESS, HOLDOUT7_SECRETS
from benchmarks.secret_holdout8_corpus import HOLDOUT8_HARMLESS, HOLDOUT8_SECRETS
from benchmarks.secret_holdout9_corpus import HOLDOUT9_HARMLESS, HOLDOUT9_SECRETS
from benchmarks.secret_holdout10_corpus import HOLDOUT10_HARMLESS, HOLDOUT10_SECRETS
from benchmarks.secret_holdout11_corpus import HOLDOUT11_HARMLESS, HOLDOUT11_SECRETS
from benchmarks.secrets_bench import evaluate
from llama_kb import KnowledgeBase
from llama_kb.config import KBConfig, SecretsConfig
from llama_kb.ingest.guards import SecretScanner

SECRET_LINE = "export STRIPE_KEY=sk_live_4Qz8vR2mXw9LpT3nKb7YcD1s"
SECRET_VALUE = "sk_live_4Qz8vR2mXw9LpT3nKb7YcD1s"


def test_recall_and_false_positives_on_the_planted_corpus() -> None:
    assert len(SECRETS) >= 60 and len(HARMLESS) >= 40
    assert len({c.kind for c in SECRETS}) >= 25
    result = evaluate()
    missed = [c.kind for c in result["missed"]]  # type: ignore[attr-defined]
    flagged = [c.text for c in result["flagged"]]  # type: ignore[attr-defined]
    assert result["recall"] >= 0.95, missed
    assert result["fp_rate"] <= 0.05, flagged


def test_first_held_out_set() -> None:
    result = evaluate(secrets=HELDOUT_SECRETS, harmless=HELDOUT_HARMLESS)
    assert result["recall"] >= 0.95 and result["fp_rate"] <= 0.05


def test_second_held_out_set() -> None:
    """Written before tuning at stop 23; tuned on since (README)."""
    assert len(CHECK_SECRETS) >= 60 and len(CHECK_HARMLESS) >= 40
    result = evaluate(secrets=CHECK_SECRETS, harmless=CHECK_HARMLESS)
    assert result["recall"] >= 0.95, [c.kind for c in result["missed"]]  # type: ignore[attr-defined]
    assert result["fp_rate"] <= 0.05, [c.text for c in result["flagged"]]  # type: ignore[attr-defined]


def test_third_held_out_set() -> None:
    """Written before tuning at stop 24; tuned on since (README)."""
    assert len(HOLDOUT3_SECRETS) >= 70 and len(HOLDOUT3_HARMLESS) >= 50
    result = evaluate(secrets=HOLDOUT3_SECRETS, harmless=HOLDOUT3_HARMLESS)
    assert result["recall"] >= 0.95, [c.kind for c in result["missed"]]  # type: ignore[attr-defined]
    assert result["fp_rate"] <= 0.05, [c.text for c in result["flagged"]]  # type: ignore[attr-defined]


def test_fourth_held_out_set() -> None:
    """Written before tuning at stop 24; tuned on in rounds 5, 7 and 9 (README)."""
    assert len(HOLDOUT4_SECRETS) >= 70 and len(HOLDOUT4_HARMLESS) >= 50
    result = evaluate(secrets=HOLDOUT4_SECRETS, harmless=HOLDOUT4_HARMLESS)
    assert result["recall"] >= 0.95, [c.kind for c in result["missed"]]  # type: ignore[attr-defined]
    assert result["fp_rate"] <= 0.05, [c.text for c in result["flagged"]]  # type: ignore[attr-defined]


def test_fifth_held_out_set() -> None:
    """Written before round 5, measured once then; tuned on in round 6 (README)."""
    assert len(HOLDOUT5_SECRETS) >= 80 and len(HOLDOUT5_HARMLESS) >= 60
    result = evaluate(secrets=HOLDOUT5_SECRETS, harmless=HOLDOUT5_HARMLESS)
    assert result["recall"] >= 0.95, [c.kind for c in result["missed"]]  # type: ignore[attr-defined]
    assert result["fp_rate"] <= 0.05, [c.text for c in result["flagged"]]  # type: ignore[attr-defined]


def test_sixth_held_out_set() -> None:
    """Written before round 6, measured once at its end (77/91, 6/71); tuned on in round 7
    (README)."""
    assert len(HOLDOUT6_SECRETS) >= 80 and len(HOLDOUT6_HARMLESS) >= 60
    result = evaluate(secrets=HOLDOUT6_SECRETS, harmless=HOLDOUT6_HARMLESS)
    assert result["recall"] >= 0.95, [c.kind for c in result["missed"]]  # type: ignore[attr-defined]
    assert result["fp_rate"] <= 0.05, [c.text for c in result["flagged"]]  # type: ignore[attr-defined]


BLIND_THEN_TUNED = [
    # (set, secrets, look-alikes, least secrets, least look-alikes); each was written without
    # reading the detector, measured once, then tuned on by category (README):
    # 7 at stop 26 (119/123 found, 6/95 flagged), tuned in round 8; 8 at stop 27 (109/132,
    # 2/104), round 9; 9 at stop 28 (114/130, 4/105), round 10; 10 at stop 29 (115/123, 2/102),
    # round 11. Floors at what the tuning round reached: all found, none flagged.
    ("held-out 7", HOLDOUT7_SECRETS, HOLDOUT7_HARMLESS, 110, 80),
    ("held-out 8", HOLDOUT8_SECRETS, HOLDOUT8_HARMLESS, 120, 100),
    ("held-out 9", HOLDOUT9_SECRETS, HOLDOUT9_HARMLESS, 120, 100),
    ("held-out 10", HOLDOUT10_SECRETS, HOLDOUT10_HARMLESS, 120, 100),
]


@pytest.mark.parametrize(
    ("secrets", "harmless", "least_secrets", "least_harmless"),
    [row[1:] for row in BLIND_THEN_TUNED],
    ids=[row[0] for row in BLIND_THEN_TUNED],
)
def test_held_out_sets_tuned_on_after_their_blind_measurement(
    secrets: tuple[Case, ...], harmless: tuple[Case, ...], least_secrets: int, least_harmless: int
) -> None:
    assert len(secrets) >= least_secrets and len(harmless) >= least_harmless
    result = evaluate(secrets=secrets, harmless=harmless)
    assert result["found"] == len(secrets), [c.kind for c in result["missed"]]  # type: ignore[attr-defined]
    assert result["false_positives"] == 0, [c.text for c in result["flagged"]]  # type: ignore[attr-defined]


def test_eleventh_held_out_set_never_tuned_on() -> None:
    """Written without reading the detector and measured once at stop 30 on round 11 (123/126
    found, 3/104 flagged; round 10 scored it the same); never tuned on. Floors at that
    measurement, totals only."""
    assert len(HOLDOUT11_SECRETS) >= 120 and len(HOLDOUT11_HARMLESS) >= 100
    result = evaluate(secrets=HOLDOUT11_SECRETS, harmless=HOLDOUT11_HARMLESS)
    assert result["found"] >= 123
    assert result["false_positives"] <= 3


@pytest.mark.parametrize("case", SECRETS, ids=[f"{i}-{c.kind}" for i, c in enumerate(SECRETS)])
def test_redaction_removes_each_planted_secret(case: object) -> None:
    scanner = SecretScanner()
    cleaned = scanner.redact(case.text)  # type: ignore[attr-defined]
    assert "[REDACTED:" in cleaned
    assert scanner.scan(cleaned) == []


def test_findings_name_line_and_type_only() -> None:
    text = "intro\n\nsome words\n" + SECRET_LINE + "\nmore"
    [finding] = SecretScanner().scan(text)
    assert (finding.line, finding.type) == (4, "stripe_access_key")
    assert SECRET_VALUE not in repr(finding)


def _kb(tmp_path: Path, embedding: BaseEmbedding, mode: str) -> KnowledgeBase:
    config = KBConfig(path=tmp_path / mode, secrets=SecretsConfig(documents=mode, knowledge=mode))
    return KnowledgeBase.open(config=config, embedding=embedding)


@pytest.fixture
def doc(tmp_path: Path) -> Path:
    path = tmp_path / "deploy.md"
    path.write_text(
        f"# Deploy\n\nSet the key first:\n\n{SECRET_LINE}\n\nThen deploy the turbine.\n"
    )
    return path


def _stored_text(kb: KnowledgeBase) -> str:
    return "\n".join(text for _, text, _ in kb.vectors.iter_chunks())


def test_mode_reject_refuses_the_document(tmp_path: Path, embedding: BaseEmbedding, doc: Path):
    with _kb(tmp_path, embedding, "reject") as kb:
        report = kb.ingest(doc)
        assert not report.added
        [failure] = report.failed
        assert failure.source == str(doc.resolve())
        assert "line 5: stripe_access_key" in failure.reason
        assert SECRET_VALUE not in json.dumps(report.to_dict())
        assert kb.vectors.count() == 0


def test_mode_redact_stores_the_text_without_the_secret(
    tmp_path: Path, embedding: BaseEmbedding, doc: Path
) -> None:
    with _kb(tmp_path, embedding, "redact") as kb:
        report = kb.ingest(doc)
        assert report.ok and len(report.added) == 1
        assert "line 5: stripe_access_key" in report.warnings[0].reason
        stored = _stored_text(kb)
        assert SECRET_VALUE not in stored
        assert "[REDACTED:stripe_access_key]" in stored and "deploy the turbine" in stored
        assert SECRET_VALUE not in json.dumps(report.to_dict())


def test_mode_warn_and_off_store_the_text(
    tmp_path: Path, embedding: BaseEmbedding, doc: Path, caplog: pytest.LogCaptureFixture
) -> None:
    with _kb(tmp_path, embedding, "warn") as kb:
        report = kb.ingest(doc)
        assert report.ok and report.warnings and SECRET_VALUE in _stored_text(kb)
    assert "stripe_access_key" in caplog.text and SECRET_VALUE not in caplog.text
    with _kb(tmp_path, embedding, "off") as kb:
        report = kb.ingest(doc)
        assert report.ok and not report.warnings and SECRET_VALUE in _stored_text(kb)


def test_default_mode_redacts_documents(tmp_path: Path, kb: KnowledgeBase, doc: Path) -> None:
    report = kb.ingest(doc)
    assert report.ok and report.warnings
    assert SECRET_VALUE not in _stored_text(kb)


@pytest.mark.parametrize(
    ("mode", "loaded"), [("reject", 0), ("redact", 0), ("warn", 1), ("off", 1)]
)
def test_knowledge_modes(tmp_path: Path, embedding: BaseEmbedding, mode: str, loaded: int) -> None:
    piece = {"piece_id": "p", "content": SECRET_LINE, "knowledge_type": "procedure"}
    with _kb(tmp_path, embedding, mode) as kb:
        before = snapshot(kb)
        report = kb.load_knowledge({"pieces": [piece]})
        assert kb.knowledge.pieces.count() == loaded
        if not loaded:
            assert "stripe_access_key" in report.skipped[0].reason
            assert SECRET_VALUE not in report.skipped[0].reason
            assert snapshot(kb) == before


@pytest.mark.parametrize("mode", ["redact", "reject"])
def test_metadata_values_are_scanned(tmp_path: Path, embedding: BaseEmbedding, mode: str) -> None:
    path = tmp_path / "records.jsonl"
    record = {"id": "r1", "text": "The turbine manual.", "metadata": {"api_key": SECRET_VALUE}}
    path.write_text(json.dumps(record) + "\n")
    with _kb(tmp_path, embedding, mode) as kb:
        report = kb.ingest(path)
        dumped = json.dumps(report.to_dict())
        assert "metadata['api_key']: stripe_access_key" in dumped and SECRET_VALUE not in dumped
        stored = [meta for _, _, meta in kb.vectors.iter_chunks()]
        if mode == "reject":
            assert stored == [] and not report.added
        else:
            assert stored and stored[0]["api_key"] == "[REDACTED:stripe_access_key]"
            assert SECRET_VALUE not in json.dumps(stored)
