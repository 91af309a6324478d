"""Held-out secret set 7: its shape (counts, kinds, distinct texts); its detection floors are in
``test_secret_detection.py`` since round 8 tuned on it."""

from __future__ import annotations

import importlib

import benchmarks.secret_holdout7_corpus as corpus
from benchmarks.secret_check_corpus import CHECK_HARMLESS, CHECK_SECRETS
from benchmarks.secret_corpus import HARMLESS, HELDOUT_HARMLESS, HELDOUT_SECRETS, SECRETS
from benchmarks.secret_holdout3_corpus import HOLDOUT3_HARMLESS, HOLDOUT3_SECRETS
from benchmarks.secret_holdout4_corpus import HOLDOUT4_HARMLESS, HOLDOUT4_SECRETS
from benchmarks.secret_holdout5_corpus import HOLDOUT5_HARMLESS, HOLDOUT5_SECRETS
from benchmarks.secret_holdout6_corpus import HOLDOUT6_HARMLESS, HOLDOUT6_SECRETS
from benchmarks.secret_holdout7_corpus import HOLDOUT7_HARMLESS, HOLDOUT7_SECRETS

EARLIER_SETS = (
    SECRETS,
    HARMLESS,
    HELDOUT_SECRETS,
    HELDOUT_HARMLESS,
    CHECK_SECRETS,
    CHECK_HARMLESS,
    HOLDOUT3_SECRETS,
    HOLDOUT3_HARMLESS,
    HOLDOUT4_SECRETS,
    HOLDOUT4_HARMLESS,
    HOLDOUT5_SECRETS,
    HOLDOUT5_HARMLESS,
    HOLDOUT6_SECRETS,
    HOLDOUT6_HARMLESS,
)


def test_counts_and_kinds() -> None:
    assert len(HOLDOUT7_SECRETS) >= 110
    assert len({case.kind for case in HOLDOUT7_SECRETS}) >= 45
    assert len(HOLDOUT7_HARMLESS) >= 80
    assert all(case.kind and len(case.kind) <= 20 for case in HOLDOUT7_SECRETS)
    assert all(case.kind == "" for case in HOLDOUT7_HARMLESS)


def test_texts_are_distinct_and_non_empty() -> None:
    texts = [case.text for case in HOLDOUT7_SECRETS + HOLDOUT7_HARMLESS]
    assert all(text.strip() for text in texts)
    assert len(set(texts)) == len(texts)


def test_no_text_repeats_an_earlier_set() -> None:
    earlier = {case.text for cases in EARLIER_SETS for case in cases}
    repeated = [c.text for c in HOLDOUT7_SECRETS + HOLDOUT7_HARMLESS if c.text in earlier]
    assert repeated == []


def test_the_set_is_reproducible() -> None:
    """Values come from a fixed seed: importing the module twice gives the same texts."""
    before = corpus.HOLDOUT7_SECRETS + corpus.HOLDOUT7_HARMLESS
    reloaded = importlib.reload(corpus)
    assert before == reloaded.HOLDOUT7_SECRETS + reloaded.HOLDOUT7_HARMLESS
