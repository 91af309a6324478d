"""Whether a value looks like a secret, a placeholder, a reference or a plain word.

Shared by the keyed rules (:mod:`._assignments`) and the unkeyed ones (:mod:`._unkeyed`).
"""

from __future__ import annotations

import base64
import binascii
import hashlib
import itertools
import math
import re
from collections import Counter

__all__ = [
    "UUID",
    "is_base58check",
    "is_identifier",
    "is_known_example",
    "is_placeholder",
    "is_public",
    "is_sequential",
    "is_stellar_seed",
    "is_stored_hash",
    "is_word",
    "looks_secret",
]

# Values that stand for a secret without being one: placeholders, references, code, masks
# (``sk-••••3xYz``, ``ghp_…9fQ2``, ``####-1234``), values that say they are not real
# (``fake-...``, ``dummy``, ``replace-with-...``, ``TODO``) and tokens between doubled marks
# (``__DB_PASSWORD__``, ``@@KEY@@``) that release tools replace, and a value that is only the
# name of what it stands for (``mysecret``, ``token123``).
_PLACEHOLDER = re.compile(
    r"example|your[-_ ]|<[^>]*>|\$\{|\{\{|^\$|x{4,}|\*{3,}|placeholder|redacted|changeme|"
    r"•{2,}|●{2,}|…|#{3,}|fake|dummy|sample|replace|insert[-_ ]|not[-_ ]?a?[-_ ]?real|^todo$|^tbd$|"
    r"^(?P<mark>__|@@|%%)[A-Za-z_][\w.-]*(?P=mark)$|"
    r"^(?:my|super|top)?[-_]?(?:secret|token|pass|passwd|password|pwd|api[-_]?key)[-_]?\d{0,4}!?$|"
    r"^(?:true|false|null|none|nil|undefined)$|^(?P<same>.)(?P=same)*$|^%\w+%$|^@\w+@$|\.\.\.|^/[\w./-]+$|"
    r"^[(\[{]|#\{|"
    r"^(?!.*\d)[A-Za-z_]\w*(?:\.[A-Za-z_]\w*)+(?:\(.*\))?$|^@?[A-Za-z_][\w.]*[\[(]",
    re.IGNORECASE,
)
# Keys meant to be published: Stripe and Mapbox publishable tokens, client secrets a vendor
# hands to the browser inside an object id (``pi_<id>_secret_<...>``), and public keys in
# their encodings: age and Nostr recipients, BIP32 extended public keys, multibase public
# keys of ``did:key`` identifiers (``z6Mk...``), and SSH public key blobs (base64 of a length
# and ``ssh-``, ``ecdsa-`` or ``sk-``), and minisign public keys (``RW`` and 54 more).
_PUBLIC = re.compile(
    r"^(?:pk\.|pk_(?:live|test)_|phc_|[a-z]{2,5}_[A-Za-z0-9]{8,}_secret_|"
    r"age1[02-9ac-hj-np-z]{50,}|npub1|[xyzt]pub[1-9A-HJ-NP-Za-km-z]{50,}|"
    r"(?:did:key:)?z(?:6Mk|6LS|Q3s|Dn)[1-9A-HJ-NP-Za-km-z]{40,}|"
    r"AAAA[A-Za-z0-9+/]{2}(?:NzaC1|VjZHNh|NrLXNzaC1|NrLWVjZHNh)|"
    r"RW[A-Za-z0-9+/]{54}$)"
)
# Identifiers printed as hex: an Ethereum address (``0x`` and 40 digits, any case), a SHA-1
# fingerprint or thumbprint in upper case (GPG, certificates) and a colour (``#AB0909``);
# and an IPFS content id (``Qm`` and 44 base58 digits, a hash).
_IDENTIFIER = re.compile(
    r"^(?:0x[0-9a-fA-F]{40}|(?=.*[A-F])[0-9A-F]{40}|#(?:[0-9a-fA-F]{3,4}){1,2}|"
    r"Qm[1-9A-HJ-NP-Za-km-z]{44})$"
)
# Credentials vendors and standards publish as examples (jwt.io's token signature, Stripe's
# and GitHub's documented test keys, RFC 6749's tokens); AWS's end in EXAMPLE, a placeholder.
_KNOWN_EXAMPLES = re.compile(
    r"SflKxwRJSMeKKF2QT4fwpMeJf36POk6yJV_adQssw5c|sk_test_4eC39HqLyjWDarjtT1zdp7dc|"
    r"sk_test_BQokikJOvBiI2HlWgH4olfQ2|ghp_16C7e42F292c6912E7710c838347Ae178B4a|"
    # OAuth 2.0's examples (RFC 6749): access and refresh token, code, client password
    r"2YotnFZFEjr1zCsicMWpAA|tGzv3JOkF0XG5Qx2TlKWIA|SplxlOBeZQQYbYS6WxSbIA|gX1fBat3bV|"
    # jwt.io's example claims ({"sub": "1234567890", "name": "John Doe", "iat": 1516239022})
    r"eyJzdWIiOiIxMjM0NTY3ODkwIiwibmFtZSI6IkpvaG4gRG9lIiwiaWF0IjoxNTE2MjM5MDIyfQ"
)
# Password hashes in their storage formats: a scheme in braces (LDAP ``{SSHA}``) or a scheme
# naming a hash before ``$`` (Django ``pbkdf2_sha256$...``, ``SCRAM-SHA-256$4096:...``).
# Also PostgreSQL's ``md5`` and 32 hex digits, MySQL's ``*`` and 40, and Werkzeug's
# ``pbkdf2:sha256:600000$...`` and ``scrypt:32768:8:1$...``.
_STORED_HASH = re.compile(
    r"\{(?!(?:PLAIN|CLEAR|CLEARTEXT|PLAINTEXT|PLAIN-TRUNC)\})[A-Za-z0-9._-]+\}(?=\S)|(?<![\w$-])[\w-]*"
    r"(?:sha|md5|md4|pbkdf|crypt|argon|scram|blake|ntlm|ssha)[\w-]*(?::\w+)*\$+[\w./+=]*[$:]|"
    r"md5[0-9a-f]{32}(?![0-9a-f])|\*[0-9A-F]{40}(?![0-9A-F])",
    re.IGNORECASE,
)

UUID = re.compile(r"^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$", re.I)
_CAMEL_WORDS = re.compile(r"^[a-z]*(?:[A-Z][a-z]+)+$")  # ExclusiveStartShardId
_CONSONANTS = re.compile("[bcdfghjklmnpqrstvwxz]{5}")
_VOWEL = re.compile("[aeiouyAEIOUY]")
_ENV_NAME = re.compile(r"^[A-Z]+(?:_[A-Z]+)+$")  # "secret": "AWS_SECRET_ACCESS_KEY"
_CODE_NAME = re.compile(r"^[A-Za-z_][A-Za-z0-9_]*[A-Za-z]$")  # passwords end in digits
_CAMEL = re.compile(r"[A-Z]+(?![a-z])|[A-Z]?[a-z]+")
_CREDENTIAL_NOUNS = frozenset({"key", "keys", "secret", "secrets", "token", "tokens", "password"})
# A URI without credentials in it points at a secret kept elsewhere (a secret manager).
_REFERENCE = re.compile(r"^[a-z][a-z0-9+.-]*://[^@\s]*$", re.IGNORECASE)


def is_placeholder(value: str) -> bool:
    """Whether ``value`` stands for a secret (``<your-key>``, ``${X}``, ``changeme``...)."""
    return bool(_PLACEHOLDER.search(value) or _ENV_NAME.match(value) or UUID.match(value))


def _names_a_credential_type(value: str) -> bool:
    """Whether ``value`` is a name in code made of words, one of them a credential word: a
    class or field name, not a secret (random text does not split into such words)."""
    if not _CODE_NAME.match(value):
        return False
    return bool(_CREDENTIAL_NOUNS.intersection(w.lower() for w in _CAMEL.findall(value)))


def is_sequential(value: str) -> bool:
    """Whether ``value`` is mostly runs such as ``1234``, ``abcd`` (``1234567890abcdef``,
    ``abc123def456``): how documentation writes a key, never how a generator makes one.

    Like detect-secrets' ``is_sequential_string``, which only takes a value that is itself
    one run.
    """
    chars = [c for c in value.lower() if c.isalnum()]
    if len(chars) < 8:
        return False
    steps = sum(ord(b) - ord(a) == 1 for a, b in itertools.pairwise(chars))
    return steps >= 0.6 * (len(chars) - 1)


def is_public(value: str) -> bool:
    """Whether ``value`` is a key its vendor publishes (``pk_live_...``, Mapbox ``pk.``), a
    public key, or a certificate in base64 (a Kubernetes ``caBundle``)."""
    value = value.strip("'\"`")
    return bool(_PUBLIC.match(value)) or _public_pem(value)


def _public_pem(value: str) -> bool:
    """Whether ``value`` is base64 of a PEM block that is not a private key."""
    if not value.startswith("LS0tLS1CRUdJTi") or len(value) < 60:
        return False
    try:
        head = base64.b64decode(value[:60], validate=True)
    except ValueError:
        return False
    return b"PRIVATE" not in head


def is_identifier(value: str) -> bool:
    """Whether ``value`` is an address, a fingerprint or a colour written in hex."""
    return bool(_IDENTIFIER.match(value))


def is_stored_hash(text: str) -> bool:
    """Whether ``text`` starts with a password-hash scheme (``{SSHA}``, ``pbkdf2_sha256$``)."""
    return bool(_STORED_HASH.match(text))


def is_known_example(text: str) -> bool:
    """Whether ``text`` holds a credential a vendor documents as its example."""
    return bool(_KNOWN_EXAMPLES.search(text))


_BASE58 = "123456789ABCDEFGHJKLMNPQRSTUVWXYZabcdefghijkmnopqrstuvwxyz"


def is_base58check(value: str) -> bool:
    """Whether ``value`` is Base58Check: its last four bytes are the double SHA-256 of the
    rest (Bitcoin WIF and BIP32 extended keys); a made-up value fails the checksum."""
    number = 0
    for char in value:
        digit = _BASE58.find(char)
        if digit < 0:
            return False
        number = number * 58 + digit
    raw = number.to_bytes((number.bit_length() + 7) // 8, "big")
    raw = b"\0" * (len(value) - len(value.lstrip("1"))) + raw
    if len(raw) < 5:
        return False
    body, checksum = raw[:-4], raw[-4:]
    return hashlib.sha256(hashlib.sha256(body).digest()).digest()[:4] == checksum


def is_stellar_seed(value: str) -> bool:
    """Whether ``value`` is a Stellar secret seed: base32 of the version byte of a seed, 32
    bytes and their CRC16-XModem (little endian); a made-up value fails the checksum."""
    try:
        raw = base64.b32decode(value)
    except ValueError:
        return False
    body, checksum = raw[:-2], raw[-2:]
    return body[:1] == b"\x90" and binascii.crc_hqx(body, 0).to_bytes(2, "little") == checksum


def is_word(value: str) -> bool:
    """Whether ``value`` (letters, maybe ``-_.``) is a word or a name, not a random string.

    Each part between ``-_.`` is judged: a prefix before random letters (``npg_<random>``)
    does not make a name.
    """
    if not all(c.isalpha() or c in "-_." for c in value):
        return False
    return not any(_random_letters(part) for part in re.split(r"[-_.]", value))


def _random_letters(part: str) -> bool:
    """Letters that form no word: high entropy outside camel case, or mixed case with pieces
    that cannot be pronounced (five consonants, or two pieces of three without a vowel;
    acronyms in capitals are left alone)."""
    if len(part) < 8:
        return False
    if not part.islower() and not part.isupper():
        if len(part) >= 10 and _choppy(part):
            return True
        pieces = [p for p in _CAMEL.findall(part) if not p.isupper()]
        mute = [p for p in pieces if len(p) >= 3 and not _VOWEL.search(p)]
        if len(mute) >= 2 or any(len(p) >= 5 for p in mute) or _CONSONANTS.search(part):
            return True
    return not _CAMEL_WORDS.match(part) and _entropy(part) >= 3.5


def _choppy(part: str) -> bool:
    """Whether mixed-case letters break into many pieces of one or two letters (``SVImJJLiAs``
    into ``SV Im JJ Li As``): random letters do, names in camel case (``getStrLength``) not."""
    pieces = _CAMEL.findall(part)
    short = sum(len(p) <= 2 for p in pieces)
    return short >= 3 and 2 * short >= len(pieces)


def looks_secret(raw: str) -> bool:
    """Long enough, mixed enough and not a placeholder, reference or code expression.

    A value of letters only (``SecretStr``, ``password``) is a word or a name unless it is
    long and random-looking.
    """
    value = raw.strip("'\"`")
    if len(value) < 6 or any(c.isspace() for c in value) or is_placeholder(value):
        return False
    if _REFERENCE.match(value) or is_identifier(value):  # op://vault/item/field, #AB0909
        return False
    if _names_a_credential_type(value) or is_sequential(value):  # PKCS7PrivateKeyTypes, 1234abcd
        return False
    if is_public(value):
        return False
    if all(c.isalpha() or c in "-_." for c in value):
        return not is_word(value)
    classes = sum(
        (
            any(c.islower() for c in value),
            any(c.isupper() for c in value),
            any(c.isdigit() for c in value),
            any(not c.isalnum() and c not in "-_." for c in value),
        )
    )
    if not any(c.isdigit() for c in value):  # "KEYWORDS:" is a word with a colon
        return classes >= 3 and len(value) >= 8
    return (len(value) >= 8 and classes >= 2) or classes >= 3


def _entropy(value: str) -> float:
    if len(value) < 20:
        return 0.0
    counts = Counter(value)
    return -sum(n / len(value) * math.log2(n / len(value)) for n in counts.values())
