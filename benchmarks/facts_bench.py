"""Fact quality: do the returned ``structured_facts`` hold the gold triples?

For every question, ``kb.retrieve(question)`` runs with the default options (no LLM, no
triples loaded). A gold triple ``[subject, relation, object]`` counts as found when a
returned non-structural fact joins its subject and object, in either direction. Names match
on their key (case, punctuation and accents folded), by the triple's own name or by the
title of a passage the triple links that end to (``triples.jsonl`` ``*_ids``), each also
without a trailing ``(...)`` or a ``, qualifier`` (``Henry Beresford, 1st Marquess of
Waterford`` is also ``Henry Beresford``); a fact end that contains the gold name plus at most
two more words (``"American film director"`` for ``American``) matches too.

``triples.jsonl`` is used only to score, never to retrieve. Reported: typed recall on all
gold triples and on entity-pair triples (the object has its own passage), facts per query,
structural share of the returned facts, passage R@5 of the same calls, on the md5-even
(tuning) and md5-odd (held-out) halves.
"""

from __future__ import annotations

import hashlib
import time
from collections.abc import Iterable
from pathlib import Path
from typing import Any

from benchmarks._common import median, percentile, read_jsonl, timer, write_results
from llama_kb import KnowledgeBase, default_embedding
from llama_kb.names import aliases, name_key

_EXTRA_WORDS = 2


def run(
    dataset: Path, out_dir: Path, kb_dir: Path | None = None, limit: int | None = None
) -> dict[str, Any]:
    """Ingest ``dataset`` into ``kb_dir`` (incrementally) and score the returned facts."""
    questions = read_jsonl(dataset / "questions.jsonl")[:limit]
    titles = {row["id"]: row.get("title") or "" for row in read_jsonl(dataset / "corpus.jsonl")}
    links = _triple_links(dataset / "triples.jsonl")
    kb_dir = kb_dir or out_dir / f"kb-{dataset.name}"
    rows: list[dict[str, Any]] = []
    with KnowledgeBase.open(kb_dir, embedding=default_embedding()) as kb:
        with timer() as ingest_time:
            kb.ingest(dataset / "corpus.jsonl", show_progress=True)
        kb.retrieve("warm up the retrieval index", top_k=1)
        for question in questions:
            started = time.perf_counter()
            context = kb.retrieve(question["question"])
            ms = (time.perf_counter() - started) * 1000
            rows.append(_score_question(question, context, titles, links, ms))
    halves: dict[str, list[dict[str, Any]]] = {"all": rows, "tune (even)": [], "check (odd)": []}
    for question, row in zip(questions, rows, strict=True):
        parity = int(hashlib.md5(str(question["id"]).encode()).hexdigest(), 16) % 2
        halves["check (odd)" if parity else "tune (even)"].append(row)
    figures = {
        "dataset": dataset.name,
        "questions": len(questions),
        "ingest_seconds": round(ingest_time(), 1),
        "halves": {name: _summary(part) for name, part in halves.items() if part},
    }
    table = _markdown(figures)
    write_results(out_dir, f"facts-{dataset.name}", figures, table)
    print(table)
    return figures


def _triple_links(path: Path) -> dict[tuple[str, str, str, str], dict[str, list[str]]]:
    """``(question id, subject, predicate, object)`` -> passage ids of each end."""
    if not path.exists():
        return {}
    links: dict[tuple[str, str, str, str], dict[str, list[str]]] = {}
    for row in read_jsonl(path):
        for qid in row.get("question_ids", []):
            key = (qid, row["subject"], row["predicate"], row["object"])
            links[key] = {"subject": row["subject_ids"], "object": row["object_ids"]}
    return links


def _names(name: str, ids: Iterable[str], titles: dict[str, str]) -> set[str]:
    forms = {name, *(titles.get(i, "") for i in ids)}
    # "Henry Beresford, 1st Marquess of Waterford" is also "Henry Beresford"
    forms |= {f.split(",")[0] for f in forms if "," in f and len(f.split(",")[0].split()) >= 2}
    return {name_key(alias) for form in forms if form for alias in aliases(form)} - {""}


def _matches(fact_name: str, gold: set[str]) -> bool:
    key = name_key(fact_name)
    if key in gold:
        return True
    words = key.split("-")
    for name in gold:
        size = name.count("-") + 1
        if len(words) - size <= _EXTRA_WORDS and f"-{name}-" in f"-{key}-":
            return True
    return False


def _score_question(
    question: dict[str, Any],
    context: Any,
    titles: dict[str, str],
    links: dict[tuple[str, str, str, str], dict[str, list[str]]],
    ms: float,
) -> dict[str, Any]:
    facts = context.structured_facts
    typed = [f for f in facts if not f.structural]
    found: list[bool] = []
    pairs: list[bool] = []
    first_rank: list[int] = []
    for subject, predicate, obj in question.get("triples", []):
        ids = links.get((question["id"], subject, predicate, obj), {"subject": [], "object": []})
        subjects = _names(subject, ids["subject"], titles)
        objects = _names(obj, ids["object"], titles)
        rank = next(
            (
                i
                for i, f in enumerate(typed, 1)
                if (_matches(f.subject, subjects) and _matches(f.object, objects))
                or (_matches(f.subject, objects) and _matches(f.object, subjects))
            ),
            0,
        )
        found.append(rank > 0)
        if rank:
            first_rank.append(rank)
        if ids["object"]:
            pairs.append(rank > 0)
    docs = list(dict.fromkeys(h.doc_id for h in context.unstructured))[:5]
    gold = set(question["supporting_ids"])
    return {
        "found": found,
        "pairs": pairs,
        "ranks": first_rank,
        "facts": len(facts),
        "structural": len(facts) - len(typed),
        "recall5": len(gold & set(docs)) / len(gold),
        "ms": ms,
    }


def _summary(rows: list[dict[str, Any]]) -> dict[str, Any]:
    pct = lambda xs: round(100 * sum(xs) / max(len(xs), 1), 1)  # noqa: E731
    found = [x for r in rows for x in r["found"]]
    pairs = [x for r in rows for x in r["pairs"]]
    facts = sum(r["facts"] for r in rows)
    ranks = [x for r in rows for x in r["ranks"]]
    latencies = [r["ms"] for r in rows]
    return {
        "questions": len(rows),
        "gold_triples": len(found),
        "typed_recall_all": pct(found),
        "entity_pair_triples": len(pairs),
        "typed_recall_entity_pairs": pct(pairs),
        "facts_per_query": round(facts / max(len(rows), 1), 2),
        "structural_share": round(100 * sum(r["structural"] for r in rows) / max(facts, 1), 1),
        "median_rank_of_found": median(ranks) if ranks else None,
        "passage_R@5": pct([r["recall5"] for r in rows]),
        "median_ms": round(median(latencies), 2),
        "p95_ms": round(percentile(latencies, 0.95), 2),
    }


def _markdown(figures: dict[str, Any]) -> str:
    lines = [
        f"Dataset `{figures['dataset']}`, {figures['questions']} questions, "
        "`kb.retrieve(question)` with default options (top_k 5, max_facts 20, no LLM).",
        "",
        "| half | questions | typed recall, all triples | typed recall, entity pairs | "
        "facts/query | structural share % | passage R@5 | median ms | p95 ms |",
        "|---|---|---|---|---|---|---|---|---|",
    ]
    for name, s in figures["halves"].items():
        lines.append(
            f"| {name} | {s['questions']} | {s['typed_recall_all']} ({s['gold_triples']}) | "
            f"{s['typed_recall_entity_pairs']} ({s['entity_pair_triples']}) | "
            f"{s['facts_per_query']} | {s['structural_share']} | {s['passage_R@5']} | "
            f"{s['median_ms']} | {s['p95_ms']} |"
        )
    return "\n".join(lines) + "\n"
