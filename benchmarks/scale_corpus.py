"""Synthetic-but-realistic corpora of any size, replicated from the shared data sets.

The 2WikiMultihopQA and MuSiQue passages are concatenated into one base corpus, which is
repeated as replicas. Replica ``r`` gives every passage a new id (``<id>~r<r>``) and appends
one made-up name (seeded, e.g. ``Velmora``) to every title and to every mention of a base
title in its texts, so links between passages stay inside the replica and the graph stays
connected. Questions are re-targeted to one replica the same way (text and gold ids); their
mentions may differ in case after the first letter, since 2Wiki's questions title-case the
pages they name ("Santa And The Fairy Snow Queen") and the knowledge base's name matching
accepts that, so the replica's question must name the replica's page too.
"""

from __future__ import annotations

import random
import re
from dataclasses import dataclass
from itertools import zip_longest
from pathlib import Path
from typing import Any

from benchmarks._common import read_jsonl

SHARED_DATA = Path(__file__).resolve().parents[1].parent / "shared/data"
DATASETS = ("2wikimultihopqa-dev500", "musique-dev")
_SYLLABLES = ("ka", "lo", "ve", "mi", "ra", "su", "do", "ne", "ti", "zo", "ba", "qu", "re", "ly")
_WORD = re.compile(r"\w+")
_MIN_TITLE = 4


@dataclass(frozen=True)
class ScaleQuestion:
    """A question re-targeted to one replica."""

    text: str
    supporting_ids: tuple[str, ...]


class ReplicatedCorpus:
    """The base corpus repeated as replicas with perturbed names (deterministic for a seed).

    Args:
        data_dir: Directory holding the shared data sets.
        seed: Seed for the replica names and the question sample.
    """

    def __init__(self, data_dir: Path = SHARED_DATA, seed: int = 13) -> None:
        self.seed = seed
        self.base: list[dict[str, Any]] = []
        self.questions: list[dict[str, Any]] = []
        for name in DATASETS:
            self.base.extend(read_jsonl(data_dir / name / "corpus.jsonl"))
            self.questions.extend(read_jsonl(data_dir / name / "questions.jsonl"))
        titles = {str(p.get("title") or "").strip() for p in self.base}
        self._by_first: dict[str, list[str]] = {}
        for title in sorted(t for t in titles if len(t) >= _MIN_TITLE):
            words = _WORD.findall(title)
            if words:
                self._by_first.setdefault(words[0].lower(), []).append(title)
        self._patterns = [self._mention_pattern(p["text"]) for p in self.base]
        self._tags: list[str] = []

    def _mention_pattern(self, text: str, any_case: bool = False) -> re.Pattern[str] | None:
        """The base titles ``text`` mentions, longest first, as one pattern (``None``: none).
        Passages must write a title as it is; questions (``any_case``) may change the case of
        any letter but the first ("Santa And The Fairy Snow Queen")."""

        def written(title: str, start: int) -> str | None:
            form = text[start : start + len(title)]
            same = form == title or (
                any_case and form[0] == title[0] and form.lower() == title.lower()
            )
            return form if same else None

        found = {
            form
            for match in _WORD.finditer(text)
            for title in self._by_first.get(match.group().lower(), ())
            if (form := written(title, match.start()))
        }
        if not found:
            return None
        ordered = sorted(found, key=len, reverse=True)
        return re.compile("|".join(re.escape(t) for t in ordered))

    def tag(self, replica: int) -> str:
        """The made-up name appended to the titles and mentions of ``replica``."""
        rng = random.Random(self.seed)
        while len(self._tags) <= replica:
            name = "".join(rng.choice(_SYLLABLES) for _ in range(3)).capitalize()
            if name not in self._tags:
                self._tags.append(name)
        return self._tags[replica]

    def _perturb(self, text: str, pattern: re.Pattern[str] | None, tag: str) -> str:
        if pattern is None:
            return text
        return pattern.sub(lambda m: f"{m.group(0)} {tag}", text)

    def passage(self, position: int) -> dict[str, Any]:
        """Passage ``position`` of the endless replicated stream (id, title, text)."""
        replica, index = divmod(position, len(self.base))
        base = self.base[index]
        tag = self.tag(replica)
        title = str(base.get("title") or "").strip()
        return {
            "id": f"{base['id']}~r{replica}",
            "title": f"{title} {tag}" if title else tag,
            "text": self._perturb(base["text"], self._patterns[index], tag),
        }

    def passages(self, start: int, stop: int) -> list[dict[str, Any]]:
        """Passages ``start`` .. ``stop - 1`` of the stream."""
        return [self.passage(i) for i in range(start, stop)]

    def questions_for(self, size: int, count: int) -> list[ScaleQuestion]:
        """Up to ``count`` questions whose gold passages all lie in the first ``size`` passages.

        Each question goes to a random replica (seeded) among those it fits in; 2Wiki and
        MuSiQue questions alternate.
        """
        rng = random.Random(self.seed + size)
        position = {p["id"]: i for i, p in enumerate(self.base)}
        pools: dict[bool, list[ScaleQuestion]] = {True: [], False: []}
        for question in self.questions:
            offsets = [position[i] for i in question["supporting_ids"] if i in position]
            if not offsets or len(offsets) < len(question["supporting_ids"]):
                continue
            replicas = [
                r
                for r in range(max(1, -(-size // len(self.base))))
                if r * len(self.base) + max(offsets) < size
            ]
            if not replicas:
                continue
            replica = rng.choice(replicas)
            pattern = self._mention_pattern(question["question"], any_case=True)
            pools[question["supporting_ids"][0].startswith("2w-")].append(
                ScaleQuestion(
                    self._perturb(question["question"], pattern, self.tag(replica)),
                    tuple(f"{i}~r{replica}" for i in question["supporting_ids"]),
                )
            )
        pairs = zip_longest(pools[True], pools[False])
        return [q for pair in pairs for q in pair if q is not None][:count]
