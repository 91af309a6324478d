"""Adversarial leak suite: records a principal may not read must not reach it in any form.

Three users in two organizations (alice and bob in ``acme``, alice also in group ``eng``;
carol in ``globex``) and anonymous callers query a knowledge base whose public, organization,
group and private documents mention the same entities. Two kinds of probe:

* **markers**: words that occur only in records a principal may not read never appear in
  anything it gets (passages, facts, entities, ids, the whole trace);
* **non-interference**: what a principal gets from the shared knowledge base is what it
  gets from a knowledge base holding only the records it may read: the same passages, facts,
  entities, scores and counts. Whatever could leak (a score moved by a private word, a capped
  neighbourhood, a count) makes the two differ.
"""

from __future__ import annotations

import json
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
import servers
from llama_index.core import Document
from llama_index.core.base.embeddings.base import BaseEmbedding

from llama_kb import KBConfig, KnowledgeBase, Principal
from llama_kb.errors import QueryError

chroma_server = servers.chroma_server
falkordb_server = servers.falkordb_server

DOCS: dict[str, tuple[str, str, str]] = {
    # id: (access, title, text)
    "pub-acme": (
        "public",
        "Acme Corp",
        "Acme Corp is a robotics company based in Berlin. Acme Corp works with Globex "
        "Industries on Project Falcon, a public research programme on warehouse robots.",
    ),
    "pub-globex": (
        "public",
        "Globex Industries",
        "Globex Industries builds small satellites in Lyon. Globex Industries was founded "
        "in 1998. Project Falcon uses Globex satellites for tracking.",
    ),
    "acme-budget": (
        "org:acme",
        "Falcon budget",
        "Project Falcon has a budget of twelve million euros. Project Falcon is led by Dana "
        "Whitfield. Dana Whitfield reports to the Acme Corp board.",
    ),
    "acme-eng": (
        "org:acme#eng",
        "Falcon engineering",
        "The Falcon launch codename is Nightjar. Priya Raman is the engineering lead of "
        "Project Falcon. Nightjar ships in spring.",
    ),
    "alice-notes": (
        "user:alice",
        "Alice notes",
        "Alice private notes: Dana Whitfield plans to acquire Globex Industries in March. "
        "The acquisition code word is Marigold.",
    ),
    "bob-table": (
        "user:bob",
        "Bob contacts",
        "| Person | Role | Company |\n|---|---|---|\n| Bob Stone | CFO | Acme Corp |\n"
        "| Quentin Vale | auditor | Globex Industries |",
    ),
    "carol-notes": (
        "user:carol",
        "Carol notes",
        "Carol private notes: Globex Industries plans layoffs in Lyon. Zephyr Labs is the "
        "secret partner of Project Falcon.",
    ),
    "globex-revenue": (
        "org:globex",
        "Globex revenue",
        "Globex Industries quarterly revenue is forty million euros. Zephyr Labs is a "
        "subsidiary of Globex Industries. Orla Finch is the Globex treasurer.",
    ),
}

MARKERS = {
    "acme-budget": ["twelve million", "Whitfield", "budget"],
    "acme-eng": ["Nightjar", "Priya", "codename"],
    "alice-notes": ["Marigold", "acquire"],
    "bob-table": ["Bob Stone", "Quentin", "auditor"],
    "carol-notes": ["layoffs", "secret partner"],
    "globex-revenue": ["forty million", "Orla", "treasurer"],
}
"""Words that occur only in one non-public document (and maybe others as private)."""

PRINCIPALS: dict[str, Principal | None] = {
    "anonymous": None,
    "alice": Principal(user_id="alice", org_id="acme", groups=frozenset({"eng"})),
    "bob": Principal(user_id="bob", org_id="acme"),
    "carol": Principal(user_id="carol", org_id="globex"),
}

QUERIES = [
    "What is Project Falcon?",
    "Who leads Project Falcon?",
    "What is the budget of Project Falcon?",
    "What is the Falcon launch codename?",
    "Who is Dana Whitfield?",
    "Who is Priya Raman?",
    "Who plans to acquire Globex Industries?",
    "What is Marigold?",
    "Who is the CFO of Acme Corp?",
    "Who is Quentin Vale?",
    "What is the revenue of Globex Industries?",
    "Who is Orla Finch?",
    "What is Zephyr Labs?",
    "Tell me about Globex Industries layoffs",
    "Nightjar",
    "Acme Corp",
]


def _readable(principal: Principal | None, access: str) -> bool:
    return (principal or Principal()).can_read(access)


def _load(kb: KnowledgeBase, doc_ids: list[str]) -> None:
    by_access: dict[str, list[Document]] = {}
    for doc_id in doc_ids:
        access, title, text = DOCS[doc_id]
        doc = Document(text=text, id_=doc_id, metadata={"title": title})
        by_access.setdefault(access, []).append(doc)
    for access, docs in by_access.items():
        report = kb.add_documents(docs, access=access)
        assert report.ok, report.failed


@pytest.fixture(
    scope="module",
    params=[
        "embedded",
        pytest.param("chroma-server", marks=pytest.mark.integration),
        pytest.param("servers", marks=pytest.mark.integration),
    ],
)
def kbs(
    request: pytest.FixtureRequest,
    tmp_path_factory: pytest.TempPathFactory,
    embedding: BaseEmbedding,
) -> Iterator[dict[str, KnowledgeBase]]:
    """The shared knowledge base, and per principal one holding only what it may read:
    embedded stores, vectors on a Chroma server, or a Chroma server and FalkorDB (both
    started by the tests)."""
    root = tmp_path_factory.mktemp("leaks")
    env = request.getfixturevalue("chroma_server").env if request.param != "embedded" else {}
    if request.param == "servers":
        env = {**env, **request.getfixturevalue("falkordb_server").env}
    opened: dict[str, KnowledgeBase] = {}

    def open_kb(name: str) -> KnowledgeBase:
        config = KBConfig.from_env(root / name, env=env)
        return KnowledgeBase.open(config=config, embedding=embedding)

    try:
        opened["shared"] = open_kb("shared")
        _load(opened["shared"], list(DOCS))
        for name, principal in PRINCIPALS.items():
            kb = open_kb(name)
            opened[name] = kb
            _load(kb, [d for d, (access, _, _) in DOCS.items() if _readable(principal, access)])
        yield opened
    finally:
        for kb in opened.values():
            kb.close()


def _hidden_markers(principal: Principal | None) -> list[str]:
    return [
        marker
        for doc_id, markers in MARKERS.items()
        if not _readable(principal, DOCS[doc_id][0])
        for marker in markers
    ]


def _comparable(payload: dict[str, Any]) -> dict[str, Any]:
    """What a principal reads of a result, without timings or cache state."""
    trace = payload["trace"]
    return {
        "route": payload["route"],
        "passages": [
            (p["chunk_id"], p["text"], round(p["score"], 6)) for p in payload["unstructured"]
        ],
        "facts": [
            (f["subject"], f["predicate"], f["object"], round(f["score"], 6))
            for f in payload["structured_facts"]
        ],
        "entities": payload["entities"],
        "linked": [(e["id"], e["name"]) for e in trace.get("linked_entities", [])],
        "counts": {k: v.get("hits") for k, v in trace.get("retrievers", {}).items()},
    }


def _visible_docs(principal: Principal | None) -> set[str]:
    return {d for d, (access, _, _) in DOCS.items() if _readable(principal, access)}


@pytest.mark.parametrize("who", list(PRINCIPALS))
@pytest.mark.parametrize("query", QUERIES)
def test_a_probe_reveals_nothing_of_unreadable_records(
    kbs: dict[str, KnowledgeBase], who: str, query: str
) -> None:
    """Markers (at ``top_k=50``, ``min_score=0``), then non-interference (``top_k=20``)."""
    principal = PRINCIPALS[who]
    context = kbs["shared"].retrieve(query, principal=principal, top_k=50, min_score=0)
    text = json.dumps(context.to_dict(), default=str).lower()
    asked = query.lower()  # a marker the caller typed is no secret to it
    leaked = [m for m in _hidden_markers(principal) if m.lower() in text and m.lower() not in asked]
    assert not leaked, f"{who} got {leaked} for {query!r}"
    assert {p.metadata.get("doc_id") for p in context.unstructured} <= _visible_docs(principal)
    shared = kbs["shared"].retrieve(query, principal=principal, top_k=20, min_score=0)
    alone = kbs[who].retrieve(query, principal=principal, top_k=20, min_score=0)
    assert _comparable(shared.to_dict()) == _comparable(alone.to_dict())


def test_anonymous_callers_read_public_records_only(kbs: dict[str, KnowledgeBase]) -> None:
    context = kbs["shared"].retrieve("Project Falcon budget", top_k=50, min_score=0)
    assert {h.metadata["doc_id"] for h in context.unstructured} <= {"pub-acme", "pub-globex"}


def test_a_filter_on_access_cannot_widen_what_is_visible(kbs: dict[str, KnowledgeBase]) -> None:
    context = kbs["shared"].retrieve(
        "Falcon launch", principal=PRINCIPALS["bob"], filters={"access": "org:acme#eng"}, top_k=50
    )
    assert context.unstructured == []
    assert "nightjar" not in json.dumps(context.to_dict(), default=str).lower()


def test_unknown_filter_fields_are_named_from_readable_records_only(
    tmp_path: Path, embedding: BaseEmbedding
) -> None:
    with KnowledgeBase.open(tmp_path / "kb", embedding=embedding) as kb:
        kb.add_documents([Document(text="Salary of Bob is high.", metadata={"salary": 9})],
                         access="user:bob")  # fmt: skip
        kb.add_documents([Document(text="Public page about pay.", metadata={"topic": "pay"})])
        with pytest.raises(QueryError) as raised:
            kb.retrieve("pay", filters={"nope": 1})
        assert "salary" not in str(raised.value)
        assert "topic" in str(raised.value)


def test_a_knowledge_base_can_require_a_principal(tmp_path: Path, embedding: BaseEmbedding) -> None:
    config = KBConfig(path=tmp_path / "kb", access={"require_principal": True})
    with KnowledgeBase.open(config=config, embedding=embedding) as kb:
        kb.add_documents([Document(text="Some text.")])
        with pytest.raises(QueryError, match="principal"):
            kb.retrieve("text")
        assert kb.retrieve("text", principal="alice@acme").unstructured


def test_a_malformed_principal_is_a_query_error(kbs: dict[str, KnowledgeBase]) -> None:
    with pytest.raises(QueryError, match="principal"):
        kbs["shared"].retrieve("Falcon", principal="al ice@acme")


def test_the_langchain_face_passes_the_principal(kbs: dict[str, KnowledgeBase]) -> None:
    from langchain_kb import UnifiedKBRetriever

    public = UnifiedKBRetriever(kb=kbs["shared"], k=10, include_facts=True)
    carol = UnifiedKBRetriever(
        kb=kbs["shared"], k=10, include_facts=True, search_kwargs={"principal": "carol@globex"}
    )
    seen = " ".join(d.page_content for d in public.invoke("Zephyr Labs partner"))
    assert "zephyr" not in seen.lower()
    mine = " ".join(d.page_content for d in carol.invoke("Zephyr Labs partner"))
    assert "secret partner" in mine


def test_the_llama_index_face_passes_the_principal(kbs: dict[str, KnowledgeBase]) -> None:
    from llama_kb.integrations.llamaindex import UnifiedContextRetriever

    public = UnifiedContextRetriever(kbs["shared"].engine, top_k=10)
    bob = UnifiedContextRetriever(kbs["shared"].engine, top_k=10, principal="bob@acme")
    assert (
        "bob stone"
        not in " ".join(n.get_content() for n in public.retrieve("Bob Stone CFO")).lower()
    )
    assert "bob stone" in " ".join(n.get_content() for n in bob.retrieve("Bob Stone CFO")).lower()


def test_the_cli_ingests_with_access_and_queries_as_a_principal(
    capsys: pytest.CaptureFixture[str], tmp_path: Path
) -> None:
    from llama_kb.cli import main

    kb = str(tmp_path / "kb")
    public, private = tmp_path / "public", tmp_path / "private"
    public.mkdir(), private.mkdir()
    (public / "falcon.md").write_text("# Falcon\n\nProject Falcon is a public robot programme.\n")
    (private / "plan.md").write_text("# Plan\n\nProject Falcon hides the codeword Heronsbill.\n")
    assert main(["ingest", str(public), "--kb", kb, "--quiet"]) == 0
    assert main(["ingest", str(private), "--kb", kb, "--quiet", "--access", "user:dana"]) == 0
    capsys.readouterr()
    assert main(["query", "Project Falcon", "--kb", kb, "--json", "--top-k", "10"]) == 0
    assert "heronsbill" not in capsys.readouterr().out.lower()
    assert main(["query", "Project Falcon", "--kb", kb, "--as", "dana@", "--top-k", "10"]) == 0
    assert "Plan" in capsys.readouterr().out
    assert main(["ingest", str(public), "--kb", kb, "--quiet", "--access", "team one"]) != 0
    assert "unknown access" in capsys.readouterr().err


def test_the_query_engine_passes_the_principal(kbs: dict[str, KnowledgeBase]) -> None:
    def sources(**options: Any) -> str:
        engine = kbs["shared"].as_query_engine(similarity_top_k=10, **options)
        return " ".join(n.get_content() for n in engine.query("Bob Stone CFO").source_nodes)

    assert "bob stone" not in sources().lower()
    assert "bob stone" in sources(principal="bob@acme").lower()


@pytest.mark.parametrize("who", list(PRINCIPALS))
def test_plain_dense_search_reads_what_the_principal_may(
    kbs: dict[str, KnowledgeBase], who: str
) -> None:
    principal = PRINCIPALS[who]
    hits = kbs["shared"].search("Falcon budget codename acquisition", top_k=50, principal=principal)
    assert {h.doc_id for h in hits} == _visible_docs(principal)


def test_re_ingesting_under_another_access_moves_every_record(
    tmp_path: Path, embedding: BaseEmbedding
) -> None:
    folder = tmp_path / "docs"
    folder.mkdir()
    (folder / "plan.md").write_text("# Falcon plan\n\nProject Falcon hides the word Heronsbill.\n")
    with KnowledgeBase.open(tmp_path / "kb", embedding=embedding) as kb:

        def anonymous_sees() -> bool:
            context = kb.retrieve("What does Project Falcon hide?", top_k=10, min_score=0)
            return "heronsbill" in json.dumps(context.to_dict(), default=str).lower()

        assert kb.ingest(folder, access="user:dana").ok and not anonymous_sees()
        report = kb.ingest(folder)
        assert report.updated and anonymous_sees()
        assert kb.ingest(folder, access="user:dana").updated and not anonymous_sees()
        assert kb.engine.search_index.access_keys() == {"user:dana"}
        kb.remove([d.doc_id for d in kb.documents()])
        assert kb.engine.search_index.access_keys() == frozenset()


def test_a_failing_index_fails_closed(
    kbs: dict[str, KnowledgeBase], monkeypatch: pytest.MonkeyPatch
) -> None:
    def broken() -> frozenset[str]:
        raise RuntimeError("index unreadable")

    monkeypatch.setattr(kbs["shared"].engine.search_index, "access_keys", broken)
    context = kbs["shared"].retrieve("Falcon budget codename layoffs", top_k=50, min_score=0)
    assert context.trace["degraded"] and context.unstructured
    assert {h.metadata["access"] for h in context.unstructured} == {"public"}


def test_documents_carry_their_own_access(tmp_path: Path, embedding: BaseEmbedding) -> None:
    folder = tmp_path / "docs"
    folder.mkdir()
    (folder / "note.md").write_text("---\ntitle: Zed note\naccess: user:zed\n---\n\nZed only.\n")
    (folder / "rows.jsonl").write_text(
        json.dumps({"id": "r1", "text": "Acme row.", "permissions": {"level": "organization",
                    "orgId": "acme"}}) + "\n" + json.dumps({"id": "r2", "text": "Open row."}) + "\n"
    )  # fmt: skip
    (folder / "bad.md").write_text("---\naccess: galaxy:far\n---\n\nBroken.\n")
    with KnowledgeBase.open(tmp_path / "kb", embedding=embedding) as kb:
        report = kb.ingest(folder, access="org:globex")
        assert [f.source for f in report.failed] == [str(folder / "bad.md")]
        assert "unknown access" in report.failed[0].reason
        keys = {Path(d.source).name + "/" + d.doc_id.rsplit("#", 1)[-1]: d.access
                for d in kb.documents()}  # fmt: skip
        assert sorted(keys.values()) == ["org:acme", "org:globex", "user:zed"]
