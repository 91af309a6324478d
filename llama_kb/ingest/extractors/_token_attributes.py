"""spaCy's ``attribute_ruler`` rules applied by lookup instead of its ``Matcher``.

The English pipelines' attribute ruler (coarse POS, morphology and a few lemmas from the
tagger's fine tags, plus word exceptions) runs every one of its ~180 patterns at every
token: about 30 % of the whole parse on these pipelines. Its patterns are single words or
word pairs on ``TAG``, ``LOWER``, ``DEP`` or ``IS_SPACE`` (values, ``IN``, ``NOT_IN``,
``REGEX``), so each token needs only the few patterns filed under its own tag, word or
dependency (and the two or three that name none). :func:`replace_attribute_ruler` swaps the
ruler for :class:`TokenAttributes` when every pattern is of that kind, and leaves the
pipeline as it is otherwise. The rules, their order ("later rules have precedence") and
the attributes set are the ruler's own.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Sequence
from typing import Any

__all__ = ["TokenAttributes", "replace_attribute_ruler"]

_RULER = "attribute_ruler"
_READ: dict[str, Callable[[Any], Any]] = {
    "TAG": lambda token: token.tag_,
    "LOWER": lambda token: token.lower_,
    "DEP": lambda token: token.dep_,
    "IS_SPACE": lambda token: token.is_space,
}
_ANCHORS = ("TAG", "LOWER", "DEP", "IS_SPACE")
"""Attributes a pattern's first word is filed under (one it names values of), by preference."""
_ANYWHERE = ("", "")
"""Where a pattern naming no values of any attribute is filed: tried at every token."""

_Test = tuple[tuple[Callable[[Any], Any], Callable[[Any], bool]], ...]
"""One word of a pattern: each attribute read and whether its value passes."""


class UnsupportedPattern(ValueError):
    """A ruler pattern this lookup does not reproduce exactly."""


def _values(value: Any) -> frozenset[Any] | None:
    """The values a constraint allows, if it lists them (a value or ``IN``)."""
    if isinstance(value, str | bool):
        return frozenset([value])
    if isinstance(value, dict) and set(value) == {"IN"}:
        return frozenset(value["IN"])
    return None


def _passes_value(value: Any) -> Callable[[Any], bool]:
    allowed = _values(value)
    if allowed is not None:
        return allowed.__contains__
    if isinstance(value, dict) and len(value) == 1:
        ((operator, argument),) = value.items()
        if operator == "NOT_IN":
            excluded = frozenset(argument)
            return lambda found: found not in excluded
        if operator == "REGEX":
            pattern = re.compile(argument)
            return lambda found: pattern.search(found) is not None
    raise UnsupportedPattern(f"constraint {value!r}")


def _word_test(word: dict[str, Any], known: str = "") -> _Test:
    """The constraints of one pattern word, less the attribute ``known`` to pass."""
    unknown = set(word) - set(_READ)
    if unknown:
        raise UnsupportedPattern(f"attributes {sorted(unknown)}")
    return tuple((_READ[key], _passes_value(value)) for key, value in word.items() if key != known)


def _anchor(word: dict[str, Any]) -> tuple[str, frozenset[Any]]:
    """The attribute a first word is filed under and its values (:data:`_ANYWHERE` if none)."""
    for key in _ANCHORS:
        allowed = _values(word[key]) if key in word else None
        if allowed is not None:
            return key, allowed
    return _ANYWHERE[0], frozenset([_ANYWHERE[1]])


_Entry = tuple[int, _Test, "_Test | None"]
"""A pattern filed under its first word: its rule, the rest of the first word's test, and
the second word's test if it has two."""


class TokenAttributes:
    """A ruler's rules, each filed under its first word's tag (else word, else space flag).

    Args:
        patterns: The ruler's rules in order: ``{"patterns": [[word, ...], ...], ...}``.
        attrs: The ruler's normalised attributes of each rule.
        indices: Which word of a match each rule sets.
        set_attrs: Sets normalised attributes on a token (spaCy's ``set_token_attrs``).
    """

    def __init__(
        self,
        patterns: Sequence[dict[str, Any]],
        attrs: Sequence[dict[Any, Any]],
        indices: Sequence[int],
        set_attrs: Callable[[Any, dict[Any, Any]], None],
    ) -> None:
        self._by_anchor: dict[tuple[str, Any], list[_Entry]] = {}
        for rule, entry in enumerate(patterns):
            for words in entry["patterns"]:
                if not 1 <= len(words) <= 2 or not -len(words) <= indices[rule] < len(words):
                    raise UnsupportedPattern(f"{len(words)} words, index {indices[rule]}")
                key, values = _anchor(words[0])
                first = _word_test(words[0], known=key)
                second = _word_test(words[1]) if len(words) == 2 else None
                for value in values:
                    self._by_anchor.setdefault((key, value), []).append((rule, first, second))
        self._attrs = list(attrs)
        self._indices = list(indices)
        self._set_attrs = set_attrs

    def __call__(self, doc: Any) -> Any:
        """Apply the rules to ``doc`` in place, as the ruler would; returns ``doc``."""
        tokens = list(doc)
        matches: list[tuple[int, int, int]] = []
        for start, token in enumerate(tokens):
            anchors = (
                ("TAG", token.tag_),
                ("LOWER", token.lower_),
                ("DEP", token.dep_),
                ("IS_SPACE", token.is_space),
                _ANYWHERE,
            )
            for anchor in anchors:
                for rule, first, second in self._by_anchor.get(anchor, ()):
                    if first and not _passes(token, first):
                        continue
                    if second is None:
                        matches.append((rule, start, start + 1))
                    elif start + 1 < len(tokens) and _passes(tokens[start + 1], second):
                        matches.append((rule, start, start + 2))
        matches.sort()  # later rules have precedence
        for rule, start, end in matches:
            index = self._indices[rule]
            self._set_attrs(tokens[start + index if index >= 0 else end + index], self._attrs[rule])
        return doc


def _passes(token: Any, test: _Test) -> bool:
    return all(passes(read(token)) for read, passes in test)


def replace_attribute_ruler(nlp: Any) -> TokenAttributes | None:
    """Disable ``nlp``'s attribute ruler and return its rules as :class:`TokenAttributes`,
    to apply to each parsed doc; ``None`` (the pipeline unchanged) when the ruler is absent,
    disabled, not the last component, or has a pattern the lookup does not reproduce."""
    if not nlp.pipe_names or nlp.pipe_names[-1] != _RULER:
        return None
    from spacy.tokens._retokenize import set_token_attrs

    ruler = nlp.get_pipe(_RULER)
    try:
        attributes = TokenAttributes(ruler.patterns, ruler.attrs, ruler.indices, set_token_attrs)
    except UnsupportedPattern:
        return None
    nlp.disable_pipe(_RULER)
    return attributes
