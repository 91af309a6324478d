"""Find and remove orphans: store content that no finished document accounts for.

The manifest is the source of truth. A document is *sound* when its manifest row is
``ready`` and the vector store holds exactly its ``chunk_count`` chunks. Everything else is
reported by :func:`find_orphans` and fixed by :func:`repair`:

* ``orphan_vectors``: chunks in the vector store of documents the manifest does not know;
* ``orphan_graph``: chunk or document nodes in the graph of such documents (document nodes
  that other documents link to stay, as placeholders);
* ``unfinished``: documents left ``pending`` by an interrupted run;
* ``incomplete``: ``ready`` documents whose chunks are missing or too many.

``orphan_pieces`` and ``dangling_links`` are the knowledge layers' share, filled by
:func:`llama_kb.knowledge.repair.with_knowledge`.

Repair deletes the content of all of these and forgets the sources of unfinished and
incomplete documents, so the next ``llama-kb ingest`` reads those files again. It must run
under the knowledge base's write lock (``llama-kb doctor --repair`` takes it).
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field

from llama_kb import graph_model as gm
from llama_kb.ingest.manifest import Manifest
from llama_kb.stores.chroma_vector import ChromaChunkStore
from llama_kb.stores.graph import KBGraphStore

__all__ = ["OrphanReport", "find_orphans", "repair"]

_PREFIX = gm.doc_node_id("")


@dataclass
class OrphanReport:
    """Document ids by problem (see the module docstring); empty lists when all is sound."""

    orphan_vectors: list[str] = field(default_factory=list)
    orphan_graph: list[str] = field(default_factory=list)
    unfinished: list[str] = field(default_factory=list)
    incomplete: list[str] = field(default_factory=list)
    orphan_pieces: list[str] = field(default_factory=list)
    dangling_links: list[str] = field(default_factory=list)
    repaired: bool = False

    @property
    def ok(self) -> bool:
        """True when nothing needs repair."""
        return not (
            self.orphan_vectors
            or self.orphan_graph
            or self.unfinished
            or self.incomplete
            or self.orphan_pieces
            or self.dangling_links
        )

    def all_ids(self) -> list[str]:
        """Every affected document id, sorted, without duplicates (knowledge not included)."""
        ids = self.orphan_vectors + self.orphan_graph + self.unfinished + self.incomplete
        return sorted(set(ids))

    def summary(self) -> str:
        """One line, e.g. ``orphan vectors 2, orphan graph 0, unfinished 1, incomplete 0``."""
        line = (
            f"orphan vectors {len(self.orphan_vectors)}, orphan graph {len(self.orphan_graph)}, "
            f"unfinished {len(self.unfinished)}, incomplete {len(self.incomplete)}, "
            f"orphan pieces {len(self.orphan_pieces)}, dangling piece links "
            f"{len(self.dangling_links)}"
        )
        if self.ok:
            return "no orphans: " + line
        return ("repaired: " if self.repaired else "found: ") + line


def find_orphans(
    manifest: Manifest, vectors: ChromaChunkStore, graph: KBGraphStore
) -> OrphanReport:
    """Compare the stores with the manifest; reads only."""
    records = {d.doc_id: d for d in manifest.documents()}
    ready = {d for d, r in records.items() if r.status == "ready"}
    in_vectors = Counter(str(meta.get("doc_id", "")) for _, _, meta in vectors.iter_chunks())
    in_graph = {target[len(_PREFIX) :] for _, target, _, _ in graph.iter_relations([gm.PART_OF])}
    doc_nodes = {
        node_id[len(_PREFIX) :]
        for node_id, _, _ in graph.named_nodes(labels=[gm.DOCUMENT])
        if node_id.startswith(_PREFIX)
    }
    linked = graph.nodes_with_incoming(gm.doc_node_id(d) for d in doc_nodes - set(records))
    unlinked_nodes = {d for d in doc_nodes - set(records) if gm.doc_node_id(d) not in linked}
    return OrphanReport(
        orphan_vectors=sorted(d for d in in_vectors if d not in records),
        orphan_graph=sorted((in_graph - set(records)) | unlinked_nodes),
        unfinished=sorted(set(records) - ready),
        incomplete=sorted(d for d in ready if in_vectors.get(d, 0) != records[d].chunk_count),
    )


def repair(
    manifest: Manifest,
    vectors: ChromaChunkStore,
    graph: KBGraphStore,
    remove_documents: Callable[[Sequence[str]], None],
) -> OrphanReport:
    """Find orphans and remove them; returns what was found, marked ``repaired``.

    Args:
        manifest: The manifest.
        vectors: The chunk vector store.
        graph: The graph store.
        remove_documents: ``IngestionPipeline.remove_documents`` (deletes a document from
            every store, keeping linked document nodes as placeholders).
    """
    report = find_orphans(manifest, vectors, graph)
    if report.ok:
        return report
    affected = report.all_ids()
    sources = {r.source_path for r in manifest.documents_by_id(affected).values()}
    remove_documents(affected)
    for path in sorted(sources):  # read again by the next ingest
        manifest.delete_source(path)
    report.repaired = True
    return report
