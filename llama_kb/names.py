"""Entity names: normalisation, aliases, and finding known names in text.

Used at ingestion (link chunks to the names already in the graph) and at query time
(link the question to graph nodes). Matching is on word tokens (punctuation ignored, so
"A. J. Mintu" matches "A J Mintu"), leftmost-longest, without overlaps. Strictness keeps
generic words from linking: a one-word name must match with its exact case and start with
a capital or a digit ("Red" never matches "red"); a longer name matches in any case
(questions are often Title Cased) if the matched span has a capitalised word or a digit.
"""

from __future__ import annotations

import re
import unicodedata
from collections.abc import Callable, Iterable, Iterator, Mapping, Sequence
from dataclasses import dataclass
from functools import lru_cache

_TOKEN = re.compile(r"\w+", re.UNICODE)
_TRAILING_PAREN = re.compile(r"\s*\([^()]*\)\s*$")
_PLACE_QUALIFIER = re.compile(r"^([^,]+),\s+([^,]+)$")


@lru_cache(maxsize=200_000)
def fold(text: str) -> str:
    """Case- and accent-insensitive form of ``text`` (for keys and comparisons; cached: the
    same words and names are folded over and over at query time)."""
    decomposed = unicodedata.normalize("NFKD", text)
    return "".join(c for c in decomposed if not unicodedata.combining(c)).casefold()


def tokens(text: str) -> list[str]:
    """Word tokens of ``text``, punctuation dropped."""
    return _TOKEN.findall(text)


@lru_cache(maxsize=50_000)
def name_key(name: str) -> str:
    """A stable key: folded tokens joined by ``-`` (``"Sleep, My Love"`` -> ``sleep-my-love``;
    cached: a query's fact ranking keys the same few hundred names several times)."""
    return "-".join(fold(t) for t in tokens(name))


def aliases(name: str) -> list[str]:
    """Surface forms a name is found by: itself, and without a trailing ``(...)`` qualifier."""
    forms = [name.strip()]
    bare = _TRAILING_PAREN.sub("", name).strip()
    if bare and bare != forms[0]:
        forms.append(bare)
    return forms


def qualified_head(name: str) -> str | None:
    """``name`` without a trailing ``, Qualifier`` of capitalised words ("West Chicago,
    Illinois" -> "West Chicago", "Au Gres Township, Michigan" -> "Au Gres Township"), or
    ``None``: text mentions such a page by its head alone."""
    found = _PLACE_QUALIFIER.match(_TRAILING_PAREN.sub("", name).strip())
    if found is None or not all(_capitalised(t) for t in tokens(found.group(2))):
        return None
    return found.group(1).strip()


def matchable_forms(name: str) -> list[list[str]]:
    """The word tokens of each alias of ``name`` that can be matched in text, and of its
    :func:`qualified_head`.

    A lower-case single word is a common noun, not a name, and is left out; a one-word name
    matches only with its exact case, a longer one in any case (see :class:`NameMatcher`).
    """
    forms = []
    head = qualified_head(name)
    for form in [*aliases(name), *([head] if head else [])]:
        toks = tokens(form)
        if toks and (len(toks) > 1 or _capitalised(toks[0])):
            forms.append(toks)
    return forms


@dataclass(frozen=True)
class Mention:
    """A known name found in a text."""

    node_id: str
    surface: str
    start: int
    end: int


class NameMatcher:
    """Finds known names in text: a token trie, longest match wins, no overlaps."""

    def __init__(self) -> None:
        self._trie: dict[str, dict] = {}
        self._size = 0

    def __len__(self) -> int:
        return self._size

    def add(self, name: str, node_id: str) -> None:
        """Register ``name`` (and its aliases) as a way to mention ``node_id``."""
        for toks in matchable_forms(name):
            node = self._trie
            for tok in toks:
                node = node.setdefault(fold(tok), {})
            targets = node.setdefault("", {})
            if node_id not in targets:
                targets[node_id] = toks if len(toks) == 1 else None
                self._size += 1

    def add_all(self, names: Iterable[tuple[str, str]]) -> NameMatcher:
        """Register many ``(name, node_id)`` pairs; returns self."""
        for name, node_id in names:
            self.add(name, node_id)
        return self

    def find(self, text: str) -> list[Mention]:
        """Every known name in ``text``, leftmost-longest, as :class:`Mention` (one per node)."""
        return list(self._iter(text))

    def _iter(self, text: str) -> Iterator[Mention]:
        if not self._trie:
            return
        words = list(_TOKEN.finditer(text))
        folded = [fold(m.group()) for m in words]
        i = 0
        while i < len(words):
            node = self._trie
            best: tuple[int, list[str]] | None = None
            j = i
            while j < len(words) and folded[j] in node:
                node = node[folded[j]]
                j += 1
                if "" in node:
                    accepted = [
                        node_id
                        for node_id, exact in node[""].items()
                        if self._accepts(words[i:j], exact)
                    ]
                    if accepted:
                        best = (j, accepted)
            if best is None:
                i += 1
                continue
            end, accepted = best
            start_char, end_char = words[i].start(), words[end - 1].end()
            for node_id in accepted:
                yield Mention(node_id, text[start_char:end_char], start_char, end_char)
            i = end

    @staticmethod
    def _accepts(span: list[re.Match[str]], exact: list[str] | None) -> bool:
        if exact is not None:  # one-word name: exact case
            return span[0].group() == exact[0]
        return any(_capitalised(m.group()) for m in span)


TitledLookup = Callable[[list[str]], Mapping[str, Mapping[str, "tuple[bool, str | None]"]]]
"""Name keys -> ``{node id: (whether it is a document title, exact spelling for one-word
names, else None)}`` (a store lookup)."""


def find_titles_first(
    texts: Sequence[str], lookup: TitledLookup, longest: int = 12, unique: bool = True
) -> list[list[Mention]]:
    """Known names in each of ``texts`` as :class:`NameMatcher` finds them (leftmost-longest,
    no overlaps, one-word names by exact case, one mention per node unless ``unique`` is
    false, for counting), with the names looked up by key in a store: every word span of up
    to ``longest`` words of all the texts in one ``lookup`` call.

    Titles win: titles are matched first, then other names, so a longer name does not hide
    a title inside it ("West Chicago" in "West Chicago High School": both are found), while
    a name spelled like a title, or one that cuts across a title ("first Jason" in "born
    first, Jason Katims"), is left out."""
    parsed = [_word_spans(text, longest) for text in texts]
    keys = dict.fromkeys(key for _, _, starting in parsed for keys in starting for key in keys)
    forms = lookup(list(keys)) if keys else {}
    titles = {k: {n: e for n, (title, e) in v.items() if title} for k, v in forms.items()}
    others = {  # names spelled like no title
        k: {n: e for n, (_, e) in v.items()}
        for k, v in forms.items()
        if not any(title for title, _ in v.values())
    }
    return [
        [*found, *(m for m in names if not any(_cuts(m, t) for t in found))]
        for found, names in (
            (_resolve(*spans, titles, unique), _resolve(*spans, others, unique)) for spans in parsed
        )
    ]


def _cuts(name: Mention, title: Mention) -> bool:
    """Whether ``name`` overlaps ``title`` without holding all of it."""
    overlaps = name.start < title.end and title.start < name.end
    return overlaps and not (name.start <= title.start and title.end <= name.end)


_Spans = tuple[str, list[re.Match[str]], list[list[str]]]
"""A text, its words, and for each word the folded keys of the spans of words it starts
(one word, two words, ...)."""


def _word_spans(text: str, longest: int) -> _Spans:
    words = list(_TOKEN.finditer(text))
    folded = [fold(m.group()) for m in words]
    starting: list[list[str]] = []
    for i, first in enumerate(folded):
        keys = [first]
        for word in folded[i + 1 : i + longest]:
            keys.append(f"{keys[-1]}-{word}")
        starting.append(keys)
    return text, words, starting


def _resolve(
    text: str,
    words: list[re.Match[str]],
    starting: list[list[str]],
    found: Mapping[str, Mapping[str, str | None]],
    unique: bool,
) -> list[Mention]:
    mentions: list[Mention] = []
    seen: set[str] = set()
    i = 0
    while i < len(words):
        end = i + 1
        keys = starting[i]
        for j in range(i + len(keys), i, -1):
            targets = found.get(keys[j - i - 1])
            if not targets:
                continue
            accepted = [
                node_id
                for node_id, exact in targets.items()
                if NameMatcher._accepts(words[i:j], None if exact is None else [exact])
            ]
            if accepted:
                start_char, end_char = words[i].start(), words[j - 1].end()
                for node_id in accepted:
                    if not unique or node_id not in seen:
                        seen.add(node_id)
                        mentions.append(
                            Mention(node_id, text[start_char:end_char], start_char, end_char)
                        )
                end = j
                break
        i = end
    return mentions


def _capitalised(word: str) -> bool:
    return word[0].isupper() or word[0].isdigit()


_CONNECTORS = frozenset({"of", "the", "de", "da", "del", "di", "du", "la", "le", "van", "von"})
STOPWORDS = frozenset(
    """a an the of in on at to for from by with and or is was were are be been being as that
    this these those it its which who whom whose what when where why how did does do has have
    had than then there their they he she his her him i you we our your not no but if into
    about""".split()  # noqa: SIM905 - a word list reads better as text
)
"""Words too common to search by or to start a name span with (folded)."""

_FUNCTION_WORDS = STOPWORDS | {"can", "could", "tell", "describe", "explain", "list", "show"}


def candidate_spans(text: str, max_spans: int = 5) -> list[str]:
    """Runs of capitalised words that may name something ("Nathan H Juran", "Bank of Mars").

    Lower-case connectors ("of", "de", ...) may sit inside a run; leading function words
    ("Who", "The", "There", ...) are dropped. Used to link names the exact matcher missed.
    """
    words = list(_TOKEN.finditer(text))
    spans: list[str] = []
    i = 0
    while i < len(words) and len(spans) < max_spans:
        if not _capitalised(words[i].group()):
            i += 1
            continue
        j = i + 1
        while j < len(words) and (
            _capitalised(words[j].group())
            or (
                words[j].group() in _CONNECTORS
                and j + 1 < len(words)
                and _capitalised(words[j + 1].group())
            )
        ):
            j += 1
        run = words[i:j]
        while run and fold(run[0].group()) in _FUNCTION_WORDS:
            run = run[1:]
        if run:
            span = text[run[0].start() : run[-1].end()]
            if span not in spans:
                spans.append(span)
        i = j
    return spans
