"""Credentials assigned to a named key, in whatever syntax the file uses.

One rule across syntaxes: a key whose *last word* names a credential (``DB_PASSWORD``,
``accessToken``, ``client_secret``, ``api_key``, ``_authToken``) bound to a value that
looks like a secret, not like a placeholder, a reference or a plain word. The syntaxes:

* ``key = value``, ``key: value``, ``key := value``, ``key => value``, quoted or not (shell
  ``export``, ``.env``, ``.npmrc``, INI, TOML, YAML, JSON, Java properties, Terraform,
  connection strings, XML attributes such as ``password="..."``);
* shell ``set -x KEY value`` (fish), ``setenv KEY value`` (csh) and ``--password value`` flags;
* XML ``<add key="DbPassword" value="..."/>`` pairs and ``<password>...</password>`` elements;
* ``curl -u user:password`` and the MySQL clients' attached ``-p'password'``;
* ``.pgpass`` lines (``host:port:database:user:password``);
* prose that says what a credential is (``the admin password is ...``).

A UUID is an identifier (``"ChangeToken": "<uuid>"``) unless the key names an authentication
credential outright (``_authToken``, ``API_KEY``, ``password``): npm and Heroku keys are UUIDs.

Words that name credentials follow the keyword lists of detect-secrets and gitleaks. A key
word that qualifies what follows (``password_min_length``, ``token_type``,
``api_key_header``) is not a credential: only the last word counts.
"""

from __future__ import annotations

import math
import re
from collections import Counter
from collections.abc import Iterator

__all__ = [
    "assignment_spans",
    "is_placeholder",
    "is_word",
    "looks_secret",
    "names_auth_credential",
    "names_credential",
]

# Last words that name a credential by themselves.
_NOUNS = frozenset(
    {"password", "passwd", "pwd", "pw", "passphrase", "secret", "token", "credential"}
    | {"credentials", "creds", "apikey", "auth", "contrasena"}
)
# Nouns that also end a compound word (``PGPASSWORD``, ``csrftoken``).
_SUFFIXES = ("password", "passwd", "passphrase", "secret", "token", "apikey")
# ``key`` and ``pass`` name a credential only after one of these words (``api_key``, ``db_pass``).
_KEY_QUALIFIERS = frozenset(
    {"api", "access", "secret", "private", "priv", "account", "auth", "service", "client"}
    | {"db", "database", "signing", "encryption", "master"}
)
# Words that make any credential key an authentication one (a UUID under it is a secret).
_AUTH_WORDS = frozenset({"auth", "api", "apikey", "access", "secret", "password", "private"})
_WORDS = re.compile(r"[A-Z]+(?![a-z])|[A-Z]?[a-z]+|\d+")

# Values that stand for a secret without being one: placeholders, references, code.
_PLACEHOLDER = re.compile(
    r"example|your[-_ ]|<[^>]*>|\$\{|\{\{|^\$|x{4,}|\*{3,}|placeholder|redacted|changeme|"
    r"^(?:true|false|null|none|nil|undefined)$|^(.)\1*$|^%\w+%$|^@\w+@$|\.\.\.|^/[\w./-]+$|"
    r"^[(\[{]|"
    r"^(?!.*\d)[A-Za-z_]\w*(?:\.[A-Za-z_]\w*)+(?:\(.*\))?$|^[A-Za-z_][\w.]*[\[(]",
    re.IGNORECASE,
)

_UUID = re.compile(r"^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$", re.I)
_CAMEL_WORDS = re.compile(r"^[a-z]*(?:[A-Z][a-z]+)+$")  # ExclusiveStartShardId
_ENV_NAME = re.compile(r"^[A-Z]+(?:_[A-Z]+)+$")  # "secret": "AWS_SECRET_ACCESS_KEY"

_VALUE = r"(?P<value>\"[^\"]*\"|'[^']*'|`[^`]*`|[^\s'\"`;,<>()]+)"
_KEY = r"(?P<key>[A-Za-z_$@][\w.\-]*)"
_SYNTAXES: tuple[re.Pattern[str], ...] = (
    # key = value, key: value, "key": "value", key => value
    re.compile(rf"(?P<q>['\"]?){_KEY}(?P=q)[ \t]*(?:=>|:=|=|:(?!:))[ \t]*{_VALUE}"),
    # fish ``set -x KEY value``, csh ``setenv KEY value``, ``--password value``
    re.compile(rf"(?:\bset(?:[ \t]+-[A-Za-z]+)+|\bsetenv)[ \t]+{_KEY}[ \t]+{_VALUE}"),
    re.compile(rf"(?:^|\s)--{_KEY}[ \t]+{_VALUE}"),
    # <add key="DbPassword" value="..."/>, <property name="db.password" value="..."/>
    re.compile(r"\b(?:key|name)\s*=\s*\"(?P<key>[^\"]+)\"\s+value\s*=\s*" + _VALUE),
    # <password>...</password>, <string name="api_key">...</string>
    re.compile(
        r"<(?P<tag>[\w.:-]+)(?:\s+name\s*=\s*\"(?P<key>[^\"]+)\")?[^<>]*>"
        r"(?P<value>[^<>\s]+)</(?P=tag)>"
    ),
)
_CURL_USER = re.compile(
    r"\bcurl\b.*?\s(?:-u|--user)[ \t]*['\"]?[^\s:'\"]+:(?P<value>[^\s'\"@`]+)(?!\S*@)"
)
# Values given on a command line or in a fixed-field file, with no key before them.
_UNKEYED: tuple[re.Pattern[str], ...] = (
    _CURL_USER,
    # mysql -u root -p'secret' (the password is attached to -p; a separate word is the database)
    re.compile(
        r"\b(?:mysql|mysqldump|mysqladmin|mariadb)\b.*?\s-p(?P<value>'[^']*'|\"[^\"]*\"|\S+)"
    ),
    # .pgpass: hostname:port:database:username:password, exactly five fields (a ":" inside
    # one is escaped), so colon-separated fingerprints are not lines of it
    re.compile(r"^\s*[^\s:#]+:(?:\d+|\*):[^\s:]+:[^\s:]+:(?P<value>(?:[^\s:\\]|\\.)+)\s*$"),
)
# "the staging admin password is <value>": a credential noun, a few words, "is", the value.
_PROSE = re.compile(
    r"\b(?:password|passwd|passphrase|pwd|secret|token|api[ _-]?key|access[ _-]?key)\b"
    r"[^.\n:=]{0,40}?\s(?:is|was)\s+(?P<value>\S+)",
    re.IGNORECASE,
)
_TRAILING = ".,;:!?)\"'`"


def names_credential(key: str) -> bool:
    """Whether ``key``'s last word names a credential (``DB_PASSWORD``, ``apiKey``)."""
    words = [w.lower() for w in _WORDS.findall(key) if not w.isdigit()]
    if not words:
        return False
    last, before = words[-1], words[-2] if len(words) > 1 else ""
    if last in _NOUNS or last.endswith(_SUFFIXES):
        return True
    if last == "key":
        return before in _KEY_QUALIFIERS
    return last == "pass" and bool(before)  # DB_PASS, RABBITMQ_DEFAULT_PASS; not "pass"


def names_auth_credential(key: str) -> bool:
    """Whether ``key`` names a credential and says it authenticates (``_authToken``)."""
    words = {w.lower() for w in _WORDS.findall(key)}
    return names_credential(key) and bool(words & _AUTH_WORDS or "apikey" in key.lower())


def is_placeholder(value: str) -> bool:
    """Whether ``value`` stands for a secret (``<your-key>``, ``${X}``, ``changeme``...)."""
    return bool(_PLACEHOLDER.search(value) or _ENV_NAME.match(value) or _UUID.match(value))


def assignment_spans(line: str) -> Iterator[tuple[int, int]]:
    """Spans of ``line`` that assign a secret-looking value to a credential key."""
    for syntax in _SYNTAXES:
        for match in syntax.finditer(line):
            key = match.group("key") or match.groupdict().get("tag") or ""
            end = match.end("value")
            called = line[end : end + 1] in ("(", "[")  # token = make_token(...)
            value = match.group("value")
            if names_credential(key) and not called and _secret_for(key, value):
                yield match.start("value"), end
            elif value[:1] in "\"'`" and len(value) > 2:  # connectionString="...;Password=..."
                inner = match.start("value") + 1
                yield from ((inner + s, inner + e) for s, e in assignment_spans(value[1:-1]))
    for pattern in _UNKEYED:
        for match in pattern.finditer(line):
            if looks_secret(match.group("value")):
                yield match.start("value"), match.end("value")
    for match in _PROSE.finditer(line):
        value = match.group("value").rstrip(_TRAILING)
        if looks_secret(value):
            yield match.start("value"), match.start("value") + len(value)


def _secret_for(key: str, value: str) -> bool:
    if _UUID.match(value.strip("'\"`")):
        return names_auth_credential(key)
    return looks_secret(value)


def is_word(value: str) -> bool:
    """Whether ``value`` (letters, maybe ``-_.``) is a word or a name, not a random string."""
    if not all(c.isalpha() or c in "-_." for c in value):
        return False
    return not value.isalpha() or bool(_CAMEL_WORDS.match(value)) or _entropy(value) < 3.5


def looks_secret(raw: str) -> bool:
    """Long enough, mixed enough and not a placeholder, reference or code expression.

    A value of letters only (``SecretStr``, ``password``) is a word or a name unless it is
    long and random-looking.
    """
    value = raw.strip("'\"`")
    if len(value) < 6 or any(c.isspace() for c in value) or is_placeholder(value):
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
