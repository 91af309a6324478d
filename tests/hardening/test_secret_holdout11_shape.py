"""Held-out secret set 11: the set's shape, never what the detector finds in it.

The lead measures detection once with ``benchmarks.secrets_bench.evaluate``; asserting it here
would invite tuning on the set.
"""

from __future__ import annotations

import importlib
import pkgutil
import re
import zlib

import benchmarks
import benchmarks.secret_holdout11_corpus as holdout11
from benchmarks.secret_corpus import Case

ALL = holdout11.HOLDOUT11_SECRETS + holdout11.HOLDOUT11_HARMLESS
# A template slot left in a text: a named one ({pw}, {upw}, {uuid}, {ghp}) or a letter and a size.
SLOT = re.compile(r"\{(?:u?pw|uuid|akia|asia|ghp|[A-Za-z]\d{1,4})\}")
BASE62 = "0123456789ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz"


def earlier_cases() -> list[Case]:
    """Every case of the other ``benchmarks.secret_*_corpus`` modules."""
    names = [m.name for m in pkgutil.iter_modules(benchmarks.__path__)]
    corpora = [n for n in names if re.fullmatch(r"secret_\w+_corpus", n) and "holdout11" not in n]
    values = [v for n in corpora for v in vars(importlib.import_module(f"benchmarks.{n}")).values()]
    return [case for v in values if isinstance(v, tuple) for case in v if isinstance(case, Case)]


def test_sizes_and_kinds_meet_the_issue() -> None:
    secrets, harmless = holdout11.HOLDOUT11_SECRETS, holdout11.HOLDOUT11_HARMLESS
    assert len(secrets) >= 120
    assert len({case.kind for case in secrets}) >= 50
    assert len(harmless) >= 100
    assert all(0 < len(case.kind) <= 20 for case in secrets)
    assert {case.kind for case in harmless} == {""}


def test_every_text_is_filled_and_distinct() -> None:
    texts = [case.text for case in ALL]
    assert all(text.strip() for text in texts)
    assert [text[:50] for text in texts if SLOT.search(text)] == []
    assert len(set(texts)) == len(texts)


def test_nothing_repeats_an_earlier_set() -> None:
    earlier = {case.text for case in earlier_cases()}
    assert len(earlier) > 1000  # the planted set, the check set and held-out 3 to 10
    assert [case.text[:50] for case in ALL if case.text in earlier] == []


def test_checksummed_values_check_out() -> None:
    """The planted GitHub tokens carry the CRC32 of their body; the look-alike IBANs pass mod 97."""
    planted = "\n".join(case.text for case in holdout11.HOLDOUT11_SECRETS)
    harmless = "\n".join(case.text for case in holdout11.HOLDOUT11_HARMLESS)
    tokens = re.findall(r"ghp_([A-Za-z0-9]{30})([A-Za-z0-9]{6})", planted)
    ibans = re.findall(r"\b(?:DE|ES)\d{20,22}\b", harmless)
    assert len(tokens) >= 4
    assert len(ibans) == 2
    for body, crc in tokens:
        assert sum(BASE62.index(c) * 62**i for i, c in enumerate(reversed(crc))) == zlib.crc32(
            body.encode()
        )
    for iban in ibans:
        assert int("".join(str(int(c, 36)) for c in iban[4:] + iban[:4])) % 97 == 1


def test_the_seed_makes_the_set_reproducible() -> None:
    reloaded = importlib.reload(holdout11)
    assert reloaded.HOLDOUT11_SECRETS + reloaded.HOLDOUT11_HARMLESS == ALL
