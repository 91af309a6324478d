"""Secret-detection recall and false positives on the planted corpus.

Run ``python -m benchmarks.secrets_bench``; prints the README table (Markdown).
"""

from __future__ import annotations

import time
from collections import Counter

from benchmarks.secret_corpus import HARMLESS, HELDOUT_HARMLESS, HELDOUT_SECRETS, SECRETS, Case
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


def main() -> None:
    """Print the table."""
    result = evaluate()
    kinds = Counter(c.kind for c in SECRETS)
    missed = Counter(c.kind for c in result["missed"])  # type: ignore[attr-defined]
    print("| secret type | planted | found |")
    print("|---|---|---|")
    for kind, count in sorted(kinds.items()):
        print(f"| {kind} | {count} | {count - missed[kind]} |")
    print(
        f"| **all secrets** | **{result['secrets']}** | **{result['found']}** "
        f"(recall {100 * result['recall']:.1f} %) |"  # type: ignore[operator]
    )
    print(
        f"| harmless look-alikes | {result['harmless']} | {result['false_positives']} flagged "
        f"(false positives {100 * result['fp_rate']:.1f} %) |"  # type: ignore[operator]
    )
    held = evaluate(secrets=HELDOUT_SECRETS, harmless=HELDOUT_HARMLESS)
    print(
        f"| held-out (written after tuning) | {held['secrets']} secrets, "
        f"{held['found']} found (recall {100 * held['recall']:.1f} %); "  # type: ignore[operator]
        f"{held['harmless']} harmless, {held['false_positives']} flagged "
        f"({100 * held['fp_rate']:.1f} %) | |"  # type: ignore[operator]
    )
    print(f"\n{result['ms_per_text']:.2f} ms per text")
    for case in held["missed"]:  # type: ignore[attr-defined]
        print("held-out missed:", case.kind)
    for case in held["flagged"]:  # type: ignore[attr-defined]
        print("held-out flagged:", case.text[:60])
    for case in result["missed"]:  # type: ignore[attr-defined]
        print("missed:", case.kind)
    for case in result["flagged"]:  # type: ignore[attr-defined]
        print("flagged:", case.text[:60])


if __name__ == "__main__":
    main()
