"""Held-out secret set 9: only its shape (sizes, kinds, distinct and fresh texts).

What the detector finds in the set is measured by the lead with
``benchmarks.secrets_bench.evaluate`` and never asserted here, so that nobody tunes on it.
"""

from __future__ import annotations

import importlib
import re
from pathlib import Path

import benchmarks
import benchmarks.secret_holdout9_corpus as holdout9
from benchmarks.secret_corpus import Case
from benchmarks.secret_holdout9_corpus import HOLDOUT9_HARMLESS, HOLDOUT9_SECRETS

# A template field the expansion left behind: {pw}, {uuid}, {h32}, ...
LEFTOVER = re.compile(r"\{(?:pw|uuid|akia|ghp|npm|jwt|sajwt|[A-Za-z]\d+)\}")


def earlier_texts() -> set[str]:
    """The text of every case in the other ``benchmarks/secret_*corpus.py`` modules."""
    texts: set[str] = set()
    for path in sorted(Path(benchmarks.__file__).parent.glob("secret_*corpus.py")):
        if path.stem == "secret_holdout9_corpus":
            continue
        module = importlib.import_module(f"benchmarks.{path.stem}")
        for name, value in vars(module).items():
            if name.isupper() and isinstance(value, tuple):
                texts.update(case.text for case in value if isinstance(case, Case))
    return texts


def test_sizes_and_variety_meet_the_issue() -> None:
    assert len(HOLDOUT9_SECRETS) >= 120
    assert len({case.kind for case in HOLDOUT9_SECRETS}) >= 50
    assert len(HOLDOUT9_HARMLESS) >= 100


def test_every_secret_names_a_short_kind_and_no_look_alike_does() -> None:
    assert all(0 < len(case.kind) <= 20 for case in HOLDOUT9_SECRETS)
    assert {case.kind for case in HOLDOUT9_HARMLESS} == {""}


def test_texts_are_filled_and_each_appears_once() -> None:
    texts = [case.text for case in HOLDOUT9_SECRETS + HOLDOUT9_HARMLESS]
    assert all(text.strip() for text in texts)
    assert [text for text in texts if LEFTOVER.search(text)] == []
    assert len(texts) == len(set(texts))


def test_no_text_is_taken_from_an_earlier_set() -> None:
    earlier = earlier_texts()
    assert len(earlier) > 900  # the planted set, held-out 1 to 8 and the check set
    fresh = HOLDOUT9_SECRETS + HOLDOUT9_HARMLESS
    assert [case.text[:60] for case in fresh if case.text in earlier] == []


def test_the_seed_makes_the_set_the_same_on_every_import() -> None:
    before = (HOLDOUT9_SECRETS, HOLDOUT9_HARMLESS)
    reloaded = importlib.reload(holdout9)
    assert before == (reloaded.HOLDOUT9_SECRETS, reloaded.HOLDOUT9_HARMLESS)
