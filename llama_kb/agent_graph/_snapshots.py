"""Reading and writing agent-graph nodes and relations as plain dicts (snapshots).

Snapshots are what commits store. Nodes are ``{"uri", "label", "name", "properties"}``;
relations are ``{"source", "target", "type", "weight", "properties"}``. They go through the
public graph-store API only; each stored relation carries an ``agent_key`` property so a single
relation can be deleted with ``delete(properties=...)``.
"""

from __future__ import annotations

from collections.abc import Iterable
from typing import Any

from llama_index.core.graph_stores.types import LabelledNode, Relation

from llama_kb.agent_graph.commits import Change
from llama_kb.graph_model import NamedNode
from llama_kb.stores.graph import KBGraphStore
from llama_kb.stores.traversal import relation_weight

CONCEPT = "concept"
RESOURCE = "resource"
MISSING = "missing_concept"
"""Label of a placeholder for a concept that a relation names but nobody wrote yet."""
AGENT_LABELS = (CONCEPT, RESOURCE, MISSING)
AGENT_KEY = "agent_key"


def relation_key(source: str, rel_type: str, target: str) -> str:
    """The identity of a relation, as shown in commits: ``source -[type]-> target``."""
    return f"{source} -[{rel_type}]-> {target}"


def node_snapshot(node: LabelledNode) -> dict[str, Any]:
    """A node as a snapshot dict."""
    return {
        "uri": node.id,
        "label": node.label,
        "name": getattr(node, "name", None),
        "properties": dict(node.properties),
    }


def relation_snapshot(rel: Relation) -> dict[str, Any]:
    """A relation as a snapshot dict (without the bookkeeping ``agent_key``)."""
    props = {k: v for k, v in rel.properties.items() if k not in ("weight", AGENT_KEY)}
    return {
        "source": rel.source_id,
        "target": rel.target_id,
        "type": rel.label,
        "weight": relation_weight(rel),
        "properties": props,
    }


def read_nodes(store: KBGraphStore, uris: Iterable[str]) -> dict[str, dict[str, Any]]:
    """Snapshots of the agent nodes among ``uris`` that exist."""
    wanted = list(dict.fromkeys(uris))
    if not wanted:
        return {}
    nodes = store.get(ids=wanted)  # type: ignore[attr-defined]
    return {n.id: node_snapshot(n) for n in nodes if n.label in AGENT_LABELS}


def read_relations(store: KBGraphStore, uris: Iterable[str]) -> list[dict[str, Any]]:
    """Snapshots of the agent relations touching any of ``uris`` (each once)."""
    wanted = list(dict.fromkeys(uris))
    if not wanted:
        return []
    seen: dict[str, dict[str, Any]] = {}
    for _, rel, _ in store.get_triplets(ids=wanted):  # type: ignore[attr-defined]
        if AGENT_KEY in rel.properties:
            snap = relation_snapshot(rel)
            seen.setdefault(relation_key(snap["source"], snap["type"], snap["target"]), snap)
    return list(seen.values())


def read_relation(
    store: KBGraphStore, source: str, rel_type: str, target: str
) -> dict[str, Any] | None:
    """The snapshot of one relation, or ``None``."""
    for snap in read_relations(store, [source]):
        if (snap["source"], snap["type"], snap["target"]) == (source, rel_type, target):
            return snap
    return None


def apply_changes(store: KBGraphStore, changes: list[Change]) -> None:
    """Write the ``after`` state of each change, in order (``None`` deletes)."""
    for change in changes:
        if change.kind == "node":
            if change.after is None:
                store.delete(ids=[change.key])
            else:
                store.upsert_nodes([_node(change.after)])
        elif change.after is None:
            store.delete(properties={AGENT_KEY: change.key})
        else:
            store.upsert_relations([_relation(change.key, change.after)])


def _node(snap: dict[str, Any]) -> LabelledNode:
    return NamedNode(
        id_=snap["uri"],
        name=snap["name"] or snap["uri"],
        label=snap["label"],
        properties=dict(snap["properties"]),
    )


def _relation(key: str, snap: dict[str, Any]) -> Relation:
    props = {**snap["properties"], "weight": snap["weight"], AGENT_KEY: key}
    return Relation(
        label=snap["type"], source_id=snap["source"], target_id=snap["target"], properties=props
    )
