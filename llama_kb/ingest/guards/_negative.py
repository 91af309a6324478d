"""Negative evidence: a value the text itself says is hashed, public, a fingerprint or encrypted.

The evidence layer (:mod:`._context`) weighs these words before it reports anything; the
older layers (the keyed rule of :mod:`._assignments`, detect-secrets' entropy plugin and the
prefixed-token shape) did not. :func:`negated` lets the scanner drop their findings when:

* a word of the few identifiers just before the value says what it is not
  (``HashedControlPassword 16:...``, ``key fingerprint is SHA256:...``,
  ``server_public_key = ...``, ``sealed_api_key: ...``, ``X-CSRF-Token``), or names a key
  of a data structure (``cache-key: ...``, ``"sourceMapKey": ...``);
* the value starts with an encryption marker (``ENC[``, ``$ANSIBLE_VAULT``, ``vault:v1:``,
  base64 in braces) or is a password hash in its storage format (``{SSHA}...``,
  ``pbkdf2_sha256$...``, PostgreSQL's ``md5...``), or the key before it is ``secure:``
  (Travis and AppVeyor keep encrypted values there);
* the value is part of a resource name (``arn:aws:secretsmanager:...:secret:prod/db-...``)
  or the blob of an SSH public key (after ``ssh-ed25519``);
* the line lies inside an armoured block that is not a private key (``-----BEGIN PGP
  MESSAGE-----``, ``CERTIFICATE``, ``PUBLIC KEY``);
* the enclosing block's key says so (``encryptedData:`` above ``password: AgB...``);
* the line is a public JSON Web Key (``"kty"`` without a private member such as ``"d"``).
"""

from __future__ import annotations

import re
from collections.abc import Sequence

from llama_kb.ingest.guards._evidence import is_encrypted
from llama_kb.ingest.guards._values import is_known_example, is_stored_hash
from llama_kb.ingest.guards._words import identifier_words, is_data_key, word_strength

__all__ = ["negated"]

# Words saying that a value is not a usable secret: a digest, a public half, sealed data.
# Algorithm names (``sha256``) are not among them: an HMAC key follows them too.
NEGATIVE = frozenset(
    {"hash", "hashed", "hashes", "digest", "checksum", "fingerprint", "fingerprints"}
    | {"thumbprint", "public", "pub", "publishable", "anon", "encrypted", "sealed", "cipher"}
    | {"ciphertext", "encrypt", "verification", "csrf", "xsrf"}
)
# A store of encrypted values (dotenv-vault's ``DOTENV_VAULT_<ENV>``)
_STORES = frozenset({"vault"})
_ANTI_FORGERY = re.compile(r"csrf|xsrf", re.IGNORECASE)
_IDENTS_BEFORE = 3
_CHARS_BEFORE = 48
_IDENT = re.compile(r"[^\W\d][\w.-]*")
_PARENT = re.compile(r"^[ \t]*-?[ \t]*['\"]?(?P<key>[^\W\d][\w.-]*)['\"]?[ \t]*:[ \t]*$")
# SQL's ``ENCRYPTED PASSWORD '...'`` gives a plain password, which the server stores hashed.
_SQL_CLAUSE = re.compile(r"\bencrypted\s+password\b", re.IGNORECASE)
_JWK_PRIVATE = re.compile(r"['\"](?:d|p|q|dp|dq|qi|k)['\"]\s*:")
_PARENT_LINES = 12
_BLOCK_LINES = 400
_RUN_START = re.compile(r"[^\s'\"`=]*$")  # the start of the unbroken run holding a value
# Resource names and references that name a secret without holding it (an ARN's
# ``...:secret:<name>``), and the key under which CI services keep an encrypted
# value (Travis and AppVeyor's ``secure: "..."``).
_RESOURCE = re.compile(r"arn:[\w-]+:", re.IGNORECASE)
_SECURE_KEY = re.compile(r"(?<![\w-])secure['\"]?\s*:\s*['\"]?$", re.IGNORECASE)
# An SSH public key: the algorithm, then the key blob.
_SSH_ALGORITHM = re.compile(
    r"(?:ssh-(?:rsa|dss|ed25519|ed448)|(?:sk-)?ecdsa-sha2-\S+|sk-ssh-\S+)\s+$"
)


def negated(lines: Sequence[str], number: int, start: int, end: int) -> bool:
    """Whether the value at ``start:end`` of line ``number`` (1-based) is said not secret."""
    line = lines[number - 1] if 0 < number <= len(lines) else ""
    value = line[start:end].strip("'\"` ")
    run = _RUN_START.search(line, 0, start)
    stored = is_stored_hash(line[run.start() if run else start :])
    if is_encrypted(value) or stored or is_known_example(value):
        return True
    if is_encrypted(line[max(0, start - 1) :]) or (run and _RESOURCE.match(line, run.start())):
        return True  # {base64} as Maven and Jenkins encrypt, arn:aws:...
    if _SECURE_KEY.search(line, 0, start) or _SSH_ALGORITHM.search(line, 0, start):
        return True
    before = _SQL_CLAUSE.sub(" ", line[max(0, start - _CHARS_BEFORE) : start])
    idents = _IDENT.findall(before)[-_IDENTS_BEFORE:]
    if any(NEGATIVE.intersection(identifier_words(i)) or is_data_key(i) for i in idents):
        return True
    if any(_ANTI_FORGERY.search(i) for i in idents):  # csrftoken, XSRF-TOKEN
        return True
    if idents and _encrypted_store(idents[-1]):
        return True
    if '"kty"' in line and not _JWK_PRIVATE.search(line):
        return True
    return _parent_negated(lines, number) or _in_public_block(lines, number)


def _encrypted_store(key: str) -> bool:
    """Whether the key of a value names a store of encrypted values with no credential word
    (``DOTENV_VAULT_PRODUCTION``; ``VAULT_TOKEN`` names a credential)."""
    words = identifier_words(key)
    return len(words) > 1 and bool(_STORES.intersection(words)) and not word_strength(key)[0]


def _parent_negated(lines: Sequence[str], number: int) -> bool:
    """Whether a less-indented ``key:`` line above (the block's key) is a negative word."""
    if number < 2:
        return False
    line = lines[number - 1]
    indent = len(line) - len(line.lstrip(" \t"))
    for above in reversed(lines[max(0, number - 1 - _PARENT_LINES) : number - 1]):
        if not above.strip():
            continue
        depth = len(above) - len(above.lstrip(" \t"))
        if depth < indent:
            parent = _PARENT.match(above)
            return bool(parent and NEGATIVE.intersection(identifier_words(parent["key"])))
    return False


def _in_public_block(lines: Sequence[str], number: int) -> bool:
    """Whether line ``number`` is inside ``-----BEGIN X-----`` ... ``-----END`` with no PRIVATE."""
    for above in reversed(lines[max(0, number - _BLOCK_LINES) : number - 1]):
        if above.startswith("-----END"):
            return False
        if above.startswith("-----BEGIN"):
            return "PRIVATE" not in above
    return False
