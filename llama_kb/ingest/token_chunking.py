"""Token-aware splitting: chunks sized in the embedding model's tokens, cut on boundaries.

A segment is cut into units, coarsest first: paragraphs (blank lines), then, for a paragraph
over the budget, sentences (prose) or lines (code, i.e. segments with a ``symbol`` or
``language`` in their metadata), then lines, then words; a single word longer than the
budget is cut by characters. A segment that fits the budget is one chunk, never split.
A longer one is packed into the fewest chunks of at most the budget, cut near equal sizes
(no small leftover tail, and no last chunk that would only repeat the overlap: the rest of
a segment that fits the budget stays in the current chunk); each chunk after the first starts
with the last whole units of the previous one, the fewest that reach ``overlap`` tokens (at
most half the budget).

The budget is the chunk size (capped at the model window) minus the tokens of the title,
which :func:`~llama_kb.ingest.pipeline.embedding_text` may put in front of a chunk. WordPiece
tokens never span whitespace, so the count of units joined by whitespace is the sum of their
counts and every chunk fits.
"""

from __future__ import annotations

import itertools
import math
import re
from collections.abc import Sequence
from dataclasses import dataclass

from llama_kb.config import ChunkingConfig
from llama_kb.ingest.tokens import TokenCounter
from llama_kb.lru import LRU
from llama_kb.types import Segment, SourceDocument

__all__ = ["TokenSplitter"]

_PARAGRAPH = re.compile(r"\n[ \t]*\n\s*")
_SENTENCE = re.compile(r"(?:(?<=[.!?])|(?<=[.!?][\"')\]»”’]))\s+")
_LINE = re.compile(r"\n+")
_WORD = re.compile(r"\s+")
_PROSE_LEVELS = (_PARAGRAPH, _SENTENCE, _LINE, _WORD)
_CODE_LEVELS = (_PARAGRAPH, _LINE, _WORD)
_MIN_BUDGET = 16


@dataclass(frozen=True)
class _Unit:
    start: int
    end: int
    tokens: int


def _spans(text: str, start: int, end: int, pattern: re.Pattern[str]) -> list[tuple[int, int]]:
    """Non-blank pieces of ``text[start:end]`` between matches of ``pattern``."""
    spans: list[tuple[int, int]] = []
    position = start
    for match in pattern.finditer(text, start, end):
        if text[position : match.start()].strip():
            spans.append((position, match.start()))
        position = match.end()
    if text[position:end].strip():
        spans.append((position, end))
    return spans


class TokenSplitter:
    """Splits segments into chunks that fit the embedding model (see the module docs).

    Args:
        counter: Counts tokens as the embedding model does.
        chunk_size: Maximum tokens per chunk, title included; capped at the window.
        chunk_overlap: Tokens of whole trailing units repeated at the start of the next chunk.
    """

    def __init__(self, counter: TokenCounter, chunk_size: int, chunk_overlap: int) -> None:
        self.counter = counter
        self.chunk_size = min(chunk_size, counter.window)
        self.chunk_overlap = chunk_overlap
        self._title_tokens: LRU[int] = LRU(4096)
        self._chunk_tokens: LRU[int] = LRU(8192)
        self._primed: dict[str, int] = {}

    def prime(self, docs: Sequence[SourceDocument]) -> None:
        """Count the titles and paragraphs of ``docs``, about to be split, in one batch (the
        tokenizer batches across cores); :meth:`__call__` then counts only what is longer."""
        titles = list(
            {d.title: 0 for d in docs if d.title and self._title_tokens.get(d.title) is None}
        )
        pieces = [
            s.text[a:b]
            for d in docs
            for s in d.segments
            for a, b in _spans(s.text, 0, len(s.text), _PARAGRAPH)
        ]
        counts = self.counter.count_batch([*titles, *pieces])
        for title, tokens in zip(titles, counts[: len(titles)], strict=True):
            self._title_tokens.put(title, tokens)
        self._primed = dict(zip(pieces, counts[len(titles) :], strict=True))

    def chunk_tokens(self, text: str, title: str | None) -> int | None:
        """Tokens of a chunk this splitter made (``text``, plus ``title`` when it is put in
        front), known from its units' counts; ``None`` when not known."""
        tokens = self._chunk_tokens.get(text)
        return None if tokens is None else tokens + self.title_tokens(title)

    def title_tokens(self, title: str | None) -> int:
        """Tokens of a title (remembered for the next chunks of its document)."""
        if not title:
            return 0
        tokens = self._title_tokens.get(title)
        if tokens is None:
            tokens = self.counter.count(title)
            self._title_tokens.put(title, tokens)
        return tokens

    @classmethod
    def from_config(cls, config: ChunkingConfig, counter: TokenCounter) -> TokenSplitter:
        """The splitter for a :class:`~llama_kb.config.ChunkingConfig` in tokens."""
        return cls(counter, config.size, config.overlap)

    def budget(self, title: str | None) -> int:
        """Tokens left for chunk text once the title prefix is counted."""
        return max(_MIN_BUDGET, self.chunk_size - self.title_tokens(title))

    def __call__(self, segment: Segment, title: str | None) -> list[tuple[int, str]]:
        """``(start, text)`` chunks of one segment (the :data:`~.chunking.Splitter` form)."""
        text = segment.text
        budget = self.budget(title)
        code = bool(segment.metadata.get("symbol") or segment.metadata.get("language"))
        levels = _CODE_LEVELS if code else _PROSE_LEVELS
        units = self._units(text, 0, len(text), levels, budget)
        chunks = []
        for group in self._pack(units, budget):
            chunk = text[group[0].start : group[-1].end]
            if all(a.end < b.start for a, b in itertools.pairwise(group)):
                # units apart (by whitespace) count as the sum of their counts
                self._chunk_tokens.put(chunk, sum(unit.tokens for unit in group))
            chunks.append((group[0].start, chunk))
        return chunks

    def _units(
        self,
        text: str,
        start: int,
        end: int,
        levels: tuple[re.Pattern[str], ...],
        budget: int,
    ) -> list[_Unit]:
        spans = _spans(text, start, end, levels[0])
        pieces = [text[a:b] for a, b in spans]
        unknown = [piece for piece in pieces if piece not in self._primed]
        known = dict(zip(unknown, self.counter.count_batch(unknown), strict=True))
        known.update((piece, self._primed[piece]) for piece in pieces if piece in self._primed)
        counts = [known[piece] for piece in pieces]
        units: list[_Unit] = []
        for (a, b), tokens in zip(spans, counts, strict=True):
            if tokens <= budget:
                units.append(_Unit(a, b, tokens))
            elif len(levels) > 1:
                units.extend(self._units(text, a, b, levels[1:], budget))
            else:
                units.extend(self._cut_word(text, a, b, tokens, budget))
        return units

    def _cut_word(self, text: str, start: int, end: int, tokens: int, budget: int) -> list[_Unit]:
        """Cut one over-long word into pieces of at most ``budget`` tokens."""
        step = max(1, (end - start) * budget // (tokens * 2))
        pieces = [(a, min(a + step, end)) for a in range(start, end, step)]
        counts = self.counter.count_batch([text[a:b] for a, b in pieces])
        return [_Unit(a, b, n) for (a, b), n in zip(pieces, counts, strict=True)]

    def _pack(self, units: list[_Unit], budget: int) -> list[list[_Unit]]:
        """Group units into chunks of at most ``budget`` tokens, of about equal size.

        A segment that fits stays one chunk. Otherwise it takes ``n`` chunks, the fewest
        that hold it with the overlap, and each chunk is closed at the unit boundary nearest
        to an ``n``-th of the text plus the overlap, so no chunk is a small leftover tail;
        past that point a chunk still takes the rest of the segment when all of it fits.
        """
        total = sum(unit.tokens for unit in units)
        if total <= budget:
            return [units] if units else []
        count = math.ceil(total / max(1, budget - self.chunk_overlap))
        target = min(budget, math.ceil(total / count) + self.chunk_overlap)
        groups: list[list[_Unit]] = []
        current: list[_Unit] = []
        size = 0
        rest = total  # tokens of this unit and all that follow
        for unit in units:
            after = size + unit.tokens
            past_target = after > target and after - target > target - size
            # Past the target, close only if the rest does not fit: a chunk made of the
            # overlap and a small tail would repeat its neighbour and add little.
            if current and (after > budget or (past_target and size + rest > budget)):
                groups.append(current)
                current, size = self._overlap(current, unit, budget)
            current.append(unit)
            size += unit.tokens
            rest -= unit.tokens
        groups.append(current)
        return groups

    def _overlap(self, previous: list[_Unit], unit: _Unit, budget: int) -> tuple[list[_Unit], int]:
        """The whole trailing units of ``previous`` that start the next chunk: the fewest
        that reach ``chunk_overlap`` tokens, at most half the budget, never the whole of
        ``previous``, and leaving room for ``unit``."""
        kept: list[_Unit] = []
        carried = 0
        for candidate in reversed(previous[1:]):
            if (
                carried >= self.chunk_overlap
                or carried + candidate.tokens > budget // 2
                or carried + candidate.tokens + unit.tokens > budget
            ):
                break
            kept.insert(0, candidate)
            carried += candidate.tokens
        return kept, carried
