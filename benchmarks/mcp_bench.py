"""Latency of ``traverse`` and ``retrieve`` through MCP (stdio) vs the same Python call.

A knowledge base holds the first ``PASSAGES`` passages of the dataset and a synthetic agent
graph (``CONCEPTS`` concepts, each with ``FANOUT`` relations of random weight, seeded). The
same start URIs and questions are timed twice: as Python calls on an open knowledge base, and
as ``call_tool`` over the official SDK's stdio client against ``python -m llama_kb mcp`` (one
server process, started once; its start-up time is reported separately).
"""

from __future__ import annotations

import asyncio
import os
import random
import sys
import tempfile
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

from benchmarks._common import median, percentile, read_jsonl, timer, write_results
from llama_kb import KnowledgeBase
from llama_kb.agent_graph import AgentGraph, Change
from llama_kb.agent_graph import _snapshots as snaps

PASSAGES = 300
QUESTIONS = 50
CONCEPTS = 2000
FANOUT = 3
TRAVERSALS = 100
WORKSPACE = "bench"
REPO = Path(__file__).resolve().parents[1]


def run(dataset: Path, out_dir: Path) -> dict[str, Any]:
    """Build the knowledge base, time both faces, write ``mcp.json`` / ``mcp.md``."""
    rng = random.Random(7)
    questions = [q["question"] for q in read_jsonl(dataset / "questions.jsonl")[:QUESTIONS]]
    starts = [f"concept://{WORKSPACE}/c{rng.randrange(CONCEPTS)}" for _ in range(TRAVERSALS)]
    with tempfile.TemporaryDirectory() as tmp:
        kb_dir = Path(tmp) / "kb"
        corpus = Path(tmp) / "corpus.jsonl"
        lines = (dataset / "corpus.jsonl").read_text(encoding="utf-8").splitlines()
        corpus.write_text("\n".join(lines[:PASSAGES]) + "\n", encoding="utf-8")
        with KnowledgeBase.open(kb_dir) as kb:
            kb.ingest(corpus)
            graph = AgentGraph.open(kb, workspace=WORKSPACE)
            _build_graph(graph, rng)
            python = {
                "traverse": _time(lambda u: graph.traverse(u), starts),
                "retrieve": _time(lambda q: kb.retrieve(q, top_k=5), questions),
            }
            graph.close()
        mcp = asyncio.run(_time_mcp(kb_dir, starts, questions))
    figures = {
        "passages": PASSAGES,
        "concepts": CONCEPTS,
        "relations": CONCEPTS * FANOUT,
        "python_ms": python,
        "mcp_ms": {k: v for k, v in mcp.items() if k != "startup_s"},
        "mcp_startup_s": mcp["startup_s"],
    }
    write_results(out_dir, "mcp", figures, _markdown(figures))
    print(_markdown(figures))
    return figures


def _build_graph(graph: AgentGraph, rng: random.Random) -> None:
    changes = []
    for i in range(CONCEPTS):
        uri = f"concept://{WORKSPACE}/c{i}"
        props = {"workspace": WORKSPACE, "path": f"c{i}", "content": f"Concept number {i}."}
        node = {"uri": uri, "label": snaps.CONCEPT, "name": f"c{i}", "properties": props}
        changes.append(Change("node", uri, None, node))
    seen = set()
    for i in range(CONCEPTS):
        for _ in range(FANOUT):
            j = rng.randrange(CONCEPTS)
            if j == i or (i, j) in seen:
                continue
            seen.add((i, j))
            source, target = f"concept://{WORKSPACE}/c{i}", f"concept://{WORKSPACE}/c{j}"
            weight = rng.choice([0.1, 0.25, 0.5, 0.75, 1.0])
            rel = {"source": source, "target": target, "type": "related_to", "weight": weight,
                   "properties": {}}  # fmt: skip
            changes.append(Change("relation", snaps.relation_key(source, "related_to", target),
                                  None, rel))  # fmt: skip
    graph.commit(changes, "benchmark graph")


def _time(call: Callable[[str], Any], inputs: list[str]) -> dict[str, float]:
    call(inputs[0])  # warm caches (retrieval snapshot, BM25)
    times = []
    for item in inputs:
        with timer() as elapsed:
            call(item)
        times.append(elapsed() * 1000)
    return _summary(times)


def _summary(times: list[float]) -> dict[str, float]:
    return {"median": round(median(times), 2), "p95": round(percentile(times, 0.95), 2)}


async def _time_mcp(kb_dir: Path, starts: list[str], questions: list[str]) -> dict[str, Any]:
    from mcp import ClientSession, StdioServerParameters
    from mcp.client.stdio import stdio_client

    env = {**os.environ, "PYTHONPATH": str(REPO)}
    params = StdioServerParameters(
        command=sys.executable,
        args=["-m", "llama_kb", "mcp", "--kb", str(kb_dir), "--workspace", WORKSPACE],
        env=env,
    )
    started = time.perf_counter()
    async with stdio_client(params) as (read, write), ClientSession(read, write) as session:
        await session.initialize()
        startup = time.perf_counter() - started

        async def timed(tool: str, key: str, inputs: list[str], **extra: Any) -> dict[str, float]:
            await session.call_tool(tool, {key: inputs[0], **extra})
            times = []
            for item in inputs:
                t0 = time.perf_counter()
                result = await session.call_tool(tool, {key: item, **extra})
                times.append((time.perf_counter() - t0) * 1000)
                if result.is_error:
                    raise RuntimeError(result.content[0].text)  # type: ignore[union-attr]
            return _summary(times)

        traverse = await timed("traverse", "uri", starts)
        retrieve = await timed("retrieve", "query", questions, top_k=5)
    return {"traverse": traverse, "retrieve": retrieve, "startup_s": round(startup, 2)}


def _markdown(f: dict[str, Any]) -> str:
    rows = [
        f"| {op} | {f['python_ms'][op]['median']} | {f['python_ms'][op]['p95']} | "
        f"{f['mcp_ms'][op]['median']} | {f['mcp_ms'][op]['p95']} | "
        f"{round(f['mcp_ms'][op]['median'] - f['python_ms'][op]['median'], 2)} |"
        for op in ("traverse", "retrieve")
    ]
    return "\n".join(
        [
            f"MCP vs Python: {f['passages']} passages, agent graph of {f['concepts']} concepts / "
            f"~{f['relations']} relations; server start-up {f['mcp_startup_s']} s.",
            "",
            "| call | Python median ms | Python p95 ms | MCP median ms | MCP p95 ms | "
            "MCP overhead ms |",
            "|---|---|---|---|---|---|",
            *rows,
            "",
        ]
    )
