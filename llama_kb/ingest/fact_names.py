"""Proper names in facts become names the graph links chunks to (HippoRAG's phrase nodes,
without an LLM).

Chunks link to the names they mention; until now those were document titles only. A
multi-hop chain often runs through a name that titles no page: "Decade is an album by Neil
Young" and "Scott Young ... the father of Neil Young" share "Neil Young", which no document
is about. So every fact end that is a proper name (:func:`is_proper_name`) becomes an entity
node that the fact's chunk mentions; linking then joins every other chunk that mentions it
(older chunks too), and the walk can cross from one passage to the next through it. On
MuSiQue two thirds of the gold passages share no title link with another gold passage of
their question (README, "Benchmarks").

The mention is as private as the chunk (its relation carries the chunk's access key), so a
name is visible only to those who may read a chunk that names it. A name that is a
document's title (or one of its matchable forms) is that document, not a second name beside
it (:func:`drop_titled`; linking prefers titles too): on 2WikiMultihopQA, where chains run
through title pages, a parallel name took 3 points of R@2.
"""

from __future__ import annotations

from collections.abc import Iterable

from llama_index.core.graph_stores.types import LabelledNode, Relation

from llama_kb import graph_model as gm
from llama_kb.access import ACCESS_FIELD, PUBLIC
from llama_kb.names import name_key
from llama_kb.stores.graph import KBGraphStore
from llama_kb.stores.search import NameForm, SearchIndex, restricted

CONNECTORS = frozenset({
    "of", "the", "de", "and", "van", "von", "la", "le", "du", "da", "del", "der", "for", "in",
    "on", "at", "&",
})  # fmt: skip
"""Lower-case words a proper name may hold inside ("University of Göttingen")."""
MOST_WORDS = 6


def is_proper_name(text: str) -> bool:
    """A capitalised phrase of one to ``MOST_WORDS`` words, :data:`CONNECTORS` allowed inside,
    not a bare number: "Neil Young", "University of Göttingen", not "compilation album"."""
    words = text.split()
    if not 1 <= len(words) <= MOST_WORDS or len(text) < 3 or text.isdigit():
        return False
    if not words[0][:1].isupper() or words[-1].lower() in CONNECTORS:
        return False
    return all(w[:1].isupper() or w[:1].isdigit() or w.lower() in CONNECTORS for w in words)


def fact_names(
    facts: Iterable[LabelledNode], title: str | None, access: str = PUBLIC
) -> tuple[list[gm.NamedNode], list[Relation]]:
    """Entity nodes for the proper-name ends of ``facts`` (one document's, whose ``title`` is
    left out: its page is already a name), and one ``MENTIONS`` relation from each fact's
    chunk to each of them.

    A document of a restricted ``access`` key names its own node (``entity:<key>@<access>``):
    an older chunk of another key that mentions the name links to it under that access key,
    and one link (one relation per chunk and name) cannot carry two keys.
    """
    own = name_key(title) if title else None
    nodes: dict[str, gm.NamedNode] = {}
    links: dict[tuple[str, str], Relation] = {}
    for fact in facts:
        chunk_id = fact.properties.get("chunk_id")
        if not chunk_id:
            continue
        for end in (fact.properties.get("subject", ""), fact.properties.get("object", "")):
            name = " ".join(str(end).split())
            if not is_proper_name(name) or name_key(name) == own:
                continue
            node_id = _scoped_id(name_key(name), access)
            node = nodes.setdefault(node_id, gm.NamedNode(id_=node_id, name=name, label=gm.ENTITY))
            links.setdefault(
                (chunk_id, node.id),
                gm.relation(chunk_id, gm.MENTIONS, node.id, gm.MENTION_COST, signal="fact"),
            )
    return list(nodes.values()), list(links.values())


def newly_visible(
    nodes: Iterable[LabelledNode], relations: Iterable[Relation], index: SearchIndex
) -> set[tuple[str, str]]:
    """``(entity node id, access key)`` for each of a batch's names (its extracted ``nodes``)
    that its fact ``relations`` make visible to a key's readers for the first time (call
    before storing them): older chunks those readers see are then linked to it, under that
    key (:mod:`.linking`)."""
    keys = _name_keys(nodes)
    by_key: dict[str, set[str]] = {}
    for rel in relations:
        if rel.target_id in keys and rel.properties.get("signal") == "fact":
            key = str(rel.properties.get(ACCESS_FIELD, PUBLIC))
            by_key.setdefault(key, set()).add(rel.target_id)
    new: set[tuple[str, str]] = set()
    for key, ids in by_key.items():
        seen = {f.node_id for f in _visible(index, key, [keys[i] for i in ids], gm.ENTITY)}
        new.update((node_id, key) for node_id in ids - seen)
    return new


def _scoped_id(key: str, access: str) -> str:
    """The entity id of the name whose :func:`~llama_kb.names.name_key` is ``key``, as a
    document of ``access`` names it (``entity:<key>``, or ``entity:<key>@<access>``)."""
    node_id = gm.entity_id_of_key(key)
    return node_id if access == PUBLIC else f"{node_id}@{access}"


def _key_of(node_id: str) -> str:
    """The name key in a :func:`_scoped_id`."""
    return node_id.removeprefix(gm.entity_id_of_key("")).split("@", 1)[0]


def _name_keys(nodes: Iterable[LabelledNode]) -> dict[str, str]:
    """Entity node id -> :func:`~llama_kb.names.name_key` of its name."""
    return {
        n.id: name_key(n.name)
        for n in nodes
        if n.label == gm.ENTITY and isinstance(n, gm.NamedNode)
    }


def _visible(index: SearchIndex, access: str, keys: Iterable[str], label: str) -> list[NameForm]:
    """The stored names of ``label`` spelled as one of ``keys`` that readers of ``access``
    (and of public records) see."""
    view = restricted(index, frozenset({PUBLIC, access}))
    return view.name_forms(sorted(set(keys)), (label,))


def drop_titled(
    index: SearchIndex, graph: KBGraphStore, new_names: set[tuple[str, str]]
) -> set[tuple[str, str]]:
    """After a run stored its documents: delete the ``new_names`` (``(entity id, access
    key)``, :func:`newly_visible`) spelled like a document title their readers see (a name
    that is a title is that page; a title only other readers see changes nothing); returns
    the names left."""
    by_key: dict[str, dict[str, str]] = {}
    for node_id, key in new_names:
        by_key.setdefault(key, {})[node_id] = _key_of(node_id)
    titled: set[str] = set()
    for key, names in by_key.items():
        spelled = {f.key for f in _visible(index, key, names.values(), gm.DOCUMENT)}
        titled.update(node_id for node_id, name in names.items() if name in spelled)
    if titled:
        graph.delete(ids=sorted(titled))
    return {(node_id, key) for node_id, key in new_names if node_id not in titled}
