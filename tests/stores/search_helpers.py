"""Helpers for the search index tests (importable: ``tests/stores`` is on the path)."""

from __future__ import annotations

from llama_kb.stores.search import SearchIndex


def nearest(index: SearchIndex, text: str, k: int) -> list[str]:
    """The ids of the ``k`` names ``index`` finds spelled most like ``text``, best first."""
    return list(index.similar_names([text], k)[text])
