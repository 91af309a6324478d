"""Secret-detection recall and false positives on the planted corpus and eleven held-out sets.

Run ``python -m benchmarks.secrets_bench``; prints the README tables (Markdown). Each held-out
set was written before the detector was tuned for it; once looked at, a set becomes a tuning
set. Round 11 tuned on all ten held-out sets (held-out 10 last; it was written by someone
who had not read the detector, and measured once on round 10 before). Held-out 11, written
the same way while round 11 was tuned, was measured once on round 11. A set labelled
"never tuned on" shows its totals only, never its cases (the next independent check goes
there).
"""

from __future__ import annotations

import time
from collections import Counter

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
from llama_kb.ingest.guards.secrets import SecretScanner


def evaluate(
    scanner: SecretScanner | None = None,
    secrets: tuple[Case, ...] = SECRETS,
    harmless: tuple[Case, ...] = HARMLESS,
) -> dict[str, object]:
    """Recall on ``secrets``, false-positive rate on ``harmless``, and the misses."""
    scanner = scanner or SecretScanner()
    started = time.perf_counter()
    missed = [c for c in secrets if not scanner.scan(c.text)]
    flagged = [c for c in harmless if scanner.scan(c.text)]
    seconds = time.perf_counter() - started
    return {
        "secrets": len(secrets),
        "found": len(secrets) - len(missed),
        "recall": 1 - len(missed) / len(secrets),
        "harmless": len(harmless),
        "false_positives": len(flagged),
        "fp_rate": len(flagged) / len(harmless),
        "missed": missed,
        "flagged": flagged,
        "ms_per_text": 1000 * seconds / (len(secrets) + len(harmless)),
    }


SETS: tuple[tuple[str, tuple[Case, ...], tuple[Case, ...]], ...] = (
    ("planted (tuned on it)", SECRETS, HARMLESS),
    ("held-out 1 (stop 22; tuned on it since)", HELDOUT_SECRETS, HELDOUT_HARMLESS),
    ("held-out 2 (stop 23; tuned on it since)", CHECK_SECRETS, CHECK_HARMLESS),
    ("held-out 3 (stop 24; tuned on it since)", HOLDOUT3_SECRETS, HOLDOUT3_HARMLESS),
    ("held-out 4 (stop 24; tuned on it in rounds 5, 7 and 9)", HOLDOUT4_SECRETS, HOLDOUT4_HARMLESS),
    ("held-out 5 (stop 25; tuned on it in round 6)", HOLDOUT5_SECRETS, HOLDOUT5_HARMLESS),
    ("held-out 6 (stop 25; tuned on it in round 7)", HOLDOUT6_SECRETS, HOLDOUT6_HARMLESS),
    ("held-out 7 (stop 26; tuned on it in round 8)", HOLDOUT7_SECRETS, HOLDOUT7_HARMLESS),
    ("held-out 8 (stop 27; tuned on it in round 9)", HOLDOUT8_SECRETS, HOLDOUT8_HARMLESS),
    ("held-out 9 (stop 28; tuned on it in round 10)", HOLDOUT9_SECRETS, HOLDOUT9_HARMLESS),
    ("held-out 10 (stop 29; tuned on it in round 11)", HOLDOUT10_SECRETS, HOLDOUT10_HARMLESS),
    ("held-out 11 (stop 30; never tuned on)", HOLDOUT11_SECRETS, HOLDOUT11_HARMLESS),
)


def main() -> None:
    """Print the per-type table of the planted set, one row per set, then the misses and false
    positives of every set tuned on (a set never tuned on shows only its totals)."""
    results = [(name, evaluate(secrets=sec, harmless=harm)) for name, sec, harm in SETS]
    kinds = Counter(c.kind for c in SECRETS)
    missed = Counter(c.kind for c in results[0][1]["missed"])  # type: ignore[attr-defined]
    print("| secret type (planted set) | planted | found |")
    print("|---|---|---|")
    for kind, count in sorted(kinds.items()):
        print(f"| {kind} | {count} | {count - missed[kind]} |")
    print("\n| set | secrets | types | found (recall) | look-alikes | flagged (false positives) |")
    print("|---|---|---|---|---|---|")
    for (name, secrets, _), (_, r) in zip(SETS, results, strict=True):
        recall, fp_rate = float(r["recall"]), float(r["fp_rate"])  # type: ignore[arg-type]
        print(
            f"| {name} | {r['secrets']} | {len({c.kind for c in secrets})} | {r['found']} "
            f"({100 * recall:.1f} %) | {r['harmless']} | {r['false_positives']} "
            f"({100 * fp_rate:.1f} %) |"
        )
    print(f"\n{results[0][1]['ms_per_text']:.2f} ms per text (planted set)")
    for name, r in results:
        if "never tuned on" in name:  # a set checked once keeps its cases unseen
            continue
        for case in r["missed"]:  # type: ignore[attr-defined]
            print(f"{name}: missed {case.kind}")
        for case in r["flagged"]:  # type: ignore[attr-defined]
            print(f"{name}: flagged {case.text[:60]!r}")


if __name__ == "__main__":
    main()
