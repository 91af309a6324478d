"""The search properties a Cypher graph store writes on its nodes, and how queries spell them.

Server full-text indexes tokenise, stem and fold text their own way; so that lexical search,
phrase lookups and fuzzy name matching behave as in the embedded store (FTS5 ``unicode61
remove_diacritics 2`` words; trigrams of names), the stores write pre-tokenised properties
and the full-text indexes only split them at spaces:

* chunks: ``kb_lex``, the folded words of title + text, each followed by ``_`` (a token no
  stemmer changes and no query expands), ``kb_len``, their number (BM25's length), and
  ``kb_repeats``, each token once more for every time it occurs after its first, after a
  space (most words occur once: a short string that gives a word's count in the chunk);
* names (not chunks, not facts): ``kb_keys``, their :func:`~llama_kb.names.name_key` forms
  (as :func:`~llama_kb.names.matchable_forms` registers them), the same keys as text
  (``kb_key_text``, for Neo4j's full-text index), and ``kb_grams``, their character trigrams
  encoded as tokens;
* facts: ``kb_fact_keys``, the name keys of their subject and object (and as text,
  ``kb_fact_key_text``).
"""

from __future__ import annotations

import re
from collections import Counter
from collections.abc import Iterable
from typing import Any

from llama_kb import graph_model as gm
from llama_kb.names import fold, matchable_forms, name_key

SEARCH_PROPERTIES = frozenset(
    {
        "kb_lex",
        "kb_len",
        "kb_repeats",
        "kb_keys",
        "kb_key_text",
        "kb_grams",
        "kb_fact_keys",
        "kb_fact_key_text",
    }
)
"""Properties the search index writes (never reported as node properties or metadata)."""

_WORD = re.compile(r"[^\W_]+", re.UNICODE)
_MARK = "_"


def lexical_words(text: str) -> list[str]:
    """Folded word tokens of ``text``, split at anything not a letter or digit (as FTS5)."""
    return [fold(w) for w in _WORD.findall(text)]


def word_token(word: str) -> str:
    """How a folded word is stored and queried in ``kb_lex``."""
    return word + _MARK


def gram_tokens(text: str) -> list[str]:
    """Distinct encoded character trigrams of ``text`` (spaces normalised, case folded)."""
    padded = " ".join(text.split()).casefold()
    grams = dict.fromkeys(padded[i : i + 3] for i in range(len(padded) - 2))
    return ["g" + g.encode("utf-8").hex() + _MARK for g in grams if g.strip()]


def chunk_properties(text: str, properties: dict[str, Any]) -> dict[str, Any]:
    """Search properties of a chunk with ``text`` and ``properties`` (its ``title``)."""
    title = properties.get("title")
    body = f"{title} {text}" if isinstance(title, str) and title else text
    tokens = [word_token(w) for w in lexical_words(body)]
    return {"kb_lex": " ".join(tokens), "kb_len": len(tokens), "kb_repeats": repeats(tokens)}


def repeats(tokens: Iterable[str]) -> str:
    """``" " + token`` for every occurrence of a token after its first: a token's count in
    the chunk is one more than its places in this string (see ``kb_repeats``)."""
    counts = Counter(tokens)
    return "".join(f" {token}" * (count - 1) for token, count in counts.items() if count > 1)


def name_forms(name: str) -> dict[str, str | None]:
    """Key -> exact spelling (one-word forms) of each matchable form of ``name``."""
    forms: dict[str, str | None] = {}
    for words in matchable_forms(name):
        forms.setdefault("-".join(fold(w) for w in words), words[0] if len(words) == 1 else None)
    return forms


def name_keys(name: str) -> list[str]:
    """The keys a name is looked up by (one per matchable form)."""
    return list(name_forms(name))


def name_properties(name: str) -> dict[str, Any]:
    """Search properties of a named node (keys and trigrams)."""
    keys = name_keys(name)
    return {
        "kb_keys": keys,
        "kb_key_text": " ".join(keys),
        "kb_grams": " ".join(gram_tokens(name)),
    }


def fact_properties(properties: dict[str, Any]) -> dict[str, Any]:
    """Search properties of a fact node: the name keys of its ends."""
    keys = [
        key
        for end in ("subject", "object")
        if isinstance(value := properties.get(end), str) and (key := name_key(value))
    ]
    unique = list(dict.fromkeys(keys))
    return {"kb_fact_keys": unique, "kb_fact_key_text": " ".join(unique)}


def node_properties(label: str, name: str | None, text: str | None, properties: dict) -> dict:
    """The search properties of a node with llama-kb ``label`` (empty when none apply)."""
    if label == gm.CHUNK:
        return chunk_properties(text or "", properties)
    if label == gm.FACT:
        return fact_properties(properties)
    return name_properties(name) if name else {}


def or_query(tokens: Iterable[str], separator: str) -> str:
    """A full-text query matching any of ``tokens`` (``separator``: the server's OR)."""
    return separator.join(f'"{t}"' for t in tokens)


def phrase_query(phrase: str) -> str | None:
    """The ``kb_lex`` phrase query for ``phrase`` (``None`` without words)."""
    words = lexical_words(phrase)
    return '"' + " ".join(word_token(w) for w in words) + '"' if words else None
