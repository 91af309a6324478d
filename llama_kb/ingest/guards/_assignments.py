"""Credentials assigned to a named key, in whatever syntax the file uses.

One rule across syntaxes: a key whose *last word* names a credential (``DB_PASSWORD``,
``accessToken``, ``client_secret``, ``api_key``, ``_authToken``, ``requirepass``) bound to a
value that looks like a secret, not like a placeholder, a reference or a plain word. The
syntaxes:

* ``key = value``, ``key: value``, ``key := value``, ``key => value``, quoted or not (shell
  ``export``, ``.env``, ``.npmrc``, INI, TOML, YAML, JSON, Java properties, Terraform,
  connection strings and URL query strings, XML attributes such as ``password="..."``), also
  nested (``Environment=SMTP_PASS=...``, ``--from-literal=password=...``);
* options: ``--password value``, ``-Password value``, fish ``set -x KEY value``, csh
  ``setenv KEY value``;
* directive lines ``key value`` (Redis ``requirepass``, Dockerfile ``ENV KEY value``, the
  lines of a ``.netrc`` entry);
* code: ``env["API_TOKEN"] = "..."`` and calls that pair a key with a value
  (``define('DB_PASSWORD', '...')``, ``os.environ.setdefault("API_KEY", "...")``);
* XML ``<add key="DbPassword" value="..."/>`` pairs and ``<password>...</password>`` elements.

Values with no key before them (command lines, SQL, prose) are found by :mod:`._unkeyed`
and reported here too.

A UUID is an identifier (``"ChangeToken": "<uuid>"``) unless the key names an authentication
credential outright (``_authToken``, ``API_KEY``, ``password``): npm and Heroku keys are UUIDs.

Words that name credentials follow the keyword lists of detect-secrets and gitleaks. A key
word that qualifies what follows (``password_min_length``, ``token_type``,
``api_key_header``) is not a credential: only the last word counts, after dropping words
that say how the secret is stored (``secret_key_base``, ``client-key-data``).
"""

from __future__ import annotations

import re
from collections.abc import Iterator

from llama_kb.ingest.guards._unkeyed import unkeyed_spans
from llama_kb.ingest.guards._values import UUID, is_placeholder, is_word, looks_secret

__all__ = [
    "assignment_spans",
    "is_placeholder",
    "is_word",
    "looks_secret",
    "names_auth_credential",
    "names_credential",
]

# Last words that name a credential by themselves (``authtok``: SSSD; ``pat``: personal
# access token).
_NOUNS = frozenset(
    {"password", "passwd", "pwd", "pw", "passphrase", "secret", "token", "credential"}
    | {"credentials", "creds", "apikey", "auth", "contrasena", "authtok", "pat"}
)
# Nouns that also end a compound word (``PGPASSWORD``, ``csrftoken``, ``masterauth``).
_SUFFIXES = ("password", "passwd", "passphrase", "secret", "token", "apikey", "auth")
# ``key`` and ``pass`` name a credential only after one of these words (``api_key``, ``db_pass``).
_KEY_QUALIFIERS = frozenset(
    {"api", "access", "secret", "private", "priv", "account", "auth", "service", "client"}
    | {"db", "database", "signing", "encryption", "master"}
)
# Compounds ending in "pass" that are not passwords; any other is (``requirepass``, ``storepass``).
_NOT_PASS = frozenset(
    {"bypass", "compass", "surpass", "trespass", "overpass", "underpass", "multipass"}
    | {"firstpass", "onepass", "singlepass", "twopass", "secondpass", "oauth", "noauth"}
)
# Trailing words that say how a secret is stored (``secret_key_base``, ``client-key-data``).
_STORAGE = frozenset({"base", "data", "value", "b64", "base64", "hex", "string", "str"})
# Words that make any credential key an authentication one (a UUID under it is a secret).
_AUTH_WORDS = frozenset({"auth", "api", "apikey", "access", "secret", "password", "private"})
_WORDS = re.compile(r"[A-Z]+(?![a-z])|[A-Z]?[a-z]+|\d+")
_ENV_VAR = re.compile(r"^[A-Z][A-Z0-9]*(?:_[A-Z0-9]+)+$")

_VALUE = r"(?P<value>\"[^\"]*\"|'[^']*'|`[^`]*`|[^\s'\"`;,<>()]+)"
_QUOTED = r"(?P<value>\"[^\"]*\"|'[^']*')"
_KEY = r"(?P<key>[A-Za-z_$@][\w.\-]*)"
_SYNTAXES: tuple[re.Pattern[str], ...] = (
    # key = value, key: value, "key": "value", key => value (a key starts after no other key
    # character: one try per word, not per letter)
    re.compile(
        rf"(?<![\w.$@])(?<!\w-)(?P<q>['\"]?){_KEY}(?P=q)[ \t]*(?:=>|:=|=|:(?!:|//))[ \t]*{_VALUE}"
    ),
    # fish ``set -x KEY value``, csh ``setenv KEY value``, ``--password value``, ``-Password v``
    re.compile(rf"(?:\bset(?:[ \t]+-[A-Za-z]+)+|\bsetenv)[ \t]+{_KEY}[ \t]+{_VALUE}"),
    re.compile(rf"(?<!\S)--?(?=[A-Za-z]{{2}}){_KEY}[ \t]+(?!-){_VALUE}"),
    # directive lines: ``requirepass value``, ``ENV DB_PASS value``, ``  password value``
    re.compile(rf"^[ \t]*(?:ENV[ \t]+)?{_KEY}[ \t]+{_VALUE}[ \t]*(?:#.*)?$"),
    # env["API_TOKEN"] = "...", define('DB_PASSWORD', '...'), setdefault("API_KEY", "...")
    re.compile(rf"\[\s*(?P<q>['\"]){_KEY}(?P=q)\s*\]\s*=\s*{_QUOTED}"),
    re.compile(rf"\(\s*(?P<q>['\"]){_KEY}(?P=q)\s*,\s*{_QUOTED}\s*[,)]"),
    # <add key="DbPassword" value="..."/>, <property name="db.password" value="..."/>
    re.compile(r"\b(?:key|name)\s*=\s*\"(?P<key>[^\"]+)\"\s+value\s*=\s*" + _VALUE),
    # <password>...</password>, <string name="api_key">...</string>
    re.compile(
        r"<(?P<tag>[\w.:-]+)(?:\s+name\s*=\s*\"(?P<key>[^\"]+)\")?[^<>]*>"
        r"(?P<value>[^<>\s]+)</(?P=tag)>"
    ),
)


def names_credential(key: str) -> bool:
    """Whether ``key``'s last word names a credential (``DB_PASSWORD``, ``apiKey``)."""
    words = [w.lower() for w in _WORDS.findall(key) if not w.isdigit()]
    while len(words) > 1 and words[-1] in _STORAGE:
        words.pop()
    if not words:
        return False
    last, before = words[-1], words[-2] if len(words) > 1 else ""
    if last in _NOUNS or (last.endswith(_SUFFIXES) and last not in _NOT_PASS):
        return True
    if last == "key":
        return before in _KEY_QUALIFIERS
    if last.endswith("key"):  # authkey, secretkey, privatekey
        return last[:-3] in _KEY_QUALIFIERS
    if last == "pass":  # DB_PASS, RABBITMQ_DEFAULT_PASS; not "pass"
        return bool(before)
    return last.endswith("pass") and last not in _NOT_PASS  # requirepass, storepass


def names_auth_credential(key: str) -> bool:
    """Whether ``key`` names a credential and says it authenticates (``_authToken``); an
    environment variable naming one (``SNYK_TOKEN``) does by convention."""
    words = {w.lower() for w in _WORDS.findall(key)}
    authenticates = words & _AUTH_WORDS or "apikey" in key.lower() or _ENV_VAR.match(key)
    return names_credential(key) and bool(authenticates)


def assignment_spans(line: str) -> Iterator[tuple[int, int]]:
    """Spans of ``line`` that assign a secret-looking value to a credential key."""
    yield from dict.fromkeys(_keyed_spans(line))  # each span once, in order
    yield from unkeyed_spans(line)


def _keyed_spans(line: str) -> Iterator[tuple[int, int]]:
    for syntax in _SYNTAXES:
        for match in _overlapping(syntax, line):
            tag = match.groupdict().get("tag")
            key = match.group("key") or tag or ""
            end = match.end("value")
            called = line[end : end + 1] in ("(", "[")  # token = make_token(...)
            value = match.group("value")
            # an element named ``<Pass>`` holds a password (FileZilla, many XML configs)
            named = names_credential(key) or (key == tag and key.lower() == "pass")
            if named and not called and _secret_for(key, value):
                yield match.start("value"), end
            elif value[:1] in "\"'`" and len(value) > 2:  # connectionString="...;Password=..."
                inner = match.start("value") + 1
                yield from ((inner + s, inner + e) for s, e in assignment_spans(value[1:-1]))


def _overlapping(syntax: re.Pattern[str], line: str) -> Iterator[re.Match[str]]:
    """Matches of ``syntax``, each search resuming at the previous value (``a=b=secret``)."""
    position = 0
    while match := syntax.search(line, position):
        yield match
        position = max(match.start("value"), match.start() + 1)


def _secret_for(key: str, value: str) -> bool:
    if UUID.match(value.strip("'\"`")):
        return names_auth_credential(key)
    return looks_secret(value)
