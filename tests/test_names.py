"""Finding known names in text: titles first."""

from __future__ import annotations

from llama_kb.names import find_titles_first

FORMS = {
    "jason-katims": {"doc:jk": (True, None)},
    "sidney-cotton": {"doc:sc": (True, None)},
    "first-jason": {"entity:first-jason": (False, None)},
    "cotton": {"entity:cotton": (False, "Cotton")},
    "katims": {"doc:katims": (True, "Katims"), "entity:katims": (False, "Katims")},
    "lyon": {"entity:lyon": (False, "Lyon")},
    "updater": {"doc:updater": (True, "Updater")},
    "graph-updater": {"entity:graph-updater": (False, None)},
}


def lookup(keys: list[str]) -> dict[str, dict[str, tuple[bool, str | None]]]:
    return {k: FORMS[k] for k in keys if k in FORMS}


def test_a_name_overlapping_a_title_is_left_out_and_other_names_stay() -> None:
    (found,) = find_titles_first(
        ["Who was born first, Jason Katims or Sidney Cotton of Lyon?"], lookup
    )
    assert [m.node_id for m in found] == ["doc:jk", "doc:sc", "entity:lyon"]
    assert found[0].surface == "Jason Katims"


def test_a_name_spelled_like_a_title_links_only_the_title() -> None:
    (found,) = find_titles_first(["Katims wrote it."], lookup, unique=False)
    assert [m.node_id for m in found] == ["doc:katims"]


def test_a_longer_name_holding_a_title_is_found_with_it() -> None:
    (found,) = find_titles_first(["How is the Graph Updater built?"], lookup)
    assert [m.node_id for m in found] == ["doc:updater", "entity:graph-updater"]
