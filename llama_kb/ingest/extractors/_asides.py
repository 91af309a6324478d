"""Text as the sentence extractor parses it: bracketed asides set apart, blanks collapsed.

A bracket inside a sentence (``Night and Dawn (Spanish: La noche y el alba) is a 1958
film directed by ...``) often takes the subject's place in the dependency parse, and a
double space parses as a token of its own that breaks the sentence. So the parser reads the
text without its asides; the asides are kept with their position (a life span
``(1831 – 1886)`` right after a name still dates that name), and evidence is quoted from
the text with its asides back in.
"""

from __future__ import annotations

import bisect
import re
from dataclasses import dataclass

_ASIDE = re.compile(r"\s*\(([^()]{0,200})\)(,(?=\s))?")
_BLANKS = re.compile(r"[ \t]{2,}")


@dataclass(frozen=True)
class PreparedText:
    """``text`` (what is parsed) and ``original`` (blanks collapsed, asides kept).

    Attributes:
        text: The original without its asides.
        original: The chunk text with runs of blanks collapsed.
        asides: ``(position in text, content without brackets)``, in order.
        removed: ``(position in text, characters removed there)``, in order.
    """

    text: str
    original: str
    asides: tuple[tuple[int, str], ...]
    removed: tuple[tuple[int, int], ...]

    @classmethod
    def of(cls, chunk_text: str) -> PreparedText:
        """Set the asides of ``chunk_text`` apart."""
        original = _BLANKS.sub(" ", chunk_text)
        parts: list[str] = []
        asides: list[tuple[int, str]] = []
        removed: list[tuple[int, int]] = []
        kept = last = 0
        for match in _ASIDE.finditer(original):
            start, end = match.start(), match.end()
            # "Name, (1806–1867), was": one comma of the two stays
            if match.group(2) and not original[:start].rstrip().endswith(","):
                end -= 1
            parts.append(original[last:start])
            kept += start - last
            asides.append((kept, match.group(1)))
            removed.append((kept, end - start))
            last = end
        parts.append(original[last:])
        return cls("".join(parts), original, tuple(asides), tuple(removed))

    def asides_in(self, start: int, end: int) -> list[tuple[int, str]]:
        """The asides set apart at positions ``start..end`` of :attr:`text`."""
        return [(pos, inner) for pos, inner in self.asides if start <= pos <= end]

    def quote(self, start: int, end: int) -> str:
        """:attr:`original` for ``text[start:end]``, asides inside it put back."""
        return self.original[self._to_original(start, False) : self._to_original(end, True)]

    def _to_original(self, pos: int, closing: bool) -> int:
        positions = [p for p, _ in self.removed]
        count = (bisect.bisect_right if closing else bisect.bisect_left)(positions, pos)
        return pos + sum(size for _, size in self.removed[:count])
