"""``python -m benchmarks <name> ...``: ingest, chunkers, retrieval, paired, facts, backends,
mcp, import, observability, scale, access, ranking-cost."""

from __future__ import annotations

import argparse
import json
import logging
from pathlib import Path

from benchmarks._common import DEFAULT_DATASET
from llama_kb.cli import EMBEDDING_CHOICES


def main() -> None:
    """Parse arguments and run one benchmark."""
    parser = argparse.ArgumentParser(prog="python -m benchmarks")
    parser.add_argument(
        "benchmark",
        choices=[
            "ingest",
            "chunkers",
            "retrieval",
            "paired",
            "facts",
            "backends",
            "mcp",
            "import",
            "observability",
            "scale",
            "access",
            "ranking-cost",
        ],
    )
    parser.add_argument("--dataset", type=Path, default=DEFAULT_DATASET)
    parser.add_argument("--out", type=Path, default=Path("benchmarks/results"))
    parser.add_argument("--kb", type=Path, help="knowledge base to (re)use for retrieval")
    parser.add_argument("--limit", type=int, help="only the first N questions")
    parser.add_argument(
        "--kbs", help="paired: comma-separated knowledge bases, each compared with the first"
    )
    parser.add_argument(
        "--with-triples", action="store_true", help="also score with triples.jsonl (upper bound)"
    )
    parser.add_argument(
        "--chunk-unit",
        choices=["tokens", "characters"],
        default=None,
        help="chunker: token-aware (default for a new knowledge base) or the character "
        "chunker (1000/200); a reused --kb keeps its own unless this is given",
    )
    parser.add_argument(
        "--embedding",
        choices=EMBEDDING_CHOICES,
        default="minilm",
        help="retrieval: the bundled embedding model of a new knowledge base",
    )
    parser.add_argument(
        "--sizes",
        default="10000,30000,100000",
        help="scale: corpus sizes in passages, comma-separated",
    )
    parser.add_argument(
        "--default-size",
        type=int,
        default=None,
        help="scale: size with the default embedding (0: skip; 10000 if not given); "
        "ranking-cost: the scale corpus of this size instead of --dataset",
    )
    parser.add_argument(
        "--server-size",
        type=int,
        default=30_000,
        help="scale: size on Chroma server + FalkorDB (0: skip)",
    )
    parser.add_argument(
        "--server-embedding",
        choices=["hash", "default"],
        default="hash",
        help="scale: the server run's embedding: hash (cheap, as the growth curve) or "
        "default (the bundled model)",
    )
    parser.add_argument(
        "--passages", type=int, default=500, help="chunkers: passages ingested per round"
    )
    parser.add_argument("--rounds", type=int, default=3, help="chunkers: alternating rounds")
    parser.add_argument("--questions", type=int, default=200, help="scale: questions per size")
    parser.add_argument(
        "--resume", action="store_true", help="scale: grow the knowledge base of an earlier run"
    )
    parser.add_argument(
        "--ranking",
        type=json.loads,
        help="retrieval, ranking-cost: RankingConfig fields changed from the defaults, as JSON "
        "(e.g. '{\"bridge_names\": 1}')",
    )
    args = parser.parse_args()
    logging.basicConfig(level=logging.WARNING)
    if args.benchmark == "ingest":
        from benchmarks import ingest_bench

        ingest_bench.run(args.dataset, args.out, chunk_unit=args.chunk_unit or "tokens")
    elif args.benchmark == "chunkers":
        from benchmarks import chunker_bench

        chunker_bench.run(args.dataset, args.out, passages=args.passages, rounds=args.rounds)
    elif args.benchmark == "backends":
        from benchmarks import backends_bench

        backends_bench.run(args.dataset, args.out)
    elif args.benchmark == "facts":
        from benchmarks import facts_bench

        facts_bench.run(args.dataset, args.out, kb_dir=args.kb, limit=args.limit)
    elif args.benchmark == "observability":
        from benchmarks import observability_bench

        if args.kb is None:
            parser.error("observability needs --kb (an ingested copy of the dataset)")
        observability_bench.run(args.dataset, args.out, args.kb, limit=args.limit)
    elif args.benchmark == "mcp":
        from benchmarks import mcp_bench

        mcp_bench.run(args.dataset, args.out)
    elif args.benchmark == "import":
        from benchmarks import import_bench

        import_bench.run(args.out)
    elif args.benchmark == "scale":
        from benchmarks import scale_bench

        logging.getLogger("benchmarks").setLevel(logging.INFO)
        scale_bench.run(
            args.out,
            [int(s) for s in args.sizes.split(",") if s.strip()],
            default_size=10_000 if args.default_size is None else args.default_size,
            server_size=args.server_size,
            questions=args.questions,
            resume=args.resume,
            server_embedding=args.server_embedding,
        )
    elif args.benchmark == "ranking-cost":
        from benchmarks import ranking_cost_bench

        if args.kb is None or not args.ranking:
            parser.error("ranking-cost needs --kb and --ranking")
        ranking_cost_bench.run(
            args.out,
            args.kb,
            args.ranking,
            dataset=args.dataset,
            size=args.default_size or 0,
            questions=args.questions,
        )
    elif args.benchmark == "access":
        from benchmarks import access_bench

        access_bench.run(args.out, size=args.limit or 10_000, questions=args.questions)
    elif args.benchmark == "paired":
        from benchmarks import paired_bench

        kbs = [Path(k) for k in (args.kbs or "").split(",") if k.strip()]
        if len(kbs) < 2:
            parser.error("paired needs --kbs A,B[,C...] (at least two knowledge bases)")
        paired_bench.run(args.dataset, args.out, kbs, limit=args.limit)
    elif args.benchmark == "retrieval":
        from benchmarks import retrieval_bench

        retrieval_bench.run(
            args.dataset,
            args.out,
            kb_dir=args.kb,
            limit=args.limit,
            with_triples=args.with_triples,
            chunk_unit=args.chunk_unit,
            embedding_name=args.embedding,
            ranking=args.ranking,
        )


if __name__ == "__main__":
    main()
