"""A cheap deterministic embedding: hashed bag of words in 384 signed dimensions.

Used by the scale benchmark so that only retrieval cost grows with the corpus. It has no
llama-kb or LlamaIndex import, so a process that holds only Chroma can embed with it too.
"""

from __future__ import annotations

import hashlib
import math
import re

DIMENSION = 384
_WORD = re.compile(r"\w+")


def hash_vector(text: str) -> list[float]:
    """L2-normalised hashed bag of lower-cased words (plus a constant so no vector is zero)."""
    vector = [0.0] * DIMENSION
    vector[0] = 0.1
    for word in _WORD.findall(text.lower()):
        digest = int.from_bytes(hashlib.blake2b(word.encode(), digest_size=8).digest(), "little")
        vector[digest % DIMENSION] += 1.0 if (digest >> 32) & 1 else -1.0
    norm = math.sqrt(sum(v * v for v in vector))
    return [v / norm for v in vector]
