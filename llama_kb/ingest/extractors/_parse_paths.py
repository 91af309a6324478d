"""Walking spaCy's dependency parse for the sentence extractor: where a mention hangs from
the sentence, its heads up to the root (with one repair of a common mis-attachment), and
the conjunctions and appositions a relation may run through."""

from __future__ import annotations

from typing import Any

__all__ = ["ancestors", "anchor", "chain", "head_of", "is_subject"]


def anchor(doc: Any, start: int, end: int) -> Any:
    """The token a mention hangs from the sentence by. A title often parses as a clause of
    its own ("Everything I Like", "Remember the Day"): of its tokens whose head lies outside
    it, a subject says best how the mention relates to the rest."""
    span = doc[start:end]
    outer = [t for t in span if not start <= t.head.i < end]
    subject = next((t for t in outer if t.dep_ in {"nsubj", "nsubjpass"}), None)
    return subject if subject is not None else span.root


def is_subject(doc: Any, start: int, end: int) -> bool:
    """Whether the span ``start..end`` is the subject of its clause."""
    return bool(anchor(doc, start, end).dep_ in {"nsubj", "nsubjpass"})


def head_of(token: Any) -> Any:
    """``token``'s head, except for a participle the parser hung from the object of the
    participle before it ("a film released by Fox, directed by King"): that one is a sister
    of the first participle and hangs from the same noun."""
    head = token.head
    if token.dep_ == "acl" and token.tag_ == "VBN" and head.dep_ == "pobj":
        prep = head.head
        earlier = prep.head
        between = token.doc[head.i + 1 : token.i]
        if (
            prep.dep_ in {"agent", "prep"}
            and earlier.dep_ == "acl"
            and earlier.tag_ == "VBN"
            and any(t.text == "," for t in between)
        ):
            return earlier.head
    return head


def ancestors(token: Any) -> list[Any]:
    """``token``'s heads up to the sentence root, by :func:`head_of`."""
    found: list[Any] = []
    while token.head.i != token.i and len(found) < 64:  # spaCy makes a new Token per access
        token = head_of(token)
        found.append(token)
    return found


def chain(token: Any) -> set[int]:
    """Tokens ``token`` hangs from by conjunction or apposition ("X and Y", "Pitäjänmäki,
    Helsinki"): a relation to ``token`` may run through them."""
    found: set[int] = set()
    while token.dep_ in {"conj", "appos"} and token.head.i != token.i and len(found) < 6:
        token = token.head
        found.add(token.i)
    return found
