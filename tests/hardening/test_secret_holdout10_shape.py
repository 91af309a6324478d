"""Held-out secret set 10: its shape only (sizes, kinds, fresh and distinct texts).

Detection on the set was measured once by the lead (stop 29) before anything was tuned on
it; since round 11 tuned on it, its floor is in ``test_secret_detection.py``.
"""

from __future__ import annotations

import importlib
import pkgutil
import re

import pytest

import benchmarks
import benchmarks.secret_holdout10_corpus as holdout10
from benchmarks.secret_corpus import Case

SECRETS = holdout10.HOLDOUT10_SECRETS
HARMLESS = holdout10.HOLDOUT10_HARMLESS

# A slot the template filler did not replace, e.g. {pw}, {uuid} or {h32}.
UNFILLED = re.compile(r"\{(?:pw|uuid|akia|gh[ps]|npm|[a-zA-Z]\d{1,4})\}")


def other_corpora() -> list[str]:
    """Names of the other secret corpora in ``benchmarks`` (planted, check, held-out 3 to 9)."""
    names = [info.name for info in pkgutil.iter_modules(benchmarks.__path__)]
    own = holdout10.__name__.rsplit(".", 1)[1]
    return [n for n in names if n.startswith("secret_") and n.endswith("_corpus") and n != own]


def earlier_texts() -> set[str]:
    """The text of every case in the other secret corpora."""
    modules = [importlib.import_module(f"benchmarks.{name}") for name in other_corpora()]
    groups = [value for module in modules for value in vars(module).values()]
    return {
        item.text
        for group in groups
        if isinstance(group, tuple)
        for item in group
        if isinstance(item, Case)
    }


def test_the_set_is_as_large_and_varied_as_the_issue_asks() -> None:
    assert len(SECRETS) >= 120
    assert len({case.kind for case in SECRETS}) >= 50
    assert len(HARMLESS) >= 100


@pytest.mark.parametrize("case", SECRETS, ids=lambda case: case.kind)
def test_each_secret_has_a_short_kind_and_a_filled_text(case: Case) -> None:
    assert 0 < len(case.kind) <= 20
    assert case.text.strip()
    assert UNFILLED.search(case.text) is None


def test_look_alikes_have_no_kind_and_filled_texts() -> None:
    assert {case.kind for case in HARMLESS} == {""}
    assert all(case.text.strip() for case in HARMLESS)
    assert [case.text for case in HARMLESS if UNFILLED.search(case.text)] == []


def test_no_text_appears_twice() -> None:
    texts = [case.text for case in SECRETS + HARMLESS]
    assert len(set(texts)) == len(texts)


def test_no_text_repeats_an_earlier_set() -> None:
    assert len(other_corpora()) >= 9
    earlier = earlier_texts()
    assert len(earlier) > 1000
    assert [case.text[:60] for case in SECRETS + HARMLESS if case.text in earlier] == []


def test_the_fixed_seed_gives_the_same_set_on_reload() -> None:
    before = (SECRETS, HARMLESS)
    reloaded = importlib.reload(holdout10)
    assert before == (reloaded.HOLDOUT10_SECRETS, reloaded.HOLDOUT10_HARMLESS)
