"""Fixtures for the SQLite graph store tests, loaded with ``pytest_plugins = ["sqlite_fixtures"]``.

(Not a ``conftest.py``: test modules import ``conftest`` from ``tests/`` by that name.)
"""

from __future__ import annotations

from pathlib import Path

import pytest
from llama_index.core.graph_stores.types import EntityNode
from sqlite_helpers import rel

from llama_kb.stores.sqlite_graph import SQLitePropertyGraphStore


@pytest.fixture
def db_path(tmp_path: Path) -> Path:
    return tmp_path / "kb" / "graph.sqlite"


@pytest.fixture
def store(db_path: Path):
    with SQLitePropertyGraphStore(db_path) as s:
        yield s


@pytest.fixture
def movie_graph(store: SQLitePropertyGraphStore) -> SQLitePropertyGraphStore:
    store.upsert_nodes(
        [
            EntityNode(name="Sirk", label="person", properties={"doc": "d1"}),
            EntityNode(name="Obsession", label="film", properties={"doc": "d1"}),
            EntityNode(name="Wyman", label="person", properties={"doc": "d2"}),
            EntityNode(name="Hudson", label="person"),
            EntityNode(name="Universal", label="studio"),
        ]
    )
    store.upsert_relations(
        [
            rel("Sirk", "directed", "Obsession", 0.5, origin="d1"),
            rel("Wyman", "starred_in", "Obsession", 0.5),
            rel("Hudson", "starred_in", "Obsession", 0.5),
            rel("Obsession", "produced_by", "Universal", 0.5),
            rel("Hudson", "SOURCE", "Universal", 0.5),
        ]
    )
    return store
