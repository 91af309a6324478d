"""Which words name a credential, how strongly, and which words say they name something else.

A word naming a credential on its own (``password``, ``token``, ``Passwort``, ``rootpw``) is
strong evidence; a word that names one only beside a good value (``key``, ``pass``,
``login``) is weak. A word in the same identifier or just before it can say the credential
word names something else: a hash (``password_hash``), a public half (``public key``), a
setting (``token_ttl``), or a key of a data structure (``cache key``, ``sort_key``).
"""

from __future__ import annotations

import re

from llama_kb.ingest.guards._languages import (
    COMPOUND_STEMS,
    CREDENTIAL_WORDS,
    KEY_STEMS,
    PASSWORD_STEMS,
    PHRASES,
    TOKEN_STEMS,
)

__all__ = [
    "KEY_BEFORE",
    "NOT_SECRET",
    "SESSION_NAME",
    "STRONG",
    "WEAK",
    "has_hint",
    "identifier_words",
    "is_data_key",
    "keyed_as_not_secret",
    "qualified_before",
    "word_strength",
]

STRONG, WEAK = 2, 1

# Words that name a credential on their own, in five languages and common abbreviations.
_STRONG_WORDS = {
    "password": "password",
    "passwd": "password",
    "passphrase": "password",
    "pwd": "password",
    "pw": "password",
    "pword": "password",
    "passw": "password",
    "mdp": "password",  # French: mot de passe
    "passcode": "password",
    "pwort": "password",
    "psk": "password",
    "passwort": "password",
    "kennwort": "password",
    "contraseña": "password",
    "contrasena": "password",
    "senha": "password",
    "wachtwoord": "password",
    "clave": "password",  # Spanish: the password in most of Latin America
    "secret": "secret",
    "token": "token",
    "authtoken": "token",
    "bearer": "token",
    "authtok": "token",
    "credential": "credential",
    "credentials": "credential",
    "creds": "credential",
    "auth": "credential",
    "authorization": "credential",
    "apikey": "api_key",
    "authkey": "api_key",
    "wif": "key",  # a Bitcoin private key in wallet import format
    **dict.fromkeys(CREDENTIAL_WORDS, "credential"),
}
# Compound words ending in one of these name a credential (``rootpw``, ``csrftoken``).
_STRONG_SUFFIXES = (
    ("password", "password"),
    ("passwd", "password"),
    ("passphrase", "password"),
    ("secret", "secret"),
    ("token", "token"),
    ("apikey", "api_key"),
    ("pw", "password"),
    ("auth", "credential"),
)
# Words that name a credential only with a good value (``key``, ``pass``, ``private``).
_WEAK_WORDS = {
    "key": "key",
    "pass": "password",
    "private": "key",
    "priv": "key",
    "cred": "credential",
    # calls and prose that take a credential: ``server.login(user, "...")``, ``createHmac``
    "login": "password",
    "logon": "password",
    "signin": "password",
    "connect": "password",
    "connection": "password",
    "identify": "password",  # IRC's NickServ, and prose
    "authenticate": "password",
    "hmac": "key",
    # networks named before their pass phrase: ``wifi: Guest / ...``
    "wifi": "password",
    "wlan": "password",
    "ssid": "password",
    "wpa": "password",
    "community": "password",  # SNMP's password
    # where blockchain tools take a private key: ``accounts: [<64 hex digits>]``
    "accounts": "key",
    "wallet": "key",
    "signer": "key",
}
# ``SK`` (secret key, beside ``AK``, the access key, in Chinese clouds' SDKs) as a whole part
# A word that is the word for password or a compound ending in it, maybe with a short
# ending (``Datenbankkennworts``)
_COMPOUND_END = re.compile("(?:" + "|".join(COMPOUND_STEMS) + r")[^\W\d_]{0,3}$")
_SECRET_KEY_PART = re.compile(r"(?:^|[_.-])(?:SK|sk)$")
_NOT_COMPOUND = frozenset(
    {"bypass", "compass", "surpass", "trespass", "overpass", "underpass", "multipass", "oauth"}
    | {"noauth", "unauth", "dpw", "kpw"}
)
# Words saying that a credential word names something else: a hash, a public key, a length.
NOT_SECRET = frozenset(
    {"hash", "hashed", "hashes", "digest", "checksum", "fingerprint", "fingerprints", "sha"}
    | {"pbkdf", "bcrypt", "scrypt", "argon", "crypt", "enc"}  # hashed or encrypted: password_pbkdf2
    | {"md5", "public", "pub", "id", "ids", "uid", "length", "len", "min", "max", "minimum"}
    | {"maximum", "policy", "reset", "forgot", "forgotten", "expires", "expiry", "expiration"}
    | {"expire", "ttl", "timeout", "validator", "validators", "validation", "file", "path"}
    | {"env", "field", "name", "type", "regex", "pattern", "strength", "history", "age", "url"}
    | {"uri", "endpoint", "prompt", "header", "format", "ref", "mode", "count", "size", "nonce"}
    | {"alias", "label", "hint", "input", "stdin", "dir", "required", "salt", "algorithm"}
    | {"issuer", "scope", "usage", "limit", "lifetime", "helper", "column", "schema"}
    | {"placeholder", "example", "sample", "dummy", "generator", "rotation", "policies"}
    # tokens that page or identify requests, not authenticate: NextToken, ChangeToken
    | {"next", "page", "pagination", "continuation", "cursor", "change", "idempotency", "arn"}
    # values stored sealed: safe to publish
    | {"encrypted", "sealed", "cipher", "ciphertext"}
)
# Keys of data structures and keys that verify, not credentials: ``cache key``, ``sort_key``,
# ``sourceMapKey``, ``verifyKey``. They qualify the weak word ``key`` only (a ``cache
# password`` is still a password). Primary, storage, object and routing keys are left out:
# cloud services issue secrets under those names.
_DATA_KEYS = frozenset(
    {"cache", "sort", "partition", "foreign", "composite", "range", "row", "map", "lookup"}
    | {"index", "shard", "group", "dedup", "deduplication", "unique", "locale", "translation"}
    | {"message", "dict", "site", "search", "verify", "verifying", "socket"}
)
# Names of cookies that hold a session or a login (``sessionid``, ``PHPSESSID``,
# ``remember_token``), not the anti-forgery ones (``csrftoken``)
SESSION_NAME = r"(?![\w.-]*[cx]srf)[\w.-]*(?:sess|sid|auth|token|remember|login|jwt)[\w.-]*"
# Lines without any credential word (or a part of one) are skipped cheaply: the words are
# searched in the lower-cased text without a case flag (several times faster), the phrases
# of other scripts and of several words with it.
_HINTS = {*_STRONG_WORDS, *_WEAK_WORDS, *(w for w, _ in _STRONG_SUFFIXES), *PASSWORD_STEMS} | {
    *KEY_STEMS,
    *TOKEN_STEMS,
    *COMPOUND_STEMS,
    *("pass", "_sk", ".sk", "-sk"),
}
# A word holding another one (``password`` holds ``pass``) adds nothing to a substring search
_HINT_WORDS = re.compile(
    "|".join(sorted(re.escape(w) for w in _HINTS if not any(o != w and o in w for o in _HINTS)))
)
_HINT_PHRASES = re.compile("|".join(p.pattern for p, _ in PHRASES), re.IGNORECASE)


def has_hint(text: str) -> bool:
    """Whether ``text`` holds a credential word, a part of one or a phrase for one."""
    return bool(_HINT_WORDS.search(text.lower()) or _HINT_PHRASES.search(text))


_SPLIT = re.compile(r"[A-Z]+(?![a-zà-ÿ])|[A-Z]?[a-zà-ÿ]+|\d+")
_OAUTH = re.compile("oauth", re.IGNORECASE)  # one word, not O + Auth
_LETTERS = re.compile(r"[^\W\d_]+")
KEY_BEFORE = re.compile(r"([^\W\d][\w.-]*)['\"]?\s*[:=]\s*['\"]?$")
_QUALIFIER = re.compile(r"([^\W\d][\w]*)[ \t-]+$")


def word_strength(identifier: str) -> tuple[int, str]:
    """(2, kind) for a strong credential word, (1, kind) for a weak one, (0, "") for none.

    The identifier is split into words (``DD_APP_KEY``, ``kMapsKey``, ``wpa_passphrase``);
    a word that says the identifier names something else (``password_hash``) gives 0.
    """
    words = identifier_words(identifier)
    if any(w in NOT_SECRET for w in words):
        return 0, ""
    if _SECRET_KEY_PART.search(identifier):  # HUAWEICLOUD_SDK_SK, not SkZJRg in base64
        return WEAK, "key"
    best, kind, weak = 0, "", 0
    for word in words:
        strength, named = _strength(word)
        weak += strength == WEAK
        if strength > best:
            best, kind = strength, named
    if best == WEAK and weak >= 2:  # PrivateKey, private_key
        return STRONG, "private_key" if "private" in words else kind
    if kind == "key" and _DATA_KEYS.intersection(words):  # cache_key, sourceMapKey
        return 0, ""
    return best, kind


def is_data_key(identifier: str) -> bool:
    """Whether ``identifier`` names a key of a data structure (``cache-key``, ``sortKey``)."""
    words = identifier_words(identifier)
    return "key" in words and bool(_DATA_KEYS.intersection(words))


def identifier_words(identifier: str) -> list[str]:
    """``DD_APP_KEY`` -> ``dd app key``; ``kMapsKey`` -> ``k maps key``; ``OAuth`` one word.

    Outside the Latin-1 letters (``Hasło``, ``Пароль``) words are runs of letters, lower-cased.
    """
    if any(ord(c) > 0xFF for c in identifier):
        return [w.lower() for w in _LETTERS.findall(identifier)]
    return [w.lower() for w in _SPLIT.findall(_OAUTH.sub("Oauth", identifier)) if not w.isdigit()]


def _strength(word: str) -> tuple[int, str]:
    if word in _STRONG_WORDS:
        return STRONG, _STRONG_WORDS[word]
    if word in _WEAK_WORDS:
        return WEAK, _WEAK_WORDS[word]
    if word in _NOT_COMPOUND or len(word) > 24:
        return 0, ""
    if word.startswith(PASSWORD_STEMS):
        return STRONG, "password"
    if word.startswith(TOKEN_STEMS):
        return STRONG, "token"
    if word.startswith(KEY_STEMS):
        return WEAK, "key"
    for suffix, named in _STRONG_SUFFIXES:
        if word.endswith(suffix) and len(word) > len(suffix):
            return STRONG, named
    if (word.endswith("pass") and len(word) > 4) or (word.endswith("login") and len(word) > 5):
        return WEAK, "password"  # requirepass, sp_addlogin
    if _COMPOUND_END.search(word):
        return STRONG, "password"  # Initialkennwort, adminwachtwoord, pääkäyttäjänsalasana
    if word.endswith("key") and word[:-3] in {"api", "secret", "private", "access", "signing"}:
        return STRONG, "api_key"
    return 0, ""


def qualified_before(line: str, start: int) -> bool:
    """``public key``, ``hashed password``, ``cache key``: the word before qualifies it as not
    secret."""
    before = _QUALIFIER.search(line[max(0, start - 24) : start])
    if before is None:
        return False
    word = before.group(1).lower()
    return word in NOT_SECRET or (word in _DATA_KEYS and line[start : start + 3].lower() == "key")


def keyed_as_not_secret(line: str, start: int) -> bool:
    """Whether the value at ``start`` belongs to a key such as ``"KeyId":`` or ``sha256=``."""
    key = KEY_BEFORE.search(line[max(0, start - 48) : start])
    if key is None:
        return False
    return bool(NOT_SECRET.intersection(identifier_words(key.group(1))))
