"""Value helpers shared by the secret corpora: alphabets, a seeded generator and base64.

Each corpus keeps its own generator (:class:`Values` with the corpus's seed) and calls it in
the same order as before, so its case texts stay exactly the same. Password and UUID shapes
differ on purpose from set to set and stay in each corpus.
"""

from __future__ import annotations

import base64
import random
import string

__all__ = ["AN", "B32", "B58", "B64", "BECH32", "HX", "LO", "UP", "URL", "D", "Values", "b64"]

LO = string.ascii_lowercase
UP = string.ascii_uppercase
D = string.digits
AN = string.ascii_letters + D
URL = AN + "_-"
B64 = AN + "+/"
HX = "0123456789abcdef"
B32 = UP + "234567"
B58 = "123456789ABCDEFGHJKLMNPQRSTUVWXYZabcdefghijkmnopqrstuvwxyz"
BECH32 = "qpzry9x8gf2tvdw0s3jn54khce6mua7l"


class Values:
    """Random values from one seeded generator.

    Args:
        seed: The corpus's seed.
    """

    def __init__(self, seed: int) -> None:
        self.rng = random.Random(seed)

    def g(self, alphabet: str, n: int) -> str:
        """``n`` characters drawn from ``alphabet``."""
        return "".join(self.rng.choice(alphabet) for _ in range(n))


def b64(raw: bytes | str) -> str:
    """Base64 of ``raw`` (text is encoded as UTF-8 first)."""
    return base64.b64encode(raw.encode() if isinstance(raw, str) else raw).decode()
