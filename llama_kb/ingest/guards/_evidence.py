"""How much a value looks like a secret: a small, explainable shape score.

:func:`shape_score` grades a candidate value 0 (not a secret: too short, a word, a number, a
path, a host name, an e-mail address, a URL without credentials, a placeholder, a reference
or code) to 3 (a long random token). :mod:`._context` adds it to the strength of the
credential word before the value and reports the pair when the sum reaches its threshold.
"""

from __future__ import annotations

import base64
import math
import re
from collections import Counter

from llama_kb.ingest.guards._values import (
    is_identifier,
    is_placeholder,
    is_public,
    is_sequential,
    is_word,
)

__all__ = ["RANDOM", "entropy", "is_encrypted", "is_name", "is_word_and_number", "shape_score"]

RANDOM = 3  # a long random token: scores alone with any credential word
_PASSWORD = 2  # a human-chosen password: letters, digits and symbols mixed
_SHORT = 1  # six or seven characters of three classes

# A host name's last label (the top-level domain) ends in a letter; ``copper.violet1`` is no host
_HOST = re.compile(r"^[a-z0-9-]+(?:\.[a-z0-9-]+)*\.[a-z0-9-]*[a-z](?::\d+)?$")
_EMAIL = re.compile(r"^[\w.+-]+@[\w-]+(?:\.[\w-]+)+$")
_HEX = re.compile(r"^(?:0x)?[0-9a-fA-F]+$")
# Names in code and product tokens: letters and digits, maybe joined by ``-_./``.
_NAME = re.compile(r"^[*@._]*[^\W_]+(?:[-_./]+[^\W_]+)*[-_.]*$")
_PIECES = re.compile(r"[A-Z]+(?![a-z])|[A-Z]?[a-z]+|\d+|[^\W\d_]+")
# A value naming what it stands for (``user:password``, ``MyPassword``) is an example.
_NAMES_ITSELF = re.compile(r"passw(?:or)?d", re.IGNORECASE)
# Regular expressions, escapes and Windows paths: ``\s+``, ``[A-Za-z_]``, ``\x18``, ``C:\``
_REGEX = re.compile(
    r"\\[sSdDwWbBnrt.\\\"']|\\[xu][0-9a-fA-F]{2}|\\$|^\\|^[A-Za-z]:\\|[A-Z]-Z|a-z|0-9|^\^|\(\?[:=!<]"
)
_UUID_INSIDE = re.compile(r"[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}", re.I)
# numbers, dates and times, versions, ports, addresses
_NUMERIC = re.compile(r"^(?:[\d\W_]|(?<=\d)[TZ])+$")
# Values encrypted for storage (SOPS, jasypt, Ansible Vault, sealed secrets, EJSON, base64
# in braces as Maven and Jenkins write it, DPAPI and Rails credentials): safe to publish.
_ENCRYPTED = re.compile(
    r"^(?:ENC[\[(]|\$ANSIBLE_VAULT|!vault\b|vault:v\d:|EJ\[\d:|\{[A-Za-z0-9+/]{16,}={0,2}\}|"
    # Windows DPAPI blobs (an ``.rdp`` file's ``password 51:b:``), Rails encrypted credentials
    r"(?:\d+:b:)?(?i:01000000D08C9DDF0115D1118C7A00C04FC297EB)|"
    r"[A-Za-z0-9+/]{16,}={0,2}--[A-Za-z0-9+/]{16,}={0,2}--[A-Za-z0-9+/]{16,}={0,2}$)"
)
_GROUPED_LETTERS = re.compile(r"^[a-z]{4}(?:-[a-z]{4}){3}$")
# Three or more words and a number, one separator throughout: a passphrase as password
# managers and people make them (the words of a name are rarely all lower case and end in a
# number). The number may be glued to the last word after ``-`` or ``.``, not after ``_``
# (``rsa_crt_dmp1`` is a name in code).
_WORD = "[A-Za-z][a-z]{2,11}"
_PASSPHRASE = re.compile(
    rf"^(?:{_WORD}(?P<s1>[-_.]){_WORD}(?:(?P=s1){_WORD})+(?P=s1)"
    rf"|{_WORD}(?P<s2>[-.]){_WORD}(?:(?P=s2){_WORD})+)\d{{1,4}}$"
)
# A capitalised word and a number (a city or a season and a year, ``Bergen2017``), a lower
# case word and a year, or two words and a number (``Kiwi_Mango_77``): how people make
# passwords. Alone they may be names (``Windows2000``),
# so they score only beside a strong credential word; a size in bits makes a name
# (``Base64``, ``Float32``).
_WORD_AND_NUMBER = re.compile(
    r"^(?:[A-Z][a-z]{3,14}(?!(?:16|32|64|128|256|512|1024|2048|4096)$)\d{2,4}|"
    rf"[a-z]{{4,15}}(?:19|20)\d\d|{_WORD}(?P<s>[-_.]){_WORD}(?P=s)\d{{2,4}})$"
)
# Words of names in code, resources, cache keys and products (``cache-node-modules-2``,
# ``web-frontend-deploy-3``, ``Windows10``): a passphrase or a word and a number holding one
# is more likely such a name.
_TECHNICAL = frozenset(
    {"cache", "node", "modules", "build", "release", "deploy", "test", "tests", "app", "web"}
    | {"api", "server", "data", "config", "prod", "staging", "dev", "main", "master", "debug"}
    | {"linux", "windows", "macos", "ubuntu", "debian", "alpine", "python", "java", "docker"}
    | {"deps", "lock", "pip", "npm", "yarn", "gradle", "maven", "cargo", "target", "dist"}
    | {"frontend", "backend", "service", "worker", "cluster", "bucket", "queue", "topic"}
    | {"version", "latest", "stable", "nightly", "beta", "alpha", "patch", "minor", "major"}
    | {"user", "users", "admin", "default", "local", "remote", "public", "private", "shared"}
    # products named with their version (``Windows10``, ``Office365``, ``Server2019``)
    | {"office", "fedora", "centos", "exchange", "node", "postgres", "mysql", "oracle"}
    | {"android", "iphone", "galaxy", "pixel", "xbox", "outlook", "excel", "sharepoint"}
    | {"azure", "kernel", "firefox", "chrome", "safari", "edge", "macos", "win", "ios", "sql"}
)
_VOWEL = re.compile("[aeiouy]")
# A short piece mixing cases with a digit before a letter is random (``y3Qp``), not a word.
_RANDOM_PIECE = re.compile(r"^(?=.*[a-z])(?=.*[A-Z]).{0,4}\d[A-Za-z].{0,4}$")
_BASE64 = re.compile(r"^[A-Za-z0-9+/]+={0,2}$")
# A word and digits, then a tail of one to three characters after ``-._``: how people extend
# a word into a password; names end in a word (``neo4j.GraphDatabase.driver``).
_SHORT_TAIL = re.compile(r"\d[-._](?=[A-Za-z0-9]{1,3}$)[A-Za-z0-9]*[A-Za-z]")
_MAX_LENGTH = 200  # longer values are blobs (certificates, encrypted data, images)
# A relative path to a file (an S3 object key ``app/5026-stage.war``): base64 has no ``.``.
_FILE_PATH = re.compile(r"^[\w.-]+(?:/[\w.-]+)+\.[A-Za-z][A-Za-z0-9]{0,5}$")
# One run of upper and lower case and digits, then a separator: a password made from a word
# (``__init__`` or ``Sub.name_`` in code have separators inside too)
_SEPARATOR_END = re.compile(r"^(?=.*\d)(?=.*[a-z])(?=.*[A-Z])[A-Za-z0-9]+[-_.]+$")


def entropy(value: str) -> float:
    """Shannon entropy of ``value`` in bits per character."""
    counts = Counter(value)
    return -sum(n / len(value) * math.log2(n / len(value)) for n in counts.values())


def is_word_and_number(value: str) -> bool:
    """Whether ``value`` is a word (or two) and a number, as people make passwords; not a
    product and its version (``Windows10``, ``Office365``)."""
    if not _WORD_AND_NUMBER.match(value):
        return False
    return not _TECHNICAL.intersection(w.lower() for w in re.split(r"[-_.\d]+", value))


def is_encrypted(text: str) -> bool:
    """Whether ``text`` starts with an encrypted-value marker (``ENC[...]``, ``$ANSIBLE_VAULT``)."""
    return bool(_ENCRYPTED.match(text))


def shape_score(value: str) -> int:
    """0 (not a secret) to 3 (random token): how much ``value`` (unquoted) looks like a secret.

    UUIDs score 0: they are mostly identifiers (the keyed rule of :mod:`._assignments`
    reports one under an authentication key).
    """
    if not 6 <= len(value) <= _MAX_LENGTH or _rejected(value):
        return 0
    if _HEX.match(value):  # digests and ids are hex too: only long ones count
        return RANDOM if len(value) >= 32 and any(c.isalpha() for c in value) else 0
    if _GROUPED_LETTERS.match(value) and any(not _VOWEL.search(g) for g in value.split("-")):
        return _PASSWORD  # an app password: four groups of random letters
    if all(c.isalpha() or c in "-_./" for c in value):  # words, names, paths: random if long
        random_letters = value.isalpha() and len(value) >= 10 and not is_word(value)
        random_letters = random_letters and not is_name(value)  # SSOCredentialFetcher
        if random_letters and len(value) < 16:  # a generated password of letters only
            return _PASSWORD
        return RANDOM if random_letters and entropy(value) >= 3.5 else 0
    classes = _classes(value)
    if _PASSPHRASE.match(value):  # a name in code (``value_for_key_1``) or a cache key
        words = {w.lower() for w in re.split(r"[-_.\d]+", value)}
        return _SHORT if "_" in value or words & _TECHNICAL else _PASSWORD
    if is_word_and_number(value):
        return _SHORT
    if is_name(value):  # a name, or a password built like one (see _SHORT_TAIL)
        mixed = any(c.isupper() for c in value) and any(c.islower() for c in value)
        return _SHORT if mixed and _SHORT_TAIL.search(value) else 0
    letters_and_digits = any(c.isdigit() for c in value) and any(c.isalpha() for c in value)
    if len(value) >= 16 and (letters_and_digits or classes >= 3) and entropy(value) >= 3.5:
        return RANDOM
    if len(value) >= 8 and classes >= 3:
        return _PASSWORD
    return _SHORT if classes >= 3 else 0


def is_name(value: str) -> bool:
    """Whether ``value`` is made of words, as names are (``Ed25519PrivateKey``,
    ``HTTP11Connection``, ``caching_sha2_password``, ``Batman/1.0``).

    A random token breaks into short pieces (``aK9xQz`` into ``a K 9 x Qz``) or holds many
    groups of digits.
    """
    if not _NAME.match(value) or _SEPARATOR_END.match(value):
        return False
    if any(len(p) <= 6 and _RANDOM_PIECE.match(p) for p in re.split(r"[-_./]", value)):
        return False
    pieces = _PIECES.findall(value)
    words = [p for p in pieces if not p.isdigit()]
    digit_groups = len(pieces) - len(words)
    if not words or sum(len(w) == 1 for w in words) > 1:
        return False
    if any(len(w) >= 20 and not is_word(w) for w in words):
        return False
    few_digits = digit_groups <= 2 or 2 * digit_groups <= len(words)
    return few_digits and sum(map(len, words)) >= 3 * len(words)


def _rejected(value: str) -> bool:
    return (
        is_placeholder(value)
        or is_public(value)
        or is_encrypted(value)
        or is_identifier(value)
        or is_sequential(value)  # documentation values; vendor formats still count
        or bool(_NUMERIC.match(value))
        or bool(_HOST.match(value) or _EMAIL.match(value))
        or value.startswith(("/", "~", "./", "$", "%", "&", "#!"))
        or bool(_FILE_PATH.match(value))
        or ("://" in value and "@" not in value)
        or not any(c.isalpha() for c in value)
        or bool(_REGEX.search(value) or _NAMES_ITSELF.search(value))
        or bool(_UUID_INSIDE.search(value))  # resource paths: key/<uuid>
        or _encodes_plain_text(value)
    )


def _encodes_plain_text(value: str) -> bool:
    """Base64 of text or of a name (``dGhlIHNhbXBsZSBub25jZQ==``): judged by what it encodes."""
    if len(value) < 16 or not _BASE64.match(value):
        return False
    whole = value if value.endswith("=") else value[: len(value) - len(value) % 4]  # cut token
    try:
        decoded = base64.b64decode(whole, validate=True).decode("ascii")
    except (ValueError, UnicodeDecodeError):
        return False
    decoded = decoded.replace("\n", " ").replace("\t", " ")  # text has line breaks
    if not decoded.isprintable():
        return False
    return " " in decoded.strip() or shape_score(decoded) == 0


def _classes(value: str) -> int:
    return sum(
        (
            any(c.islower() for c in value),
            any(c.isupper() for c in value),
            any(c.isdigit() for c in value),
            any(not c.isalnum() and c not in "-_." for c in value),
        )
    )
