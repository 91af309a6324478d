"""Secrets inside base64 or escaped strings: judged as the text they encode.

Kubernetes ``Secret`` data (``DATABASE_URL: <base64 of a URL with a password>``), FileZilla's
``<Pass encoding="base64">`` and the output of ``echo ... | base64`` keep credentials in
base64, which no pattern or shape reads. :func:`decoded_tokens` gives each base64 token of a
line that decodes to printable text, so the scanner can look at the line with the text in
its place (as trufflehog's base64 decoder does). :func:`byte_key_spans` finds private keys
written as lists of byte values. :func:`unescaped` undoes the escaped quotes
of a JSON document logged or embedded in another string (``{\\"password\\":\\"...\\"}``), with
the map from its offsets back to the line's.
"""

from __future__ import annotations

import base64
import binascii
import re
from collections.abc import Iterator

from llama_kb.ingest.guards._words import has_hint, word_strength

__all__ = ["byte_key_spans", "decoded_tokens", "unescaped"]

# Padded base64 with a digit, ``+``, ``/`` or ``=`` in it (words are not base64 of anything)
_BASE64 = re.compile(r"(?<![\w+/=.-])(?=[A-Za-z]*[0-9+/=])[A-Za-z0-9+/]{12,400}={0,2}(?![\w+/=.-])")
_MIN_TEXT = 6
_NOT_KEY_BYTES = re.compile(r"hash|digest|sha\d|checksum|signature|public|pubkey|nonce|salt|\biv\b")
_BYTE = r"(?:0x[0-9a-fA-F]{1,2}|\d{1,3})"
_BYTE_LIST = re.compile(rf"[\[{{](?P<body>\s*{_BYTE}(?:\s*,\s*{_BYTE}){{15,63}})\s*,?\s*[\]}}]")
_NAMES = re.compile(r"[^\W\d][\w.-]*")
_ESCAPED = re.compile(r"\\+(?=[\"'/])")  # backslashes before a quote or a slash


def byte_key_spans(line: str, before: str = "") -> Iterator[tuple[int, int]]:
    """Spans of private keys written as a list of random byte values (decimal or ``0x``):
    64 (an Ed25519 key pair) alone on its line (Solana's ``id.json``) or beside a credential
    word (in ``line`` or the line ``before`` it), 32, 24 or 16 (AES keys) beside one; not
    when either line calls the bytes a digest, signature, public key, nonce, salt or IV."""
    for match in _BYTE_LIST.finditer(line) if "," in line else ():
        values = [int(v, 0) for v in match.group("body").split(",")]
        if len(values) not in (16, 24, 32, 64) or max(values) > 255:
            continue
        if _NOT_KEY_BYTES.search(line.lower()) or _NOT_KEY_BYTES.search(before.lower()):
            return
        alone = match.group() == line.strip()  # a key file's whole content
        named = has_hint(line) or has_hint(before)
        if len(values) < 32:  # an AES-128 or -192 key (Zigbee's network_key): a key word
            named = any(word_strength(w)[0] for w in _NAMES.findall(line + " " + before))
        random = len(set(values)) >= len(values) // 2 and values != sorted(values)
        if random and (named or (alone and len(values) == 64)):
            yield match.span()


def decoded_tokens(line: str) -> Iterator[tuple[int, int, str]]:
    """``(start, end, text)`` of each base64 token of ``line`` that decodes to one line of
    printable ASCII text."""
    for match in _BASE64.finditer(line):
        token = match.group()
        if len(token) % 4:
            continue
        try:
            text = base64.b64decode(token, validate=True).decode("ascii")
        except (binascii.Error, UnicodeDecodeError):
            continue
        if len(text) >= _MIN_TEXT and text.isprintable():
            yield match.start(), match.end(), text


def unescaped(line: str) -> tuple[str, list[int]]:
    """``line`` without the backslashes that escape quotes and slashes, and for each offset
    of the result (and its end) the offset in ``line``."""
    text: list[str] = []
    offsets: list[int] = []
    position = 0
    for match in _ESCAPED.finditer(line):
        text.append(line[position : match.start()])
        offsets.extend(range(position, match.start()))
        position = match.end()
    text.append(line[position:])
    offsets.extend(range(position, len(line) + 1))
    return "".join(text), offsets
