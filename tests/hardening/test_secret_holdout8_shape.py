"""The eighth held-out secret set's shape: sizes, variety, distinct texts, nothing reused.

Only the shape is checked here. The set was measured once by the lead (stop 27) before anyone
tuned on it; round 9 tuned on it, and ``tests/hardening/test_secret_detection.py`` asserts
what the detector makes of it.
"""

from __future__ import annotations

import importlib
import pkgutil
import re

import benchmarks
from benchmarks import secret_holdout8_corpus
from benchmarks.secret_corpus import Case
from benchmarks.secret_holdout8_corpus import HOLDOUT8_HARMLESS, HOLDOUT8_SECRETS

ALL_CASES = HOLDOUT8_SECRETS + HOLDOUT8_HARMLESS
# What a template placeholder the expansion missed would look like ({pw}, {a40}, ...).
UNFILLED = re.compile(r"\{(?:pw|uuid|UUID|akia|r32|ghp|ghu|npm|[A-Za-z]\d+)\}")


def test_the_set_is_large_and_varied_enough() -> None:
    assert len(HOLDOUT8_SECRETS) >= 120
    assert len({case.kind for case in HOLDOUT8_SECRETS}) >= 50
    assert len(HOLDOUT8_HARMLESS) >= 100


def test_secrets_carry_a_kind_and_look_alikes_do_not() -> None:
    assert all(case.kind.strip() for case in HOLDOUT8_SECRETS)
    assert not [case.text for case in HOLDOUT8_HARMLESS if case.kind]


def test_texts_are_filled_non_empty_and_distinct() -> None:
    texts = [case.text for case in ALL_CASES]
    assert all(text.strip() for text in texts)
    assert not [text for text in texts if UNFILLED.search(text)]
    assert len(set(texts)) == len(texts)


def _other_sets() -> list[tuple[Case, ...]]:
    """Every public tuple of cases in the other ``benchmarks.secret_*corpus`` modules."""
    this = secret_holdout8_corpus.__name__.rpartition(".")[2]
    found = []
    for info in pkgutil.iter_modules(benchmarks.__path__):
        if re.fullmatch(r"secret_\w*corpus", info.name) and info.name != this:
            names = vars(importlib.import_module(f"benchmarks.{info.name}"))
            found += [v for k, v in names.items() if not k.startswith("_") and _is_cases(v)]
    return found


def _is_cases(value: object) -> bool:
    return isinstance(value, tuple) and bool(value) and all(isinstance(c, Case) for c in value)


def test_no_text_repeats_one_of_an_earlier_set() -> None:
    others = _other_sets()
    assert len(others) >= 16  # planted, first held-out, check set, held-out 3 to 7
    earlier = {case.text for cases in others for case in cases}
    assert not [case.text for case in ALL_CASES if case.text in earlier]


def test_the_fixed_seed_gives_the_same_set_on_every_load() -> None:
    reloaded = importlib.reload(secret_holdout8_corpus)
    assert reloaded.HOLDOUT8_SECRETS == HOLDOUT8_SECRETS
    assert reloaded.HOLDOUT8_HARMLESS == HOLDOUT8_HARMLESS
